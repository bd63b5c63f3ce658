#include "records/jmespath/functions.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include "records/jmespath/interpreter.h"
#include "records/jmespath/lexer.h"

namespace weir::records::jmespath {
namespace {

// A double that is a whole number in int64's range becomes an integer (ceil, floor, sums).
Value Number(double value) {
  if (std::trunc(value) == value && value >= -9.2233720368547758e18 &&
      value < 9.2233720368547758e18) {
    return Value::Integer(static_cast<int64_t>(value));
  }
  return Value::Double(value);
}

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

size_t CodePoints(std::string_view text) {
  size_t count = 0;
  for (const char c : text) count += IsContinuationByte(c) ? 0 : 1;
  return count;
}

Status Abs(const Node&, Arguments args, Value* out) {
  const Value& v = args[0].value;
  if (v.is_integer() && v.integer() != std::numeric_limits<int64_t>::min()) {
    *out = Value::Integer(v.integer() < 0 ? -v.integer() : v.integer());
  } else {
    *out = Value::Double(std::fabs(v.number()));
  }
  return Status::OK();
}

// The sum of an array of numbers: exact in int64 while it fits, a double otherwise.
Value Sum(const Value& array) {
  int64_t exact = 0;
  bool integral = true;
  double real = 0;
  array.ForEachElement([&](const Value& element) {
    real += element.number();
    if (integral && element.is_integer()) {
      integral = !__builtin_add_overflow(exact, element.integer(), &exact);
    } else {
      integral = false;
    }
  });
  return integral ? Value::Integer(exact) : Value::Double(real);
}

Status SumFunction(const Node&, Arguments args, Value* out) {
  *out = Sum(args[0].value);
  return Status::OK();
}

Status Avg(const Node&, Arguments args, Value* out) {
  const Value& array = args[0].value;
  if (array.size() == 0) {
    *out = Value();
    return Status::OK();
  }
  double total = 0;
  array.ForEachElement([&total](const Value& element) { total += element.number(); });
  *out = Value::Double(total / static_cast<double>(array.size()));
  return Status::OK();
}

Status Ceil(const Node&, Arguments args, Value* out) {
  const Value& v = args[0].value;
  *out = v.is_integer() ? v : Number(std::ceil(v.number()));
  return Status::OK();
}

Status Floor(const Node&, Arguments args, Value* out) {
  const Value& v = args[0].value;
  *out = v.is_integer() ? v : Number(std::floor(v.number()));
  return Status::OK();
}

Status Contains(const Node&, Arguments args, Value* out) {
  const Value& subject = args[0].value;
  const Value& search = args[1].value;
  bool found = false;
  if (subject.is_string()) {
    found = search.is_string() && subject.string().find(search.string()) != std::string::npos;
  } else {
    for (const Value& element : subject.Elements()) {
      if (Equal(element, search)) {
        found = true;
        break;
      }
    }
  }
  *out = Value::Boolean(found);
  return Status::OK();
}

Status EndsWith(const Node&, Arguments args, Value* out) {
  *out = Value::Boolean(args[0].value.string().ends_with(args[1].value.string()));
  return Status::OK();
}

Status StartsWith(const Node&, Arguments args, Value* out) {
  *out = Value::Boolean(args[0].value.string().starts_with(args[1].value.string()));
  return Status::OK();
}

Status Join(const Node&, Arguments args, Value* out) {
  const std::string_view glue = args[0].value.string();
  std::string joined;
  bool first = true;
  args[1].value.ForEachElement([&](const Value& element) {
    if (!first) joined.append(glue);
    first = false;
    joined.append(element.string());
  });
  *out = Value::String(std::move(joined));
  return Status::OK();
}

Status Keys(const Node&, Arguments args, Value* out) {
  Array keys;
  args[0].value.ForEachMember(
      [&](std::string_view key, const Value&) { keys.push_back(Value::String(std::string(key))); });
  *out = Value::FromArray(std::move(keys));
  return Status::OK();
}

Status Values(const Node&, Arguments args, Value* out) {
  Array values;
  args[0].value.ForEachMember(
      [&](std::string_view, const Value& value) { values.push_back(value); });
  *out = Value::FromArray(std::move(values));
  return Status::OK();
}

Status Length(const Node&, Arguments args, Value* out) {
  const Value& v = args[0].value;
  const size_t length = v.is_string() ? CodePoints(v.string()) : v.size();
  *out = Value::Integer(static_cast<int64_t>(length));
  return Status::OK();
}

Status Map(const Node&, Arguments args, Value* out) {
  Array mapped;
  for (const Value& element : args[1].value.Elements()) {
    Value result;
    WEIR_RETURN_NOT_OK(Evaluate(*args[0].expref, element, &result));
    mapped.push_back(std::move(result));
  }
  *out = Value::FromArray(std::move(mapped));
  return Status::OK();
}

// max and min: the elements are all numbers or all strings (checked by the signature).
template <bool kMax>
Status Extreme(const Node&, Arguments args, Value* out) {
  const std::vector<Value> elements = args[0].value.Elements();
  *out = Value();
  for (const Value& element : elements) {
    if (out->is_null() || (kMax ? Compare(element, *out) > 0 : Compare(element, *out) < 0)) {
      *out = element;
    }
  }
  return Status::OK();
}

// The keys `&expression` gives each element: all numbers or all strings.
Status SortKeys(const Node& call, const Argument& expref, const std::vector<Value>& elements,
                std::vector<Value>* keys) {
  keys->reserve(elements.size());
  for (const Value& element : elements) {
    Value key;
    WEIR_RETURN_NOT_OK(Evaluate(*expref.expref, element, &key));
    const bool fits =
        keys->empty() ? (key.is_number() || key.is_string()) : key.type() == keys->front().type();
    if (!fits) {
      return EvaluationError("invalid-type", call,
                             std::string(call.name) +
                                 "(): the expression must give every element a number or "
                                 "every element a string, got " +
                                 std::string(TypeName(key.type())));
    }
    keys->push_back(std::move(key));
  }
  return Status::OK();
}

template <bool kMax>
Status ExtremeBy(const Node& call, Arguments args, Value* out) {
  const std::vector<Value> elements = args[0].value.Elements();
  std::vector<Value> keys;
  WEIR_RETURN_NOT_OK(SortKeys(call, args[1], elements, &keys));
  *out = Value();
  size_t best = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    const int order = Compare(keys[i], keys[best]);
    if (kMax ? order > 0 : order < 0) best = i;
  }
  if (!elements.empty()) *out = elements[best];
  return Status::OK();
}

Status Merge(const Node&, Arguments args, Value* out) {
  Object merged;
  for (const Argument& arg : args) {
    arg.value.ForEachMember([&](std::string_view key, const Value& value) {
      for (Member& member : merged) {
        if (member.first == key) {
          member.second = value;
          return;
        }
      }
      merged.emplace_back(std::string(key), value);
    });
  }
  *out = Value::FromObject(std::move(merged));
  return Status::OK();
}

Status NotNull(const Node&, Arguments args, Value* out) {
  *out = Value();
  for (const Argument& arg : args) {
    if (!arg.value.is_null()) {
      *out = arg.value;
      break;
    }
  }
  return Status::OK();
}

Status Reverse(const Node&, Arguments args, Value* out) {
  const Value& v = args[0].value;
  if (v.is_string()) {
    const std::string_view text = v.string();
    std::string reversed;
    reversed.reserve(text.size());
    size_t end = text.size();
    while (end > 0) {  // code point by code point, from the last
      size_t start = end - 1;
      while (start > 0 && IsContinuationByte(text[start])) --start;
      reversed.append(text.substr(start, end - start));
      end = start;
    }
    *out = Value::String(std::move(reversed));
    return Status::OK();
  }
  std::vector<Value> elements = v.Elements();
  std::reverse(elements.begin(), elements.end());
  *out = Value::FromArray(std::move(elements));
  return Status::OK();
}

Status Sort(const Node&, Arguments args, Value* out) {
  std::vector<Value> elements = args[0].value.Elements();
  std::stable_sort(elements.begin(), elements.end(),
                   [](const Value& a, const Value& b) { return Compare(a, b) < 0; });
  *out = Value::FromArray(std::move(elements));
  return Status::OK();
}

Status SortBy(const Node& call, Arguments args, Value* out) {
  const std::vector<Value> elements = args[0].value.Elements();
  std::vector<Value> keys;
  WEIR_RETURN_NOT_OK(SortKeys(call, args[1], elements, &keys));
  std::vector<size_t> order(elements.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return Compare(keys[a], keys[b]) < 0; });
  Array sorted;
  sorted.reserve(order.size());
  for (const size_t i : order) sorted.push_back(elements[i]);
  *out = Value::FromArray(std::move(sorted));
  return Status::OK();
}

