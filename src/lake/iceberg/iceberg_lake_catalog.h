// weir's Iceberg lake (lake::Catalog): tables in an Iceberg SQL catalog (SQLite — the embedded
// default `weir-lake/catalog.db` next to `weir-lake/warehouse/` — or PostgreSQL) or a REST
// catalog, data on the local file system.
//
// Creating a table: the spec's columns (with `_inserted_at` as timestamptz) get field ids
// 1..n in order (lake::Column::id = Iceberg field id = Parquet field id), the partition spec
// comes from the dataset's partitioning (identity, year, month, day, hour, bucket[N],
// truncate[W]), location `<warehouse>/<namespace>/<table>` (SQL) or the server's (REST).
//
// Threading: thread-safe; every OpenTable makes the table its own catalog connection.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "files/storage_settings.h"
#include "lake/catalog.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/metadata_store.h"
#include "lake/iceberg/rest_catalog.h"

namespace weir::lake::iceberg {

enum class CatalogType { kSql, kRest };

struct IcebergLakeConfig {
  CatalogType type = CatalogType::kSql;
  std::string sqlite_path = "weir-lake/catalog.db";  // SQL on SQLite
  std::string postgres_conninfo;                     // SQL on PostgreSQL when set
  std::string catalog_name = "weir";                 // the SQL catalog's catalog_name
  std::string warehouse = "weir-lake/warehouse";     // SQL: tables' root (directory or URI)
  RestCatalogOptions rest;                           // REST (rest.warehouse: sent to the server)
  files::StorageAccess storage;                      // S3 and Azure credentials and endpoints
  std::stop_token stop;  // ends the waits between connection attempts, never a request
  int max_attempts = 10;
  // How long Open keeps trying to connect (0: the attempts alone bound it).
  std::chrono::milliseconds open_deadline{0};
};

class IcebergLakeCatalog final : public lake::Catalog {
 public:
  // Connects (creating the SQLite file, the catalog tables and the warehouse directory).
  static Result<std::unique_ptr<IcebergLakeCatalog>> Open(const IcebergLakeConfig& config);

  std::string_view format() const override { return "Iceberg"; }
  // Iceberg's transforms; truncate of `_inserted_at` (a timestamp) is refused, and so are
  // sort keys (not written yet).
  Status CheckSpec(const TableSpec& spec, std::string_view setting) const override;
  Result<OpenResult> OpenTable(const TableSpec& spec, OpenMode mode) override;
  // The tables of the catalog's top-level namespaces (weir's schemas; nested namespaces are
  // not tables weir opens).
  Result<std::vector<TableName>> ListTables() override;

  // Where tables are created (SQL): an absolute path or the warehouse URI.
  const std::string& warehouse() const { return warehouse_; }

  // Proves the storage credentials as DuckLake's startup does (files::ObjectStore::Probe: a
  // marker written, read and deleted): the SQL warehouse, a REST warehouse given as a URI,
  // and the location of each existing table among `tables` ({schema, table}). Returns the
  // locations probed; an error names the location and the settings that reach it.
  Result<std::vector<std::string>> ProbeStorage(
      const std::vector<std::pair<std::string, std::string>>& tables);

 private:
  explicit IcebergLakeCatalog(IcebergLakeConfig config);
  // `first`: the start's connection, on which a refused connection is fatal at once.
  Result<std::unique_ptr<MetadataStore>> Connect(std::chrono::milliseconds deadline = {},
                                                 bool first = false);
  Result<std::unique_ptr<MetadataStore>> ConnectOnce();
  // The file system of `location`'s store (one per kind: local, S3, Azure), made once.
  Result<TableIo> IoFor(const std::string& location);
  Status ProbeLocation(const std::string& location);

  IcebergLakeConfig config_;
  std::string warehouse_;
  TableIo io_;  // the warehouse's store (SQL), local for REST
  std::mutex io_mutex_;
  std::map<files::StorageKind, TableIo> io_by_kind_;  // GUARDED_BY(io_mutex_)
};

}  // namespace weir::lake::iceberg
