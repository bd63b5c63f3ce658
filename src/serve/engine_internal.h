// Private to serve/engine*.cc: the DuckDB handles behind Engine and Session, and the error
// mapping they share.
#pragma once

#include <duckdb.h>

#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/sql_quote.h"
#include "base/status.h"
#include "lake/duckdb_handles.h"
#include "serve/activity.h"
#include "serve/engine.h"

namespace weir::serve {

// Two databases over the same lake: sessions of write users connect to `writer` (in memory);
// sessions of read users to `reader`, the compatibility catalog's file opened READ_ONLY with
// the lake attached READ_ONLY: every database in it is read-only (see docs/ARCHITECTURE.md).
struct Engine::Handles {
  lake::DuckDbDatabase writer;
  lake::DuckDbDatabase reader;  // closed first
};

// Members in this order: the prepared statements are destroyed before their connection.
struct Session::Handles {
  lake::DuckDbConnection conn;
  struct Prepared {
    lake::DuckDbPrepared statement;
    std::string sql;
    StatementInfo info;
  };
  // Named statements ("" the unnamed one); several names may share one DuckDB statement.
  std::map<std::string, std::shared_ptr<Prepared>> prepared;
  // Queries prepared through Parse, by the client's text (most recent first): a client that
  // parses the same text again (every unnamed statement of psycopg, pgjdbc, node-postgres)
  // gets the statement prepared the first time. Dropped with the simple queries' cache.
  std::list<std::pair<std::string, std::shared_ptr<Prepared>>> parsed;
  // Simple-query SELECTs without parameters, prepared once and reused (most recent first):
  // DuckDB's prepare costs several times its execution for small queries, and DuckDB rebinds a
  // prepared statement by itself when the catalog changed under it. Keyed by the client's
  // text, so a repeated query is neither parsed for rewriting nor prepared again.
  struct Cached {
    std::string statement;  // as the client sent it
    std::string sql;        // rewritten for DuckDB
    lake::DuckDbPrepared prepared;
  };
  std::list<Cached> cache;
  void Clear() {
    cache.clear();
    parsed.clear();
    prepared.clear();
    conn.reset();
  }
};

// The SQLSTATE for a DuckDB error: one table over DuckDB's error types, except DuckDB's
// refusal to write to a READ_ONLY database, which is 25006 whatever type it comes with.
std::string SqlStateOf(duckdb_error_type type, std::string_view message);
// The error of a failed prepare (DuckDB gives only its message) or of a failed result.
Status PrepareError(duckdb_prepared_statement statement);
Status ResultError(duckdb_result& result);
// Runs setup SQL on a connection (several statements); the first error is returned.
Status Exec(duckdb_connection conn, const std::string& sql);

// The name of a prepared statement's column (DuckDB's copy, freed).
std::string PreparedColumnName(duckdb_prepared_statement statement, idx_t column);
// The protocol counts parameters (Bind, ParameterDescription) and result columns
// (RowDescription, DataRow, COPY's responses) in 16 bits: a statement beyond either is 54023
// or 54011, refused before it runs. Parameters go to 65,535 as in PostgreSQL (libpq and pgjdbc
// read the count unsigned); columns stop at 32,767, since PostgreSQL never sends more than
// 1,664 and some drivers (node-postgres) read that count signed.
inline constexpr idx_t kMaxProtocolParameters = 65535;
inline constexpr idx_t kMaxProtocolColumns = 32767;
Status WithinProtocolCounts(duckdb_prepared_statement statement);

// weir_stat_activity(), pg_cancel_backend(), pg_terminate_backend() over `registry`, in the
// database of `conn` (engine_activity.cc).
Status RegisterActivityFunctions(duckdb_connection conn, ActivityRegistry* registry);

// An Iceberg REST catalog attached as `lake` (READ_ONLY for the readers' database), and the
// table locations the sandbox lets sessions read (engine_iceberg.cc).
Status AttachIceberg(duckdb_connection conn, const LakeAttachment& lake, bool read_only);
Result<std::vector<std::string>> IcebergAllowedPaths(duckdb_connection conn,
                                                     const LakeAttachment& lake);
// DuckDB's iceberg catalog lists a table it has not loaded yet with a placeholder column
// (`__`, UNKNOWN), and every connection of the database sees a table's columns once one has
// loaded it: loads (DESCRIBE) every table still listed so, for the compatibility catalog's
// pg_attribute and information_schema.columns. Best effort: a failure is logged.
void ResolveIcebergTables(duckdb_connection conn);

// The statements a read-only session is refused by their DuckDB type alone.
bool WritesByItsType(duckdb_statement_type type);
// Whether a statement of this type reports changed rows in its tag even with RETURNING.
bool ReturnsRowCount(duckdb_statement_type type);
// PostgreSQL's command tag (without counts) for a statement DuckDB typed as `type`.
std::string TagOfType(duckdb_statement_type type, const std::string& sql);

}  // namespace weir::serve
