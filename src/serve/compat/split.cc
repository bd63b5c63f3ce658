// SplitStatements: PostgreSQL's lexer finds the semicolons that end statements.
// (libpg_query's own splitter drops statements that do not start with a PostgreSQL keyword,
// such as DuckDB's USE, so the token stream is split here instead.)
#include "serve/compat/compat.h"
#include "serve/compat/tokens.h"

namespace weir::serve::compat {

namespace {

constexpr std::string_view kSpace = " \t\r\n";

}  // namespace

std::vector<std::string> SplitStatements(std::string_view sql) {
  std::vector<std::string> statements;
  const auto keep = [&](std::string_view piece) {
    const size_t first = piece.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return;
    const size_t last = piece.find_last_not_of(kSpace);
    statements.emplace_back(piece.substr(first, last - first + 1));
  };
  // Most simple queries are one statement: without a semicolon anywhere there is nothing to
  // cut, and the lexer is not needed.
  if (sql.find(';') == std::string_view::npos) {
    keep(sql);
    return statements;
  }
  const std::string text(sql);
  const auto tokens = Tokens::Scan(text);
  if (!tokens) {
    keep(sql);  // the lexer failed (an unterminated quote): DuckDB reports it
    return statements;
  }
  size_t begin = 0;
  for (const Token& token : tokens->all()) {
    if (token.kind != PG_QUERY__TOKEN__ASCII_59) continue;
    keep(sql.substr(begin, token.begin - begin));
    begin = token.begin + 1;
  }
  keep(sql.substr(begin));
  return statements;
}

}  // namespace weir::serve::compat
