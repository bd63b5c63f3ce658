// What serve makes of DuckDB's statement types: the command tags PostgreSQL clients expect,
// which statements a read-only session is refused by their type alone, and the protocol's
// limits on a prepared statement's parameters and columns.
#include <duckdb.h>

#include <string>

#include <fmt/format.h>

#include "serve/compat/statement_kind.h"
#include "serve/engine_internal.h"

namespace weir::serve {

// The name of a prepared statement's column. DuckDB returns a copy that is the caller's to free
// (it leaked once per column of every Parse).
std::string PreparedColumnName(duckdb_prepared_statement statement, idx_t column) {
  const char* name = duckdb_prepared_statement_column_name(statement, column);
  std::string out = name != nullptr ? name : "";
  duckdb_free(const_cast<char*>(name));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  return out;
}

// The protocol counts parameters (Bind, ParameterDescription) and result columns
// (RowDescription, DataRow, COPY's responses) in 16 bits: a statement beyond either is refused
// before it runs (a count that wrapped made a message the client misread; found by
// tests/fuzz/fuzz_session). PostgreSQL's own limits are lower (1664 columns).
Status WithinProtocolCounts(duckdb_prepared_statement statement) {
  const idx_t parameters = duckdb_nparams(statement);
  if (parameters > kMaxProtocolParameters) {
    return ClassifiedError(
        ErrorClass::kBadData, "sqlstate", "54023",
        fmt::format("a statement can have at most {} parameters; this one has {}",
                    kMaxProtocolParameters, parameters));
  }
  const idx_t columns = duckdb_prepared_statement_column_count(statement);
  if (columns > kMaxProtocolColumns) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "54011",
                           fmt::format("a result can have at most {} columns; this one has {}",
                                       kMaxProtocolColumns, columns));
  }
  return Status::OK();
}

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
