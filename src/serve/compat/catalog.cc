// InstallCatalog: builds weir's PostgreSQL catalog objects in a database file of their own and
// attaches it read-only, so that no session can drop, replace or alter them.
#include <stdlib.h>

#include <cerrno>

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/sql_quote.h"
#include "lake/duckdb_handles.h"
#include "serve/compat/catalog_sql.h"
#include "serve/compat/compat.h"
#include "serve/compat/names.h"
#include "serve/compat/settings.h"

namespace weir::serve::compat {
namespace {

void ReplaceAll(std::string& sql, const std::string& from, const std::string& to) {
  for (size_t at = sql.find(from); at != std::string::npos; at = sql.find(from, at)) {
    sql.replace(at, from.size(), to);
    at += to.size();
  }
}

Status Run(duckdb_connection connection, const std::string& sql) {
  lake::DuckDbResult result;
  const bool ok = duckdb_query(connection, sql.c_str(), result.out()) == DuckDBSuccess;
  if (ok) return Status::OK();
  const std::string message = duckdb_result_error(result.get());
  return ClassifiedError(
      ErrorClass::kFatal, "duckdb", "catalog",
      "creating the PostgreSQL catalog (" + sql.substr(0, sql.find('\n')) + "): " + message);
}

// A directory only this process's user can enter, removed with everything in it when the
// object goes. The catalog's database file is written there and attached read-only; DuckDB
// keeps the file open, so it lives on, unreachable by name, until the database closes.
class PrivateDirectory {
 public:
  static Result<PrivateDirectory> Make() {
    std::error_code error;
    const std::filesystem::path base = std::filesystem::temp_directory_path(error);
    if (error) return Failed("finding the temporary directory", error);
    std::string pattern = (base / "weir-catalog-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Failed("creating a directory in " + base.string(),
                    std::error_code(errno, std::generic_category()));
    }
    return PrivateDirectory(pattern);
  }
  PrivateDirectory(PrivateDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  PrivateDirectory& operator=(PrivateDirectory&&) = delete;
  ~PrivateDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit PrivateDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  static Status Failed(const std::string& what, const std::error_code& error) {
    return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(error.value()),
                           "creating the PostgreSQL catalog: " + what + ": " + error.message());
  }

  std::filesystem::path path_;
};

// Runs the catalog's statements. DuckDB binds views and macros when they are created, so each
// must come after the objects it names; rather than keeping the files in that order by hand,
// the statements that fail are retried after the others until none is left (or a round makes
// no progress: a real error, reported).
Status CreateObjects(duckdb_connection connection) {
  WEIR_RETURN_NOT_OK(Run(connection, "CREATE SCHEMA " + std::string(kPgCatalog)));
  WEIR_RETURN_NOT_OK(Run(connection, "CREATE SCHEMA " + std::string(kInformationSchema)));
  std::vector<std::string> pending;
  const bool ducklake =
      Run(connection, "SELECT 1 FROM __ducklake_metadata_lake.ducklake_schema LIMIT 0").ok();
  for (auto part : {TypeCatalogSql(), FunctionCatalogSql(ducklake), RelationCatalogSql(),
                    InformationSchemaSql()}) {
    pending.insert(pending.end(), part.begin(), part.end());
  }
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

}  // namespace

std::string QualifySchemas(std::string sql) {
  ReplaceAll(sql, "@catalog", std::string(kCatalogDatabase));
  ReplaceAll(sql, "@i.", std::string(kInformationSchema) + ".");
  ReplaceAll(sql, "@.", std::string(kPgCatalog) + ".");
  return sql;
}

Status InstallCatalog(duckdb_connection connection,
                      const std::function<Status(const std::string& path)>& open_also) {
  WEIR_ASSIGN_OR_RAISE(PrivateDirectory directory, PrivateDirectory::Make());
  // Named as the database, so that a database opened on the file itself calls it that too.
  const std::string path =
      (directory.path() / (std::string(kCatalogDatabase) + ".duckdb")).string();
  const std::string file = QuoteLiteral(path);
  const std::string database(kCatalogDatabase);
  WEIR_RETURN_NOT_OK(Run(connection, "ATTACH " + file + " AS " + database));
  Status created = CreateObjects(connection);
  if (created.ok()) created = Run(connection, "CHECKPOINT " + database);
  Status detached = Run(connection, "DETACH " + database);
  WEIR_RETURN_NOT_OK(created);
  WEIR_RETURN_NOT_OK(detached);
  // Views and macros are stored as SQL and bound when a session uses them, so once attached
  // again they still name the lake and DuckDB's catalog functions as created.
  if (open_also) WEIR_RETURN_NOT_OK(open_also(path));
  return Run(connection, "ATTACH " + file + " AS " + database + " (READ_ONLY)");
}

}  // namespace weir::serve::compat
