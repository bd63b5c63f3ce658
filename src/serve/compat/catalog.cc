// InstallCatalog: creates weir's PostgreSQL catalog objects once per database.
#include <string>
#include <utility>
#include <vector>

#include "serve/compat/catalog_sql.h"
#include "serve/compat/compat.h"
#include "serve/compat/names.h"

namespace weir::serve::compat {
namespace {

void ReplaceAll(std::string& sql, const std::string& from, const std::string& to) {
  for (size_t at = sql.find(from); at != std::string::npos; at = sql.find(from, at)) {
    sql.replace(at, from.size(), to);
    at += to.size();
  }
}

Status Run(duckdb_connection connection, const std::string& sql) {
  duckdb_result result;
  const bool ok = duckdb_query(connection, sql.c_str(), &result) == DuckDBSuccess;
  std::string message = ok ? "" : duckdb_result_error(&result);
  duckdb_destroy_result(&result);
  if (ok) return Status::OK();
  return ClassifiedError(
      ErrorClass::kFatal, "duckdb", "catalog",
      "creating the PostgreSQL catalog (" + sql.substr(0, sql.find('\n')) + "): " + message);
}

}  // namespace

std::string QualifySchemas(std::string sql) {
  ReplaceAll(sql, "@i.", std::string(kInformationSchema) + ".");
  ReplaceAll(sql, "@.", std::string(kPgCatalog) + ".");
  return sql;
}

Status InstallCatalog(duckdb_connection connection) {
  WEIR_RETURN_NOT_OK(Run(connection, "CREATE SCHEMA " + std::string(kPgCatalog)));
  WEIR_RETURN_NOT_OK(Run(connection, "CREATE SCHEMA " + std::string(kInformationSchema)));
  std::vector<std::string> pending;
  for (auto part :
       {TypeCatalogSql(), FunctionCatalogSql(), RelationCatalogSql(), InformationSchemaSql()}) {
    pending.insert(pending.end(), part.begin(), part.end());
  }
  // DuckDB binds views and macros when they are created, so each must come after the objects
  // it names; rather than keeping the files in that order by hand, the statements that fail
  // are retried after the others until none is left (or a round makes no progress: a real
  // error, reported).
  while (!pending.empty()) {
    std::vector<std::string> failed;
    std::string errors;
    for (const std::string& statement : pending) {
      Status status = Run(connection, statement);
      if (status.ok()) continue;
      errors += (errors.empty() ? "" : "; ") + status.message();
      failed.push_back(statement);
    }
    if (failed.size() == pending.size()) {
      return ClassifiedError(ErrorClass::kFatal, "duckdb", "catalog", errors);
    }
    pending = std::move(failed);
  }
  return Status::OK();
}

}  // namespace weir::serve::compat
