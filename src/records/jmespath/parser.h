// A Pratt (top-down operator precedence) parser of the JMESPath grammar.
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "records/jmespath/ast.h"

namespace weir::records::jmespath {

// The tree of `expression`; function names and arities are resolved here. Errors carry an
// ErrorDetail (source "jmespath", code syntax / unknown-function / invalid-arity /
// invalid-value) and the byte offset in the message.
Result<std::unique_ptr<Node>> Parse(std::string_view expression);

}  // namespace weir::records::jmespath
