// A DuckLake catalog (spec 1.0, as DuckDB's ducklake extension 1.5 reads and writes it) in
// SQLite or PostgreSQL, and the tables in it.
//
// Division of labour, on purpose: the rare catalog changes (creating the catalog, a schema or
// a table, setting its partitioning, adding columns) go through DuckDB's own ducklake
// extension, so they are exactly what every DuckDB reader expects, including its bookkeeping
// of schema versions. The hot path, appending files in a snapshot together with the offset
// ledger and the fence, is weir's own SQL (ducklake_table.cc), because it must be one
// transaction with the ledger update and DuckDB cannot run foreign SQL inside its commit.
//
// Threading: Open (the catalog's) from one thread; then OpenTable and RunDdl from any
// thread. Each Table has its own catalog connection and is used by one thread at a time. DDL is
// serialised by the catalog's mutex, which is never held while a retry waits.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/writer_lock.h"
#include "files/object_store.h"
#include "lake/catalog.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/catalog_db.h"
#include "lake/table.h"

namespace weir::lake::ducklake {

struct CatalogConfig {
  SqlDialect kind = SqlDialect::kSqlite;
  std::string sqlite_path;        // kSqlite: the catalog file (its directory is created)
  std::string postgres_conninfo;  // kPostgres: a libpq connection string
  std::string data_path;          // where data goes when the catalog is created here
  files::S3Settings s3;
  files::AzureSettings azure;  // an Azure data path (storage.azure_*)
  std::string extension_directory;
  int max_attempts = 10;  // retry budget of catalog operations
  // How long Open keeps trying to connect (0: the attempts alone bound it): a start that
  // cannot reach its catalog says so in this long, not after the whole retry budget.
  std::chrono::milliseconds open_deadline{0};
  // Ends every retry wait of the catalog and its tables at once (SIGTERM).
  std::stop_token stop;
};

// The name of the offset ledger table in the catalog database.
inline constexpr const char* kLedgerTable = "weir_offset_ledger";

class DuckLakeCatalog final : public Catalog {
 public:
  // Connects, creating the catalog (and the ledger table) when the database has none yet.
  static Result<std::unique_ptr<DuckLakeCatalog>> Open(const CatalogConfig& config);
  ~DuckLakeCatalog() override;

  std::string_view format() const override { return "DuckLake"; }
  // DuckLake 1.0 partitions by identity, year, month, day and hour, and has no sort order:
  // bucket[N], truncate[W] and sort keys are refused.
  Status CheckSpec(const TableSpec& spec, std::string_view setting) const override;
  // Opens spec.schema.spec.table; with kOpenOrCreate creates it from spec.columns and
  // spec.partitioning when missing (an unpartitioned live table without data is given the
  // layout; another one partitioned differently is a fatal error naming both layouts).
  Result<OpenResult> OpenTable(const TableSpec& spec, OpenMode mode) override;
  // The catalog's current tables (ducklake_table and ducklake_schema rows not ended); the
  // offset ledger is a table of the catalog database, not of the lake.
  Result<std::vector<TableName>> ListTables() override;

  const files::ObjectStore& store() const { return store_; }
  const CatalogConfig& config() const { return config_; }

  // Runs catalog-changing statements through DuckDB in one transaction (retried on conflict).
  // Statements name the attached lake `weir_lake`.
  Status RunDdl(const std::vector<std::string>& statements);

  // Taken around every write to a SQLite catalog (commits, DDL), so weir's writers in this
  // and other processes (`weir serve` next to `weir ingest`) queue instead of colliding inside
  // SQLite; an empty hold for PostgreSQL, whose transactions need no such help.
  Result<WriterLock::Hold> LockForWrite();

 private:
  DuckLakeCatalog(CatalogConfig config, files::ObjectStore store);
  Status AttachEngine(bool create);
  // One attempt at creating the catalog in `db`; OK when it exists afterwards (made here or by
  // another process meanwhile), retriable when another process holds the database.
  Status CreateCatalog(CatalogDb& db);

  CatalogConfig config_;
  files::ObjectStore store_;
  std::mutex ddl_mutex_;                     // guards engine_; never held while waiting
  std::shared_ptr<WriterLock> writer_lock_;  // SQLite catalogs only
  std::unique_ptr<DuckDbEngine> engine_;     // opened on first DDL
};

// What `weir check` learns of a catalog without changing it.
struct CatalogInspection {
  bool exists = false;    // false: no database file, or no DuckLake catalog in the database yet
  std::string data_path;  // the catalog's data path when it exists
  // Empty when weir may write there (create the catalog, or add snapshots to it); else why not.
  std::string unwritable;
};

// Looks at the configured catalog without creating or changing anything (no file, directory,
// catalog or ledger table), connecting within `timeout`. A missing SQLite file is not an error.
// Writability is judged from privileges (PostgreSQL: INSERT on ducklake_snapshot, or CREATE in
// the current schema) and file permissions (SQLite: the file and its directory, which holds
// the write-ahead log).
Result<CatalogInspection> InspectCatalog(const CatalogConfig& config,
                                         std::chrono::milliseconds timeout);

// The DuckDB type name of a column type.
std::string_view DuckDbTypeName(ColumnType type);
// The column type of a DuckLake type name ("int64", "float64", "varchar", ...).
ColumnType FromDuckLakeType(std::string_view name);

}  // namespace weir::lake::ducklake
