// SplitStatements: PostgreSQL's lexer finds the semicolons that end statements.
// (libpg_query's own splitter drops statements that do not start with a PostgreSQL keyword,
// such as DuckDB's USE, so the token stream is split here instead.)
#include "serve/compat/compat.h"
#include "serve/compat/tokens.h"

namespace weir::serve::compat {

std::vector<std::string> SplitStatements(std::string_view sql) {
  const std::string text(sql);
  std::vector<std::string> statements;
  const auto keep = [&](size_t begin, size_t end) {
    std::string piece = text.substr(begin, end - begin);
    const size_t first = piece.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return;
    const size_t last = piece.find_last_not_of(" \t\r\n");
    statements.push_back(piece.substr(first, last - first + 1));
  };
  const auto tokens = Tokens::Scan(text);
  if (!tokens) {
    keep(0, text.size());  // the lexer failed (an unterminated quote): DuckDB reports it
    return statements;
  }
  size_t begin = 0;
  for (const Token& token : tokens->all()) {
    if (token.kind != PG_QUERY__TOKEN__ASCII_59) continue;
    keep(begin, token.begin);
    begin = token.begin + 1;
  }
  keep(begin, text.size());
  return statements;
}

}  // namespace weir::serve::compat
