// The Iceberg SQL catalog: the `iceberg_tables` / `iceberg_namespace_properties` tables that
// Iceberg's JdbcCatalog, pyiceberg's SqlCatalog and iceberg-cpp share, on SQLite (the embedded
// default, e.g. weir-lake/catalog.db next to weir-lake/warehouse/) or PostgreSQL.
//
//   iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
//                  previous_metadata_location, iceberg_type)   key: the first three
//   iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)
//
// A namespace is its levels joined with '.'; a namespace exists when it has a property row
// (created with exists=true, as the others do) or a table. A table row only points at the
// current metadata file: the table layer writes metadata files itself and moves the pointer by
// compare-and-swap, `UPDATE ... SET metadata_location = new, previous_metadata_location = old
// WHERE ... AND metadata_location = old`; no row changed is a conflict. A catalog made by an
// older JdbcCatalog/pyiceberg without `iceberg_type` (schema v0) is used as it is.
//
// SQLite: write-ahead logging, and every write under the cross-process writer lock of the
// database file (base/writer_lock.h, the one weir's DuckLake writers use), so writers queue
// rather than meet SQLITE_BUSY. The connection code is the DuckLake catalog's (CatalogDb).
//
// Threading: a SqlCatalog is one connection, used by one thread at a time.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/writer_lock.h"
#include "lake/ducklake/catalog_db.h"
#include "lake/iceberg/catalog.h"

namespace weir::lake::iceberg {

// Reads a metadata file's text given its location. The default reads local paths and file:
// URIs; a caller with an object store passes its own.
using MetadataReader = std::function<Result<std::string>(const std::string& location)>;
Result<std::string> ReadLocalMetadata(const std::string& location);

struct SqlCatalogOptions {
  std::string catalog_name = "weir";  // the catalog_name column: one database, many catalogs
  std::chrono::milliseconds writer_lock_timeout{30'000};  // SQLite's writer lock
  MetadataReader read_metadata = ReadLocalMetadata;
};

class SqlCatalog : public Catalog {
 public:
  // Opens (creating the file and the tables when missing) a SQLite catalog.
  static Result<std::unique_ptr<SqlCatalog>> OpenSqlite(const std::string& path,
                                                        SqlCatalogOptions options = {});
  // Connects to a PostgreSQL catalog (libpq connection string), creating the tables if missing.
  static Result<std::unique_ptr<SqlCatalog>> OpenPostgres(const std::string& conninfo,
                                                          SqlCatalogOptions options = {});

  Status EnsureNamespace(const std::vector<std::string>& levels) override;
  Result<LoadedTable> LoadTable(const TableIdent& ident) override;
  Result<std::vector<TableIdent>> ListTables() override;

  // The table's current metadata location only (no file read). kNotFound when absent.
  Result<std::string> LoadMetadataLocation(const TableIdent& ident);
  // Registers a table whose first metadata file is written. kNotFound when the namespace does
  // not exist, kAlreadyExists when the table does.
  Status CreateTable(const TableIdent& ident, const std::string& metadata_location);
  // Moves the pointer from `expected` to `new_location`: kCommitted, kConflict (the pointer is
  // no longer `expected`, or the table is gone), or kUnknown (the database failed mid-way:
  // read the location back).
  Result<CommitResult> SwapMetadataLocation(const TableIdent& ident, const std::string& expected,
                                            const std::string& new_location);

  bool has_iceberg_type() const { return has_iceberg_type_; }

 private:
  SqlCatalog(std::unique_ptr<ducklake::CatalogDb> db, std::shared_ptr<WriterLock> lock,
             SqlCatalogOptions options)
      : db_(std::move(db)), lock_(std::move(lock)), options_(std::move(options)) {}
  static Result<std::unique_ptr<SqlCatalog>> Finish(std::unique_ptr<ducklake::CatalogDb> db,
                                                    std::shared_ptr<WriterLock> lock,
                                                    SqlCatalogOptions options);
  Result<WriterLock::Hold> LockForWrite();
  Result<bool> NamespaceExists(const std::string& ns);
  std::string TypeFilter() const;

  std::unique_ptr<ducklake::CatalogDb> db_;
  std::shared_ptr<WriterLock> lock_;  // SQLite only
  SqlCatalogOptions options_;
  bool has_iceberg_type_ = true;
};

// "a.b" for the levels {"a", "b"}: the namespace column's form.
std::string NamespaceText(const std::vector<std::string>& levels);

}  // namespace weir::lake::iceberg
