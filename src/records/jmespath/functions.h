// The built-in functions of the JMESPath specification, with its argument type checking.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "records/jmespath/ast.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {

// Types a parameter accepts, as a bit set.
enum ParameterType : uint16_t {
  kNumberParam = 1 << 0,
  kStringParam = 1 << 1,
  kBooleanParam = 1 << 2,
  kNullParam = 1 << 3,
  kArrayParam = 1 << 4,
  kObjectParam = 1 << 5,
  kExprefParam = 1 << 6,
  kArrayOfNumbersParam = 1 << 7,
  kArrayOfStringsParam = 1 << 8,
  kAnyParam = kNumberParam | kStringParam | kBooleanParam | kNullParam | kArrayParam | kObjectParam,
};

// One evaluated argument: a value, or for `&expression` the expression to apply.
struct Argument {
  Value value;
  const Node* expref = nullptr;
};

using Arguments = std::span<Argument>;

struct Function {
  std::string_view name;
  std::vector<uint16_t> parameters;  // ParameterType bit sets
  bool variadic = false;             // the last parameter repeats (at least once)
  Status (*call)(const Node& call, Arguments arguments, Value* out) = nullptr;
};

// The built-in called `name`, or nullptr.
const Function* FindFunction(std::string_view name);

// invalid-arity when `count` arguments do not fit `function` (checked when compiling).
Status CheckArity(const Function& function, size_t count, size_t position);

// invalid-type when an argument does not fit its parameter (checked when evaluating).
Status CheckTypes(const Function& function, const Node& call, std::span<const Argument> arguments);

}  // namespace weir::records::jmespath
