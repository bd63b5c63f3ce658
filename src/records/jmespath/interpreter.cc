#include "records/jmespath/interpreter.h"

#include <array>

#include "records/jmespath/functions.h"

namespace weir::records::jmespath {
namespace {

// A slice bound clamped to the array as the specification says.
int64_t ClampBound(int64_t bound, int64_t length, int64_t step) {
  if (bound < 0) {
    bound += length;
    if (bound < 0) bound = step < 0 ? -1 : 0;
  } else if (bound >= length) {
    bound = step < 0 ? length - 1 : length;
  }
  return bound;
}

Value Slice(const Node& node, const Value& input) {
  if (!input.is_array()) return Value();
  const std::vector<Value> elements = input.Elements();
  const int64_t length = static_cast<int64_t>(elements.size());
  const int64_t step = node.step;
  const int64_t start =
      node.start ? ClampBound(*node.start, length, step) : (step > 0 ? 0 : length - 1);
  const int64_t stop = node.stop ? ClampBound(*node.stop, length, step) : (step > 0 ? length : -1);
  Array sliced;
  if (step > 0) {
    for (int64_t i = start; i < stop; i += step) sliced.push_back(elements[i]);
  } else {
    for (int64_t i = start; i > stop; i += step) sliced.push_back(elements[i]);
  }
  return Value::FromArray(std::move(sliced));
}

Value Index(const Node& node, const Value& input) {
  if (!input.is_array()) return Value();
  const int64_t length = static_cast<int64_t>(input.size());
  const int64_t index = node.index < 0 ? node.index + length : node.index;
  if (index < 0 || index >= length) return Value();
  return input.At(static_cast<size_t>(index));
}

Value Compare(Comparator comparator, const Value& left, const Value& right) {
  switch (comparator) {
    case Comparator::kEq:
      return Value::Boolean(Equal(left, right));
    case Comparator::kNe:
      return Value::Boolean(!Equal(left, right));
    default:
      break;
  }
  // Ordering is defined for numbers only; anything else compares as null.
  if (!left.is_number() || !right.is_number()) return Value();
  const int order = jmespath::Compare(left, right);
  switch (comparator) {
    case Comparator::kLt:
      return Value::Boolean(order < 0);
    case Comparator::kLte:
      return Value::Boolean(order <= 0);
    case Comparator::kGt:
      return Value::Boolean(order > 0);
    default:
      return Value::Boolean(order >= 0);
  }
}

// Applies node.children[1] to each of `elements`, keeping the results that are not null.
Status Project(const Node& node, const std::vector<Value>& elements, Value* out) {
  Array projected;
  projected.reserve(elements.size());
  for (const Value& element : elements) {
    Value result;
    WEIR_RETURN_NOT_OK(Evaluate(*node.children[1], element, &result));
    if (!result.is_null()) projected.push_back(std::move(result));
  }
  *out = Value::FromArray(std::move(projected));
  return Status::OK();
}

Status CallFunction(const Node& node, const Value& input, Value* out) {
  // Most calls take one to three arguments: no allocation for them.
  constexpr size_t kInline = 4;
  std::array<Argument, kInline> inline_arguments;
  std::vector<Argument> heap_arguments;
  const size_t count = node.children.size();
  if (count > kInline) heap_arguments.resize(count);
  const Arguments arguments(count > kInline ? heap_arguments.data() : inline_arguments.data(),
                            count);
  for (size_t i = 0; i < count; ++i) {
    const Node& child = *node.children[i];
    if (child.kind == NodeKind::kExpref) {
      arguments[i].expref = child.children[0].get();
    } else {
      WEIR_RETURN_NOT_OK(Evaluate(child, input, &arguments[i].value));
    }
  }
  WEIR_RETURN_NOT_OK(CheckTypes(*node.function, node, arguments));
  return node.function->call(node, arguments, out);
}

}  // namespace

Status EvaluationError(std::string_view code, const Node& node, std::string_view message) {
  return ClassifiedError(ErrorClass::kBadData, "jmespath", std::string(code),
                         std::string(code) + " error at offset " + std::to_string(node.position) +
                             ": " + std::string(message));
}

Status Evaluate(const Node& node, const Value& input, Value* out) {
  switch (node.kind) {
    case NodeKind::kCurrent:
      *out = input;
      return Status::OK();
    case NodeKind::kField:
      *out = input.Find(node.name);
      return Status::OK();
    case NodeKind::kSubexpression: {
      Value left;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &left));
      return Evaluate(*node.children[1], left, out);
    }
    case NodeKind::kIndex:
      *out = Index(node, input);
      return Status::OK();
    case NodeKind::kSlice:
      *out = Slice(node, input);
      return Status::OK();
    case NodeKind::kProjection: {
      Value base;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &base));
      if (!base.is_array()) {
        *out = Value();
        return Status::OK();
      }
      return Project(node, base.Elements(), out);
    }
    case NodeKind::kValueProjection: {
      Value base;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &base));
      if (!base.is_object()) {
        *out = Value();
        return Status::OK();
      }
      std::vector<Value> values;
      values.reserve(base.size());
      base.ForEachMember([&](std::string_view, const Value& value) { values.push_back(value); });
      return Project(node, values, out);
    }
    case NodeKind::kFilterProjection: {
      Value base;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &base));
      if (!base.is_array()) {
        *out = Value();
        return Status::OK();
      }
      std::vector<Value> kept;
      for (const Value& element : base.Elements()) {
        Value condition;
        WEIR_RETURN_NOT_OK(Evaluate(*node.children[2], element, &condition));
        if (condition.Truthy()) kept.push_back(element);
      }
      return Project(node, kept, out);
    }
    case NodeKind::kFlatten: {
      Value base;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &base));
      if (!base.is_array()) {
        *out = Value();
        return Status::OK();
      }
      Array flat;
      for (const Value& element : base.Elements()) {
        if (element.is_array()) {
          element.AppendElements(&flat);
        } else {
          flat.push_back(element);
        }
      }
      *out = Value::FromArray(std::move(flat));
      return Status::OK();
    }
    case NodeKind::kComparator: {
      Value left;
      Value right;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &left));
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[1], input, &right));
      *out = Compare(node.comparator, left, right);
      return Status::OK();
    }
    case NodeKind::kOr:
    case NodeKind::kAnd: {
      Value left;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &left));
      if (left.Truthy() == (node.kind == NodeKind::kOr)) {
        *out = std::move(left);
        return Status::OK();
      }
      return Evaluate(*node.children[1], input, out);
    }
    case NodeKind::kNot: {
      Value operand;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &operand));
      *out = Value::Boolean(!operand.Truthy());
      return Status::OK();
    }
    case NodeKind::kLiteral:
      *out = node.literal;
      return Status::OK();
    case NodeKind::kMultiSelectList: {
      if (input.is_null()) {
        *out = Value();
        return Status::OK();
      }
      Array selected(node.children.size());
      for (size_t i = 0; i < node.children.size(); ++i) {
        WEIR_RETURN_NOT_OK(Evaluate(*node.children[i], input, &selected[i]));
      }
      *out = Value::FromArray(std::move(selected));
      return Status::OK();
    }
    case NodeKind::kMultiSelectHash: {
      if (input.is_null()) {
        *out = Value();
        return Status::OK();
      }
      Object selected;
      selected.reserve(node.children.size());
      for (size_t i = 0; i < node.children.size(); ++i) {
        Value value;
        WEIR_RETURN_NOT_OK(Evaluate(*node.children[i], input, &value));
        bool replaced = false;  // a repeated key: the last wins
        for (Member& member : selected) {
          if (member.first == node.keys[i]) {
            member.second = value;
            replaced = true;
          }
        }
        if (!replaced) selected.emplace_back(node.keys[i], std::move(value));
      }
      *out = Value::FromObject(std::move(selected));
      return Status::OK();
    }
    case NodeKind::kPipe: {
      Value left;
      WEIR_RETURN_NOT_OK(Evaluate(*node.children[0], input, &left));
      return Evaluate(*node.children[1], left, out);
    }
    case NodeKind::kFunction:
      return CallFunction(node, input, out);
    case NodeKind::kExpref:
      return EvaluationError("invalid-type", node,
                             "an expression reference (&...) can only be a function argument");
  }
  return EvaluationError("invalid-value", node, "unknown node");
}

}  // namespace weir::records::jmespath
