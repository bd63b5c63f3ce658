// PostgreSQL's lexer over one SQL text: the tokens with their byte ranges, and the few
// questions the splitter and the rewriter ask about them (where a dotted name ends, which
// parenthesis closes an open one).
//
// Threading: a Tokens object is used by one thread; it owns no libpg_query state after Scan.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <pg_query/pg_query.pb-c.h>

namespace weir::serve::compat {

struct Token {
  size_t begin = 0;  // byte offset of the first character
  size_t end = 0;    // one past the last character
  PgQuery__Token kind = PG_QUERY__TOKEN__NUL;
  bool keyword = false;
};

class Tokens {
 public:
  // Scans `sql`; nullopt when the lexer fails (an unterminated quote or comment).
  static std::optional<Tokens> Scan(const std::string& sql);

  const std::vector<Token>& all() const { return tokens_; }
  size_t size() const { return tokens_.size(); }
  const Token& operator[](size_t i) const { return tokens_[i]; }
  std::string_view Text(size_t i) const;

  // The token starting exactly at byte `offset`.
  std::optional<size_t> IndexAt(size_t offset) const;
  // The last token of the dotted name starting at token `first` (`a`, `a.b`, `a.b.c`).
  size_t NameEnd(size_t first) const;
  // The ')' that closes the '(' at token `open`.
  std::optional<size_t> ClosingParen(size_t open) const;
  // Whether token `i` can be part of a name (an identifier, or a keyword used as one).
  bool IsNamePart(size_t i) const;

 private:
  Tokens(std::string_view sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {}

  std::string_view sql_;
  std::vector<Token> tokens_;
};

}  // namespace weir::serve::compat