Status ToArray(const Node&, Arguments args, Value* out) {
  *out = args[0].value.is_array() ? args[0].value : Value::FromArray({args[0].value});
  return Status::OK();
}

Status ToString(const Node&, Arguments args, Value* out) {
  *out = args[0].value.is_string() ? args[0].value : Value::String(ToJson(args[0].value));
  return Status::OK();
}

// A string that is a JSON-style number in full; null otherwise.
Value ParseNumber(std::string_view text) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  int64_t integer = 0;
  if (auto [ptr, error] = std::from_chars(begin, end, integer);
      error == std::errc() && ptr == end) {
    return Value::Integer(integer);
  }
  double real = 0;
  if (auto [ptr, error] = std::from_chars(begin, end, real);
      error == std::errc() && ptr == end && std::isfinite(real)) {
    return Value::Double(real);
  }
  return Value();
}

Status ToNumber(const Node&, Arguments args, Value* out) {
  const Value& v = args[0].value;
  *out = v.is_number() ? v : v.is_string() ? ParseNumber(v.string()) : Value();
  return Status::OK();
}

Status TypeFunction(const Node&, Arguments args, Value* out) {
  *out = Value::String(std::string(TypeName(args[0].value.type())));
  return Status::OK();
}

constexpr uint16_t kNumbersOrStrings = kArrayOfNumbersParam | kArrayOfStringsParam;

