#include "serve/compat/compat.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

namespace weir::serve::compat {

Status InstallCatalog(duckdb_connection) { return Status::OK(); }

std::vector<std::string> SplitStatements(std::string_view sql) {
  // PostgreSQL's lexer finds the semicolons that end statements. (libpg_query's own splitter
  // drops statements that do not start with a PostgreSQL keyword, such as DuckDB's USE, so the
  // token stream is split here instead.)
  const std::string text(sql);
  std::vector<std::string> statements;
  const auto keep = [&](size_t begin, size_t end) {
    std::string piece = text.substr(begin, end - begin);
    const size_t first = piece.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return;
    const size_t last = piece.find_last_not_of(" \t\r\n");
    statements.push_back(piece.substr(first, last - first + 1));
  };
  PgQueryScanResult scan = pg_query_scan(text.c_str());
  PgQuery__ScanResult* tokens =
      scan.error != nullptr
          ? nullptr
          : pg_query__scan_result__unpack(nullptr, scan.pbuf.len,
                                          reinterpret_cast<const uint8_t*>(scan.pbuf.data));
  if (tokens == nullptr) {
    keep(0, text.size());  // the lexer failed (an unterminated quote): DuckDB reports it
  } else {
    size_t begin = 0;
    for (size_t i = 0; i < tokens->n_tokens; ++i) {
      if (tokens->tokens[i]->token != PG_QUERY__TOKEN__ASCII_59) continue;
      const auto semicolon = static_cast<size_t>(tokens->tokens[i]->start);
      keep(begin, semicolon);
      begin = semicolon + 1;
    }
    keep(begin, text.size());
    pg_query__scan_result__free_unpacked(tokens, nullptr);
  }
  pg_query_free_scan_result(scan);
  return statements;
}

std::string RewriteForDuckDb(const std::string& statement) { return statement; }

}  // namespace weir::serve::compat
