#include "records/jmespath/expression.h"

#include "records/jmespath/ast.h"
#include "records/jmespath/interpreter.h"
#include "records/jmespath/parser.h"

namespace weir::records::jmespath {
namespace dom = simdjson::dom;

Result<Expression> Expression::Compile(std::string_view text) {
  WEIR_ASSIGN_OR_RAISE(std::unique_ptr<Node> root, Parse(text));
  Expression expression;
  expression.text_ = std::string(text);
  std::vector<PathStep> steps;
  if (CollectPath(*root, &steps) && !steps.empty()) expression.path_ = std::move(steps);
  expression.root_ = std::move(root);
  return expression;
}

// A plain path is a chain of subexpressions whose leaves are fields and indices (`@` may
// start it): `a`, `a.b`, `a[0].b`, `[1]`, `@.a`.
bool Expression::CollectPath(const Node& node, std::vector<PathStep>* steps) {
  switch (node.kind) {
    case NodeKind::kField:
      steps->push_back(PathStep{node.name, 0, false});
      return true;
    case NodeKind::kIndex:
      steps->push_back(PathStep{std::string(), node.index, true});
      return true;
    case NodeKind::kCurrent:
      return true;
    case NodeKind::kSubexpression:
      return CollectPath(*node.children[0], steps) && CollectPath(*node.children[1], steps);
    default:
      return false;
  }
}

Value Expression::EvaluatePath(const Value& input) const {
  if (!input.is_borrowed()) {
    Value current = input;
    for (const PathStep& step : path_) {
      if (step.is_index) {
        if (!current.is_array()) return Value();
        const int64_t length = static_cast<int64_t>(current.size());
        const int64_t index = step.index < 0 ? step.index + length : step.index;
        if (index < 0 || index >= length) return Value();
        current = current.At(static_cast<size_t>(index));
      } else {
        current = current.Find(step.field);
      }
    }
    return current;
  }
  // In the document: no Value per step, no tree walk.
  dom::element current = input.element();
  for (const PathStep& step : path_) {
    if (step.is_index) {
      dom::array array;
      if (current.get_array().get(array) != simdjson::SUCCESS) return Value();
      int64_t index = step.index;
      if (index < 0) index += static_cast<int64_t>(array.size());
      if (index < 0 || array.at(static_cast<size_t>(index)).get(current) != simdjson::SUCCESS) {
        return Value();
      }
    } else {
      dom::object object;
      if (current.get_object().get(object) != simdjson::SUCCESS ||
          object.at_key(step.field).get(current) != simdjson::SUCCESS) {
        return Value();
      }
    }
  }
  return Value::Borrowed(current);
}

Status Expression::Evaluate(const Value& input, Value* out) const {
  if (is_plain_path()) {
    *out = EvaluatePath(input);
    return Status::OK();
  }
  return jmespath::Evaluate(*root_, input, out);
}

Result<Value> Expression::Evaluate(const Value& input) const {
  Value out;
  WEIR_RETURN_NOT_OK(Evaluate(input, &out));
  return out;
}

Status Expression::EvaluateTree(const Value& input, Value* out) const {
  return jmespath::Evaluate(*root_, input, out);
}

}  // namespace weir::records::jmespath
