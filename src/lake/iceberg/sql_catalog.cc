#include "lake/iceberg/sql_catalog.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

namespace weir::lake::iceberg {
namespace {

using ducklake::CatalogDb;
using ducklake::SqlValue;

// The shared schema (pyiceberg's sql.py, Iceberg's JdbcUtil V1): VARCHAR lengths as theirs.
constexpr const char* kCreateTables =
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, "
    "metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), "
    "iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))";
constexpr const char* kCreateNamespaceProperties =
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, "
    "namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255) NOT NULL, "
    "property_value VARCHAR(1000), "
    "PRIMARY KEY (catalog_name, namespace, property_key))";

Status NotFound(const std::string& what) {
  return CatalogError(CatalogErrorKind::kNotFound, 0, "", what);
}

}  // namespace

std::string NamespaceText(const std::vector<std::string>& levels) {
  std::string out;
  for (size_t i = 0; i < levels.size(); ++i) out += (i > 0 ? "." : "") + levels[i];
  return out;
}

Result<std::string> ReadLocalMetadata(const std::string& location) {
  std::string path = location;
  if (path.starts_with("file://")) {
    path = path.substr(7);
  } else if (path.starts_with("file:")) {
    path = path.substr(5);
  } else if (path.find("://") != std::string::npos) {
    return Status::NotImplemented("reading metadata at '", location,
                                  "' needs an object store reader");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("metadata file " + location + " cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError("reading ", location);
  return text.str();
}

Result<std::unique_ptr<SqlCatalog>> SqlCatalog::OpenSqlite(const std::string& path,
                                                           SqlCatalogOptions options) {
  WEIR_ASSIGN_OR_RAISE(auto lock, WriterLock::ForPath(ducklake::SqliteWriterLockPath(path)));
  WEIR_ASSIGN_OR_RAISE(auto db, CatalogDb::OpenSqlite(path));
  {
    WEIR_ASSIGN_OR_RAISE(auto hold, lock->Acquire(options.writer_lock_timeout));
    WEIR_RETURN_NOT_OK(ducklake::EnsureSqliteWal(path));
  }
  return Finish(std::move(db), std::move(lock), std::move(options));
}

Result<std::unique_ptr<SqlCatalog>> SqlCatalog::OpenPostgres(const std::string& conninfo,
                                                             SqlCatalogOptions options) {
  WEIR_ASSIGN_OR_RAISE(auto db, CatalogDb::OpenPostgres(conninfo));
  return Finish(std::move(db), nullptr, std::move(options));
}

Result<std::unique_ptr<SqlCatalog>> SqlCatalog::Finish(std::unique_ptr<CatalogDb> db,
                                                       std::shared_ptr<WriterLock> lock,
                                                       SqlCatalogOptions options) {
  if (options.catalog_name.empty()) return Status::Invalid("the catalog name is empty");
  std::unique_ptr<SqlCatalog> catalog(
      new SqlCatalog(std::move(db), std::move(lock), std::move(options)));
  {
    WEIR_ASSIGN_OR_RAISE(auto hold, catalog->LockForWrite());
    // Several processes may create the tables at once on a new PostgreSQL catalog.
    WEIR_RETURN_NOT_OK(ducklake::CreateIfNotExists(*catalog->db_, kCreateTables));
    WEIR_RETURN_NOT_OK(ducklake::CreateIfNotExists(*catalog->db_, kCreateNamespaceProperties));
  }
  // A catalog created by an older writer has no iceberg_type column (schema v0).
  catalog->has_iceberg_type_ =
      catalog->db_->Query("SELECT iceberg_type FROM iceberg_tables LIMIT 0", {}).ok();
  return catalog;
}

Result<WriterLock::Hold> SqlCatalog::LockForWrite() {
  if (lock_ == nullptr) return WriterLock::Hold();
  return lock_->Acquire(options_.writer_lock_timeout);
}

std::string SqlCatalog::TypeFilter() const {
  return has_iceberg_type_ ? " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" : "";
}

Result<std::vector<TableIdent>> SqlCatalog::ListTables() {
  WEIR_ASSIGN_OR_RAISE(auto rows,
                       db_->Query("SELECT table_namespace, table_name FROM iceberg_tables WHERE "
                                  "catalog_name = $1 AND table_namespace NOT LIKE '%.%'" +
                                      TypeFilter(),
                                  {options_.catalog_name}));
  std::vector<TableIdent> tables;
  for (const auto& row : rows) {
    tables.push_back(TableIdent{{row[0].value_or("")}, row[1].value_or("")});
  }
  std::sort(tables.begin(), tables.end(), [](const TableIdent& a, const TableIdent& b) {
    return std::tie(a.namespace_levels, a.name) < std::tie(b.namespace_levels, b.name);
  });
  return tables;
}

Result<bool> SqlCatalog::NamespaceExists(const std::string& ns) {
  WEIR_ASSIGN_OR_RAISE(
      auto rows,
      db_->Query("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = $1 AND "
                 "namespace = $2 UNION ALL SELECT 1 FROM iceberg_tables WHERE catalog_name = $1 "
                 "AND table_namespace = $2 LIMIT 1",
                 {options_.catalog_name, ns}));
  return !rows.empty();
}

Status SqlCatalog::EnsureNamespace(const std::vector<std::string>& levels) {
  if (levels.empty()) return Status::Invalid("an Iceberg namespace needs at least one level");
  const std::string ns = NamespaceText(levels);
  WEIR_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (exists) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(auto hold, LockForWrite());
  return db_
      ->Execute(
          "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
          "property_value) VALUES ($1, $2, 'exists', 'true') ON CONFLICT DO NOTHING",
          {options_.catalog_name, ns})
      .status();
}

Result<std::string> SqlCatalog::LoadMetadataLocation(const TableIdent& ident) {
  WEIR_ASSIGN_OR_RAISE(
      auto rows,
      db_->Query("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND "
                 "table_namespace = $2 AND table_name = $3" +
                     TypeFilter(),
                 {options_.catalog_name, NamespaceText(ident.namespace_levels), ident.name}));
  if (rows.empty() || !rows[0][0].has_value()) {
    return NotFound("no Iceberg table " + ident.ToString() + " in catalog " +
                    options_.catalog_name);
  }
  return *rows[0][0];
}

Result<LoadedTable> SqlCatalog::LoadTable(const TableIdent& ident) {
  LoadedTable table;
  WEIR_ASSIGN_OR_RAISE(table.metadata_location, LoadMetadataLocation(ident));
  auto text = options_.read_metadata(table.metadata_location);
  if (!text.ok()) return WithContext(text.status(), "table " + ident.ToString());
  table.metadata = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (table.metadata.is_discarded()) {
    return CatalogError(CatalogErrorKind::kProtocol, 0, "",
                        "table " + ident.ToString() + ": the metadata file " +
                            table.metadata_location + " is not JSON");
  }
  return table;
}

Status SqlCatalog::CreateTable(const TableIdent& ident, const std::string& metadata_location) {
  const std::string ns = NamespaceText(ident.namespace_levels);
  WEIR_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists)
    return NotFound("no Iceberg namespace " + ns + " in catalog " + options_.catalog_name);
  WEIR_ASSIGN_OR_RAISE(auto hold, LockForWrite());
  std::vector<SqlValue> params = {options_.catalog_name, ns, ident.name, metadata_location};
  std::string sql =
      has_iceberg_type_
          ? "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
            "metadata_location, previous_metadata_location, iceberg_type) VALUES ($1, $2, $3, "
            "$4, NULL, 'TABLE')"
          : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
            "metadata_location, previous_metadata_location) VALUES ($1, $2, $3, $4, NULL)";
  Status inserted = db_->Execute(sql, params).status();
  if (ducklake::IsUniqueConflict(inserted)) {
    return CatalogError(CatalogErrorKind::kAlreadyExists, 0, "",
                        "Iceberg table " + ident.ToString() + " already exists");
  }
  return inserted;
}

Result<CommitResult> SqlCatalog::SwapMetadataLocation(const TableIdent& ident,
                                                      const std::string& expected,
                                                      const std::string& new_location) {
  WEIR_ASSIGN_OR_RAISE(auto hold, LockForWrite());
  auto changed = db_->Execute(
      "UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2 "
      "WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND "
      "metadata_location = $2" +
          TypeFilter(),
      {new_location, expected, options_.catalog_name, NamespaceText(ident.namespace_levels),
       ident.name});
  CommitResult result;
  if (!changed.ok()) {
    if (ClassOf(changed.status()) != ErrorClass::kRetriable) return changed.status();
    result.outcome = CommitOutcome::kUnknown;  // e.g. the connection dropped mid-statement
    result.message = changed.status().message();
    return result;
  }
  if (*changed == 1) {
    result.outcome = CommitOutcome::kCommitted;
  } else {
    result.outcome = CommitOutcome::kConflict;
    result.message = "the metadata location of " + ident.ToString() + " is no longer " + expected;
  }
  return result;
}

}  // namespace weir::lake::iceberg
