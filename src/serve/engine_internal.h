// Private to serve/engine*.cc: the DuckDB handles behind Engine and Session, and the error
// mapping they share.
#pragma once

#include <duckdb.h>

#include <list>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "serve/activity.h"
#include "serve/engine.h"

namespace weir::serve {

// Two databases over the same lake: sessions of write users connect to `writer` (in memory);
// sessions of read users to `reader`, the compatibility catalog's file opened READ_ONLY with
// the lake attached READ_ONLY: every database in it is read-only (see docs/ARCHITECTURE.md).
struct Engine::Handles {
  duckdb_database writer = nullptr;
  duckdb_database reader = nullptr;
  ~Handles() {
    if (reader != nullptr) duckdb_close(&reader);
    if (writer != nullptr) duckdb_close(&writer);
  }
};

struct Session::Handles {
  duckdb_connection conn = nullptr;
  struct Prepared {
    duckdb_prepared_statement statement = nullptr;
    std::string sql;
    StatementInfo info;
  };
  std::map<std::string, Prepared> prepared;
  // Simple-query SELECTs without parameters, prepared once and reused (most recent first):
  // DuckDB's prepare costs several times its execution for small queries, and DuckDB rebinds a
  // prepared statement by itself when the catalog changed under it.
  std::list<std::pair<std::string, duckdb_prepared_statement>> cache;
  void Clear() {
    for (auto& [sql, statement] : cache) duckdb_destroy_prepare(&statement);
    cache.clear();
    for (auto& [name, p] : prepared) duckdb_destroy_prepare(&p.statement);
    prepared.clear();
    if (conn != nullptr) duckdb_disconnect(&conn);
  }
  ~Handles() { Clear(); }
};

// The SQLSTATE for a DuckDB error: one table over DuckDB's error types, except DuckDB's
// refusal to write to a READ_ONLY database, which is 25006 whatever type it comes with.
std::string SqlStateOf(duckdb_error_type type, std::string_view message);
// The error of a failed prepare (DuckDB gives only its message) or of a failed result.
Status PrepareError(duckdb_prepared_statement statement);
Status ResultError(duckdb_result& result);
// Runs setup SQL on a connection (several statements); the first error is returned.
Status Exec(duckdb_connection conn, const std::string& sql);
std::string QuoteLiteral(const std::string& text);

// weir_stat_activity(), pg_cancel_backend(), pg_terminate_backend() over `registry`, in the
// database of `conn` (engine_activity.cc).
Status RegisterActivityFunctions(duckdb_connection conn, ActivityRegistry* registry);

// The statements a read-only session is refused by their DuckDB type alone.
bool WritesByItsType(duckdb_statement_type type);
// Whether a statement of this type reports changed rows in its tag even with RETURNING.
bool ReturnsRowCount(duckdb_statement_type type);
// PostgreSQL's command tag (without counts) for a statement DuckDB typed as `type`.
std::string TagOfType(duckdb_statement_type type, const std::string& sql);

}  // namespace weir::serve
