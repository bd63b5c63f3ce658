// Session::Configure and DISCARD's engine side: weir's own SETs of a session's DuckDB settings
// and variables, and dropping the session's temporary objects.
#include <duckdb.h>

#include <string>
#include <vector>

#include "serve/engine.h"
#include "serve/engine_internal.h"

namespace weir::serve {

uint64_t Session::connection_id() const {
  duckdb_client_context context = nullptr;
  duckdb_connection_get_client_context(handles_->conn.get(), &context);
  const uint64_t id = duckdb_client_context_get_connection_id(context);
  duckdb_destroy_client_context(&context);
  return id;
}

Status Session::Configure(const std::string& sql) {
  WEIR_RETURN_NOT_OK(BeforeStatement());
  // Settings and variables are folded into plans when they are bound.
  ClearStatementCache();
  return Exec(handles_->conn.get(), sql);
}

Status Session::DiscardTemporary() {
  WEIR_RETURN_NOT_OK(BeforeStatement());
  duckdb_result result;
  // Each name double-quoted as an identifier ('"' || replace(name, '"', '""') || '"').
  const char* list = R"sql(
    SELECT 'DROP TABLE IF EXISTS temp.main."' || replace(table_name, '"', '""') || '"'
    FROM duckdb_tables() WHERE temporary
    UNION ALL
    SELECT 'DROP VIEW IF EXISTS temp.main."' || replace(view_name, '"', '""') || '"'
    FROM duckdb_views() WHERE temporary AND NOT internal
    UNION ALL
    SELECT 'DROP SEQUENCE IF EXISTS temp.main."' || replace(sequence_name, '"', '""') || '"'
    FROM duckdb_sequences() WHERE temporary
    UNION ALL
    SELECT DISTINCT 'DROP ' || CASE function_type WHEN 'table_macro' THEN 'MACRO TABLE'
      ELSE 'MACRO' END || ' IF EXISTS temp.main."' || replace(function_name, '"', '""') || '"'
    FROM duckdb_functions() WHERE database_name = 'temp'
      AND function_type IN ('macro', 'table_macro'))sql";
  if (duckdb_query(handles_->conn.get(), list, &result) != DuckDBSuccess) {
    Status status = ResultError(result);
    duckdb_destroy_result(&result);
    return status;
  }
  std::vector<std::string> drops;
  for (idx_t row = 0; row < duckdb_row_count(&result); ++row) {
    char* text = duckdb_value_varchar(&result, 0, row);
    drops.emplace_back(text != nullptr ? text : "");
    duckdb_free(text);
  }
  duckdb_destroy_result(&result);
  ClearStatementCache();
  for (const std::string& drop : drops) WEIR_RETURN_NOT_OK(Exec(handles_->conn.get(), drop));
  return Status::OK();
}

}  // namespace weir::serve
