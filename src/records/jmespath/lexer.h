// Tokens of a JMESPath expression (https://jmespath.org/specification.html#grammar).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {

enum class TokenKind : uint8_t {
  kEof,
  kUnquotedIdentifier,
  kQuotedIdentifier,
  kRawString,  // 'text'
  kLiteral,    // `json`
  kNumber,
  kDot,
  kStar,
  kFlatten,  // []
  kFilter,   // [?
  kLbracket,
  kRbracket,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kComma,
  kColon,
  kPipe,
  kOr,
  kAnd,
  kNot,
  kExpref,
  kCurrent,
  kEq,
  kNe,
  kLt,
  kLte,
  kGt,
  kGte,
};

// How a token reads in an error message ("']'", "identifier", "end of the expression").
std::string_view Describe(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEof;
  size_t position = 0;  // byte offset of the token's first character
  std::string text;     // identifiers (unescaped) and raw strings
  int64_t number = 0;
  Value literal;  // kLiteral
};

// The tokens of `expression`, ending with kEof; a syntax error (ErrorDetail code "syntax")
// naming the byte offset otherwise.
Result<std::vector<Token>> Tokenize(std::string_view expression);

// A compile-time error of `expression`: class fatal (a mapping that cannot compile is a
// configuration error), source "jmespath", `code` one of syntax, invalid-arity,
// unknown-function, invalid-value, invalid-type.
Status CompileError(std::string_view code, size_t position, std::string_view message);

}  // namespace weir::records::jmespath