const std::vector<Function>& Builtins() {
  static const std::vector<Function> functions = {
      {"abs", {kNumberParam}, false, Abs},
      {"avg", {kArrayOfNumbersParam}, false, Avg},
      {"ceil", {kNumberParam}, false, Ceil},
      {"contains", {kArrayParam | kStringParam, kAnyParam}, false, Contains},
      {"ends_with", {kStringParam, kStringParam}, false, EndsWith},
      {"floor", {kNumberParam}, false, Floor},
      {"join", {kStringParam, kArrayOfStringsParam}, false, Join},
      {"keys", {kObjectParam}, false, Keys},
      {"length", {kStringParam | kArrayParam | kObjectParam}, false, Length},
      {"map", {kExprefParam, kArrayParam}, false, Map},
      {"max", {kNumbersOrStrings}, false, Extreme<true>},
      {"max_by", {kArrayParam, kExprefParam}, false, ExtremeBy<true>},
      {"merge", {kObjectParam}, true, Merge},
      {"min", {kNumbersOrStrings}, false, Extreme<false>},
      {"min_by", {kArrayParam, kExprefParam}, false, ExtremeBy<false>},
      {"not_null", {kAnyParam}, true, NotNull},
      {"reverse", {kStringParam | kArrayParam}, false, Reverse},
      {"sort", {kNumbersOrStrings}, false, Sort},
      {"sort_by", {kArrayParam, kExprefParam}, false, SortBy},
      {"starts_with", {kStringParam, kStringParam}, false, StartsWith},
      {"sum", {kArrayOfNumbersParam}, false, SumFunction},
      {"to_array", {kAnyParam}, false, ToArray},
      {"to_number", {kAnyParam}, false, ToNumber},
      {"to_string", {kAnyParam}, false, ToString},
      {"type", {kAnyParam}, false, TypeFunction},
      {"values", {kObjectParam}, false, Values},
  };
  return functions;
}

bool AllElements(const Value& array, Type type) {
  bool all = true;
  array.ForEachElement([&](const Value& element) { all = all && element.type() == type; });
  return all;
}

bool Fits(const Argument& arg, uint16_t accepted) {
  if (arg.expref != nullptr) return (accepted & kExprefParam) != 0;
  const Value& v = arg.value;
  switch (v.type()) {
    case Type::kNumber:
      return (accepted & kNumberParam) != 0;
    case Type::kString:
      return (accepted & kStringParam) != 0;
    case Type::kBoolean:
      return (accepted & kBooleanParam) != 0;
    case Type::kNull:
      return (accepted & kNullParam) != 0;
    case Type::kObject:
      return (accepted & kObjectParam) != 0;
    case Type::kArray:
      if ((accepted & kArrayParam) != 0) return true;
      if ((accepted & kNumbersOrStrings) == kNumbersOrStrings) {
        return AllElements(v, Type::kNumber) || AllElements(v, Type::kString);
      }
      if ((accepted & kArrayOfNumbersParam) != 0) return AllElements(v, Type::kNumber);
      if ((accepted & kArrayOfStringsParam) != 0) return AllElements(v, Type::kString);
      return false;
  }
  return false;
}

std::string Expected(uint16_t accepted) {
  static const std::pair<uint16_t, const char*> kNames[] = {
      {kNumberParam, "number"},
      {kStringParam, "string"},
      {kBooleanParam, "boolean"},
      {kNullParam, "null"},
      {kArrayParam, "array"},
      {kObjectParam, "object"},
      {kExprefParam, "expression reference"},
      {kArrayOfNumbersParam, "array of numbers"},
      {kArrayOfStringsParam, "array of strings"}};
  if (accepted == kAnyParam) return "any value";
  std::string text;
  for (const auto& [bit, name] : kNames) {
    if ((accepted & bit) == 0) continue;
    if (!text.empty()) text += " or ";
    text += name;
  }
  return text;
}

}  // namespace

const Function* FindFunction(std::string_view name) {
  for (const Function& function : Builtins()) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

Status CheckArity(const Function& function, size_t count, size_t position) {
  const size_t declared = function.parameters.size();
  if (function.variadic ? count >= declared : count == declared) return Status::OK();
  return CompileError("invalid-arity", position,
                      std::string(function.name) + "() takes " +
                          (function.variadic ? "at least " : "") + std::to_string(declared) +
                          " argument" + (declared == 1 ? "" : "s") + ", got " +
                          std::to_string(count));
}

Status CheckTypes(const Function& function, const Node& call, std::span<const Argument> arguments) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    const uint16_t accepted = function.parameters[std::min(i, function.parameters.size() - 1)];
    if (Fits(arguments[i], accepted)) continue;
    const std::string got = arguments[i].expref != nullptr
                                ? "an expression reference"
                                : std::string(TypeName(arguments[i].value.type()));
    return EvaluationError("invalid-type", call,
                           std::string(function.name) + "(): argument " + std::to_string(i + 1) +
                               " must be " + Expected(accepted) + ", got " + got);
  }
  return Status::OK();
}

}  // namespace weir::records::jmespath
