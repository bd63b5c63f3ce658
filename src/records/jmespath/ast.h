// The syntax tree of a compiled JMESPath expression. Immutable once parsed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "records/jmespath/value.h"

namespace weir::records::jmespath {

struct Function;

enum class NodeKind : uint8_t {
  kCurrent,           // @ (and the implicit left side of `[*]`, `*`, `[?...]`, `[]`)
  kField,             // name
  kSubexpression,     // children[0] then children[1] on its result (also `a[0]`)
  kIndex,             // [index]
  kSlice,             // [start:stop:step]
  kProjection,        // children[1] over the elements of the array children[0]
  kValueProjection,   // children[1] over the values of the object children[0]
  kFilterProjection,  // children[1] over the elements of children[0] where children[2] holds
  kFlatten,           // children[0] with nested arrays merged one level
  kComparator,        // children[0] <op> children[1]
  kOr,
  kAnd,
  kNot,
  kLiteral,
  kMultiSelectList,  // [children...]
  kMultiSelectHash,  // {keys[i]: children[i]...}
  kPipe,
  kFunction,  // function(children...)
  kExpref,    // &children[0]
};

enum class Comparator : uint8_t { kEq, kNe, kLt, kLte, kGt, kGte };

struct Node {
  NodeKind kind = NodeKind::kCurrent;
  size_t position = 0;  // byte offset in the expression, for errors
  std::string name;     // kField, kFunction
  Value literal;        // kLiteral
  int64_t index = 0;    // kIndex
  std::optional<int64_t> start, stop;
  int64_t step = 1;  // kSlice
  Comparator comparator = Comparator::kEq;
  const Function* function = nullptr;  // kFunction
  std::vector<std::string> keys;       // kMultiSelectHash
  std::vector<std::unique_ptr<Node>> children;
};

}  // namespace weir::records::jmespath
