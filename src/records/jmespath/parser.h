// A Pratt (top-down operator precedence) parser of the JMESPath grammar.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "records/jmespath/ast.h"

namespace weir::records::jmespath {

// Longer expressions are refused (the tree's height stays within what the stack holds).
inline constexpr size_t kMaxExpressionBytes = 16384;

// The tree of `expression`; function names and arities are resolved here. Errors carry an
// ErrorDetail (source "jmespath", code syntax / unknown-function / invalid-arity /
// invalid-value) and the byte offset in the message.
Result<std::unique_ptr<Node>> Parse(std::string_view expression);

}  // namespace weir::records::jmespath
