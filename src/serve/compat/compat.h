// PostgreSQL compatibility of `weir serve`: the pg_catalog / information_schema objects that
// clients' metadata queries need (created once per database), statement splitting with
// PostgreSQL's own lexer, and the rewriting of the statements DuckDB cannot run as written.
//
// Threading: InstallCatalog runs once at engine start; the other functions are pure and may be
// called from any session thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <duckdb.h>

#include "base/status.h"

namespace weir::serve::compat {

// Creates the compatibility objects with `connection` in a private file and attaches it
// READ_ONLY (as kCatalogDatabase) to that connection's database; `open_also`, if given, gets the
// file's path while it still has one (another database may open it, read-only). Called once,
// after the lake is attached and before the sandbox is locked.
Status InstallCatalog(duckdb_connection connection,
                      const std::function<Status(const std::string& path)>& open_also = {});

// Splits a simple-query string into its statements (PostgreSQL's lexer decides where a
// statement ends: quotes, dollar quotes and comments are respected). Empty statements are
// dropped; each keeps its own text without the trailing semicolon.
std::vector<std::string> SplitStatements(std::string_view sql);

// How a query's result columns are named.
enum class ColumnNames {
  kPostgres,  // as PostgreSQL names them: an alias for each computed column (count, ?column?)
  kDuckDb,    // as DuckDB does (the rewrite rules alone: their tests)
};

// The statement as DuckDB should run it: rewritten when it uses PostgreSQL-only syntax or
// catalog objects that need it, or (kPostgres) computes a column PostgreSQL names otherwise;
// returned unchanged when it needs none of that (DuckDB-native syntax passes).
std::string RewriteForDuckDb(const std::string& statement,
                             ColumnNames names = ColumnNames::kPostgres);

}  // namespace weir::serve::compat
