#include "records/jmespath/lexer.h"

#include <charconv>

namespace weir::records::jmespath {

std::string_view Describe(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof:
      return "end of the expression";
    case TokenKind::kUnquotedIdentifier:
      return "identifier";
    case TokenKind::kQuotedIdentifier:
      return "quoted identifier";
    case TokenKind::kRawString:
      return "raw string";
    case TokenKind::kLiteral:
      return "literal";
    case TokenKind::kNumber:
      return "number";
    case TokenKind::kDot:
      return "'.'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kFlatten:
      return "'[]'";
    case TokenKind::kFilter:
      return "'[?'";
    case TokenKind::kLbracket:
      return "'['";
    case TokenKind::kRbracket:
      return "']'";
    case TokenKind::kLbrace:
      return "'{'";
    case TokenKind::kRbrace:
      return "'}'";
    case TokenKind::kLparen:
      return "'('";
    case TokenKind::kRparen:
      return "')'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kPipe:
      return "'|'";
    case TokenKind::kOr:
      return "'||'";
    case TokenKind::kAnd:
      return "'&&'";
    case TokenKind::kNot:
      return "'!'";
    case TokenKind::kExpref:
      return "'&'";
    case TokenKind::kCurrent:
      return "'@'";
    case TokenKind::kEq:
      return "'=='";
    case TokenKind::kNe:
      return "'!='";
    case TokenKind::kLt:
      return "'<'";
    case TokenKind::kLte:
      return "'<='";
    case TokenKind::kGt:
      return "'>'";
    case TokenKind::kGte:
      return "'>='";
  }
  return "token";
}

Status CompileError(std::string_view code, size_t position, std::string_view message) {
  return ClassifiedError(ErrorClass::kFatal, "jmespath", std::string(code),
                         std::string(code) + " error at offset " + std::to_string(position) + ": " +
                             std::string(message));
}

namespace {

bool IsIdentifierStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentifierChar(char c) { return IsIdentifierStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                     text_[pos_] == '\n' || text_[pos_] == '\r')) {
        ++pos_;
      }
      Token token;
      token.position = pos_;
      if (pos_ >= text_.size()) {
        tokens.push_back(std::move(token));
        return tokens;
      }
      WEIR_RETURN_NOT_OK(Next(&token));
      tokens.push_back(std::move(token));
    }
  }

 private:
  char Peek(size_t ahead = 1) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  Status Single(Token* token, TokenKind kind) {
    token->kind = kind;
    ++pos_;
    return Status::OK();
  }
  Status Either(Token* token, char second, TokenKind two, TokenKind one) {
    if (Peek() == second) {
      token->kind = two;
      pos_ += 2;
    } else {
      token->kind = one;
      ++pos_;
    }
    return Status::OK();
  }

  // The text up to the closing `delimiter` (a backslash keeps the next character), without
  // the delimiters; `pos_` ends after the closing one.
  Result<std::string_view> Delimited(char delimiter) {
    const size_t start = pos_;
    size_t i = pos_ + 1;
    while (i < text_.size() && text_[i] != delimiter) {
      if (text_[i] == '\\') ++i;
      ++i;
    }
    if (i >= text_.size()) {
      return CompileError("syntax", start,
                          std::string("unterminated ") + (delimiter == '"'    ? "quoted identifier"
                                                          : delimiter == '\'' ? "raw string"
                                                                              : "literal"));
    }
    pos_ = i + 1;
    return text_.substr(start + 1, i - start - 1);
  }

  static std::string Unescape(std::string_view text, char delimiter) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == delimiter) {
        out.push_back(delimiter);
        ++i;
      } else {
        out.push_back(text[i]);
      }
    }
    return out;
  }

  Status Next(Token* token) {
    const char c = text_[pos_];
    if (IsIdentifierStart(c)) {
      const size_t start = pos_;
      while (pos_ < text_.size() && IsIdentifierChar(text_[pos_])) ++pos_;
      token->kind = TokenKind::kUnquotedIdentifier;
      token->text = std::string(text_.substr(start, pos_ - start));
      return Status::OK();
    }
    if (IsDigit(c) || (c == '-' && IsDigit(Peek()))) {
      const size_t start = pos_;
      ++pos_;
      while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
      const auto [end, error] =
          std::from_chars(text_.data() + start, text_.data() + pos_, token->number);
      if (error != std::errc() || end != text_.data() + pos_) {
        return CompileError("syntax", start, "number out of range");
      }
      token->kind = TokenKind::kNumber;
      return Status::OK();
    }
    switch (c) {
      case '.':
        return Single(token, TokenKind::kDot);
      case '*':
        return Single(token, TokenKind::kStar);
      case ']':
        return Single(token, TokenKind::kRbracket);
      case '{':
        return Single(token, TokenKind::kLbrace);
      case '}':
        return Single(token, TokenKind::kRbrace);
      case '(':
        return Single(token, TokenKind::kLparen);
      case ')':
        return Single(token, TokenKind::kRparen);
      case ',':
        return Single(token, TokenKind::kComma);
      case ':':
        return Single(token, TokenKind::kColon);
      case '@':
        return Single(token, TokenKind::kCurrent);
      case '[':
        if (Peek() == ']') return Either(token, ']', TokenKind::kFlatten, TokenKind::kLbracket);
        return Either(token, '?', TokenKind::kFilter, TokenKind::kLbracket);
      case '|':
        return Either(token, '|', TokenKind::kOr, TokenKind::kPipe);
      case '&':
        return Either(token, '&', TokenKind::kAnd, TokenKind::kExpref);
      case '!':
        return Either(token, '=', TokenKind::kNe, TokenKind::kNot);
      case '<':
        return Either(token, '=', TokenKind::kLte, TokenKind::kLt);
      case '>':
        return Either(token, '=', TokenKind::kGte, TokenKind::kGt);
      case '=':
        if (Peek() != '=') return CompileError("syntax", pos_, "'=' is not an operator; use '=='");
        return Either(token, '=', TokenKind::kEq, TokenKind::kEq);
      case '"':
        return QuotedIdentifier(token);
      case '\'': {
        WEIR_ASSIGN_OR_RAISE(const std::string_view body, Delimited('\''));
        token->kind = TokenKind::kRawString;
        token->text = Unescape(body, '\'');
        return Status::OK();
      }
      case '`':
        return Literal(token);
      default:
        return CompileError("syntax", pos_, std::string("unexpected character '") + c + "'");
    }
  }

  // A quoted identifier is a JSON string: its escapes are JSON's.
  Status QuotedIdentifier(Token* token) {
    const size_t start = pos_;
    WEIR_ASSIGN_OR_RAISE(const std::string_view body, Delimited('"'));
    auto parsed = ParseJson(std::string("\"").append(body).append("\""));
    if (!parsed.ok() || !parsed->is_string()) {
      return CompileError("syntax", start, "invalid quoted identifier (not a JSON string)");
    }
    token->kind = TokenKind::kQuotedIdentifier;
    token->text = std::string(parsed->string());
    return Status::OK();
  }

  Status Literal(Token* token) {
    const size_t start = pos_;
    WEIR_ASSIGN_OR_RAISE(const std::string_view body, Delimited('`'));
    auto parsed = ParseJson(Unescape(body, '`'));
    if (!parsed.ok()) {
      return CompileError("syntax", start, "the literal is not valid JSON: " + std::string(body));
    }
    token->kind = TokenKind::kLiteral;
    token->literal = std::move(parsed).ValueUnsafe();
    return Status::OK();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view expression) { return Lexer(expression).Run(); }

}  // namespace weir::records::jmespath
