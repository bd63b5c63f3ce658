// What serve makes of DuckDB's statement types: the command tags PostgreSQL clients expect, and
// which statements a read-only session is refused by their type alone.
#include <duckdb.h>

#include <string>

#include "serve/compat/statement_kind.h"
#include "serve/engine_internal.h"

namespace weir::serve {

// The statements a read-only session is refused by their DuckDB type alone (the DML, DDL and
// file statements; what DuckDB types as a query, a CALL or EXECUTE is left to DuckDB's own
// read-only check).
bool WritesByItsType(duckdb_statement_type type) {
  switch (type) {
    case DUCKDB_STATEMENT_TYPE_INSERT:
    case DUCKDB_STATEMENT_TYPE_UPDATE:
    case DUCKDB_STATEMENT_TYPE_DELETE:
    case DUCKDB_STATEMENT_TYPE_MERGE_INTO:
    case DUCKDB_STATEMENT_TYPE_CREATE:
    case DUCKDB_STATEMENT_TYPE_CREATE_FUNC:
    case DUCKDB_STATEMENT_TYPE_DROP:
    case DUCKDB_STATEMENT_TYPE_ALTER:
    case DUCKDB_STATEMENT_TYPE_COPY:
    case DUCKDB_STATEMENT_TYPE_COPY_DATABASE:
    case DUCKDB_STATEMENT_TYPE_EXPORT:
    case DUCKDB_STATEMENT_TYPE_ANALYZE:
    case DUCKDB_STATEMENT_TYPE_VACUUM:
    case DUCKDB_STATEMENT_TYPE_ATTACH:
    case DUCKDB_STATEMENT_TYPE_LOAD:
    case DUCKDB_STATEMENT_TYPE_EXTENSION:
    case DUCKDB_STATEMENT_TYPE_UPDATE_EXTENSIONS:
      return true;
    default:
      return false;
  }
}

// Whether a statement of this type reports changed rows in its tag (INSERT 0 n, UPDATE n, ...)
// even when it returns rows (RETURNING).
bool ReturnsRowCount(duckdb_statement_type type) {
  return type == DUCKDB_STATEMENT_TYPE_INSERT || type == DUCKDB_STATEMENT_TYPE_UPDATE ||
         type == DUCKDB_STATEMENT_TYPE_DELETE;
}

// PostgreSQL's command tag (without counts) for a statement DuckDB typed as `type`; the DDL
// tags come from the statement's parse tree.
std::string TagOfType(duckdb_statement_type type, const std::string& sql) {
  switch (type) {
    case DUCKDB_STATEMENT_TYPE_SELECT:
      return "SELECT";
    case DUCKDB_STATEMENT_TYPE_INSERT:
      return "INSERT";
    case DUCKDB_STATEMENT_TYPE_UPDATE:
      return "UPDATE";
    case DUCKDB_STATEMENT_TYPE_DELETE:
      return "DELETE";
    case DUCKDB_STATEMENT_TYPE_MERGE_INTO:
      return "MERGE";
    case DUCKDB_STATEMENT_TYPE_CREATE:
    case DUCKDB_STATEMENT_TYPE_CREATE_FUNC:
      return compat::CommandTagOf(sql, "CREATE");
    case DUCKDB_STATEMENT_TYPE_DROP:
      return compat::CommandTagOf(sql, "DROP");
    case DUCKDB_STATEMENT_TYPE_ALTER:
      return compat::CommandTagOf(sql, "ALTER");
    case DUCKDB_STATEMENT_TYPE_SET:
    case DUCKDB_STATEMENT_TYPE_VARIABLE_SET:
      return "SET";
    case DUCKDB_STATEMENT_TYPE_PRAGMA:
      return compat::CommandTagOf(sql, "PRAGMA");  // CHECKPOINT is one
    case DUCKDB_STATEMENT_TYPE_COPY:
    case DUCKDB_STATEMENT_TYPE_COPY_DATABASE:
      return "COPY";
    case DUCKDB_STATEMENT_TYPE_EXPLAIN:
      return "EXPLAIN";
    case DUCKDB_STATEMENT_TYPE_PREPARE:
      return "PREPARE";
    case DUCKDB_STATEMENT_TYPE_EXECUTE:
      return "EXECUTE";
    case DUCKDB_STATEMENT_TYPE_ANALYZE:
      return "ANALYZE";
    case DUCKDB_STATEMENT_TYPE_VACUUM:
      return "VACUUM";
    case DUCKDB_STATEMENT_TYPE_EXPORT:
      return "EXPORT";
    case DUCKDB_STATEMENT_TYPE_CALL:
      return "CALL";
    case DUCKDB_STATEMENT_TYPE_LOAD:
      return "LOAD";
    case DUCKDB_STATEMENT_TYPE_EXTENSION:
      return "INSTALL";
    case DUCKDB_STATEMENT_TYPE_ATTACH:
      return "ATTACH";
    case DUCKDB_STATEMENT_TYPE_DETACH:
      return "DETACH";
    case DUCKDB_STATEMENT_TYPE_TRANSACTION:
      return "COMMIT";  // Run names BEGIN and ROLLBACK from the parse tree
    default:
      return "OK";
  }
}

}  // namespace weir::serve
