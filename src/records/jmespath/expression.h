// A compiled JMESPath expression (https://jmespath.org/specification.html).
//
// Compile once (per dataset), evaluate per record. An Expression is immutable: one may be
// evaluated from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {

struct Node;

class Expression {
 public:
  // Parses `text`. Errors are fatal (a configuration error), source "jmespath", code
  // syntax / unknown-function / invalid-arity / invalid-value, with the byte offset.
  static Result<Expression> Compile(std::string_view text);

  // The expression applied to `input`. A borrowed `input` is read in place: a plain path
  // (fields and indices, `a.b[0].c`) walks simdjson's document directly and everything else
  // copies only what functions and multi-selects build. Errors are bad data, source
  // "jmespath", code invalid-type (the record does not fit the expression).
  Status Evaluate(const Value& input, Value* out) const;
  Result<Value> Evaluate(const Value& input) const;

  // The tree walk, also for plain paths (what Evaluate does without its fast path).
  Status EvaluateTree(const Value& input, Value* out) const;

  // Fields and indices only: evaluated without the tree walk.
  bool is_plain_path() const { return !path_.empty(); }
  const std::string& text() const { return text_; }

 private:
  struct PathStep {
    std::string field;  // when !is_index
    int64_t index = 0;
    bool is_index = false;
  };

  Expression() = default;
  static bool CollectPath(const Node& node, std::vector<PathStep>* steps);
  Value EvaluatePath(const Value& input) const;

  std::string text_;
  std::shared_ptr<const Node> root_;
  std::vector<PathStep> path_;  // empty unless the expression is a plain path
};

}  // namespace weir::records::jmespath
