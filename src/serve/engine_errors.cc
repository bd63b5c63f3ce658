// DuckDB's errors as SQLSTATEs (one table; messages are matched only where DuckDB's C API
// gives nothing else, each case written down below).
#include <duckdb.h>

#include <string>
#include <string_view>
#include <utility>

#include "serve/engine_internal.h"

namespace weir::serve {
namespace {

// DuckDB's C API gives no error type for a failed prepare, only the message, whose first words
// are DuckDB's own exception type name ("Catalog Error: ..."). That fixed prefix, not the text
// after it, decides the type.
duckdb_error_type PrepareErrorType(std::string_view message) {
  static const std::pair<std::string_view, duckdb_error_type> kPrefixes[] = {
      {"Parser Error:", DUCKDB_ERROR_PARSER},
      {"Catalog Error:", DUCKDB_ERROR_CATALOG},
      {"Binder Error:", DUCKDB_ERROR_BINDER},
      {"Conversion Error:", DUCKDB_ERROR_CONVERSION},
      {"Permission Error:", DUCKDB_ERROR_PERMISSION},
      {"Not implemented Error:", DUCKDB_ERROR_NOT_IMPLEMENTED},
      {"TransactionContext Error:", DUCKDB_ERROR_TRANSACTION},
      {"Invalid Input Error:", DUCKDB_ERROR_INVALID_INPUT},
  };
  for (const auto& [prefix, type] : kPrefixes) {
    if (message.starts_with(prefix)) return type;
  }
  return DUCKDB_ERROR_UNKNOWN_TYPE;
}

// DuckDB refuses a write to a READ_ONLY database (and in a READ ONLY transaction) with an
// Invalid Input or Transaction error and a fixed sentence of its own; DuckLake's maintenance
// functions wrap the same sentence in theirs, and DuckDB's storage has one more. The C API
// carries no other mark of it, so these sentences (DuckDB's, pinned by engine tests against
// the DuckDB weir links) and the signal functions' refusal (weir's own, activity.h) are the
// only places where a message decides a SQLSTATE.
bool IsReadOnlyRefusal(duckdb_error_type type, std::string_view message) {
  if (type != DUCKDB_ERROR_INVALID_INPUT && type != DUCKDB_ERROR_TRANSACTION) return false;
  return message.find("attached in read-only mode") != std::string_view::npos ||
         message.find("transaction is launched in read-only mode") != std::string_view::npos ||
         message.find("Cannot append to a readonly database") != std::string_view::npos;
}

}  // namespace

std::string SqlStateOf(duckdb_error_type type, std::string_view message) {
  if (IsReadOnlyRefusal(type, message)) return "25006";  // read_only_sql_transaction
  // The signal functions' refusal of a read user (engine_activity.cc): weir's own sentence.
  if (message.find(kCancelRefused) != std::string_view::npos ||
      message.find(kTerminateRefused) != std::string_view::npos) {
    return "42501";
  }
  switch (type) {
    case DUCKDB_ERROR_PARSER:
      return "42601";  // syntax_error
    case DUCKDB_ERROR_CATALOG:
      return "42P01";  // undefined_table (or object)
    case DUCKDB_ERROR_BINDER:
      return "42703";  // undefined_column and other binding failures
    case DUCKDB_ERROR_CONVERSION:
      return "22P02";  // invalid_text_representation
    case DUCKDB_ERROR_OUT_OF_RANGE:
      return "22003";  // numeric_value_out_of_range
    case DUCKDB_ERROR_DIVIDE_BY_ZERO:
      return "22012";
    case DUCKDB_ERROR_CONSTRAINT:
      return "23000";
    case DUCKDB_ERROR_TRANSACTION:
      // A commit that lost to another writer (DuckLake's "Failed to commit", SQLite's
      // "database is locked" at commit): the client may retry, as after a serialization failure.
      return "40001";
    case DUCKDB_ERROR_INTERRUPT:
      return "57014";  // query_canceled
    case DUCKDB_ERROR_PERMISSION:
      return "42501";  // insufficient_privilege
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return "53200";
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return "0A000";
    case DUCKDB_ERROR_IO:
      return "58030";
    case DUCKDB_ERROR_INVALID_INPUT:
      return "22023";  // invalid_parameter_value
    default:
      return "XX000";
  }
}

Status PrepareError(duckdb_prepared_statement statement) {
  const char* error = statement != nullptr ? duckdb_prepare_error(statement) : nullptr;
  const std::string message = error != nullptr ? error : "cannot prepare the statement";
  return ClassifiedError(ErrorClass::kBadData, "sqlstate",
                         SqlStateOf(PrepareErrorType(message), message), message);
}

Status ResultError(duckdb_result& result) {
  const char* error = duckdb_result_error(&result);
  const std::string message = error != nullptr ? error : "DuckDB failed";
  return ClassifiedError(ErrorClass::kBadData, "sqlstate",
                         SqlStateOf(duckdb_result_error_type(&result), message), message);
}

Status Exec(duckdb_connection conn, const std::string& sql) {
  if (conn == nullptr) {
    return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "53300", "no DuckDB connection");
  }
  lake::DuckDbResult result;
  if (duckdb_query(conn, sql.c_str(), result.out()) != DuckDBSuccess) return ResultError(*result);
  return Status::OK();
}

}  // namespace weir::serve
