// Evaluation of a syntax tree on a Value (owned or borrowed from a simdjson document).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "records/jmespath/ast.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {

// The result of `node` applied to `input`, in `out`. Errors are bad data (the record is at
// fault), source "jmespath", code invalid-type (or invalid-value).
Status Evaluate(const Node& node, const Value& input, Value* out);

// An evaluation error of `node` (its byte offset is named in the message).
Status EvaluationError(std::string_view code, const Node& node, std::string_view message);

}  // namespace weir::records::jmespath
