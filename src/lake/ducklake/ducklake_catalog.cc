#include "lake/ducklake/ducklake_catalog.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/retry.h"
#include "base/sql_quote.h"
#include "lake/duckdb_s3.h"
#include "lake/ducklake/ducklake_table.h"

namespace weir::lake::ducklake {
namespace {

// Long enough for any commit of another writer; a retriable error past it.
constexpr std::chrono::milliseconds kWriterLockTimeout{60000};

Result<std::unique_ptr<CatalogDb>> Connect(const CatalogConfig& config) {
  if (config.kind == SqlDialect::kSqlite) {
    const auto parent = std::filesystem::path(config.sqlite_path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    return CatalogDb::OpenSqlite(config.sqlite_path);
  }
  if (config.open_deadline.count() > 0 &&
      config.postgres_conninfo.find("connect_timeout") == std::string::npos) {
    // One attempt never outlasts the start's deadline (a server that never answers).
    return CatalogDb::OpenPostgresWithin(config.postgres_conninfo,
                                         std::min(config.open_deadline, kPostgresConnectTimeout));
  }
  return CatalogDb::OpenPostgres(config.postgres_conninfo);
}

Result<bool> HasCatalog(CatalogDb& db) {
  const char* sql = db.dialect() == SqlDialect::kSqlite
                        ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
                          "'ducklake_metadata'"
                        : "SELECT count(*) FROM information_schema.tables WHERE table_name = "
                          "'ducklake_metadata' AND table_schema = current_schema()";
  WEIR_ASSIGN_OR_RAISE(auto rows, db.Query(sql, {}));
  WEIR_ASSIGN_OR_RAISE(auto count, ToInt(rows.at(0).at(0), "table count"));
  return count > 0;
}

Result<std::string> StoredDataPath(CatalogDb& db) {
  WEIR_ASSIGN_OR_RAISE(auto rows, db.Query("SELECT value FROM ducklake_metadata WHERE key = "
                                           "'data_path' AND scope IS NULL",
                                           {}));
  if (rows.empty() || !rows[0][0]) {
    return ClassifiedError(ErrorClass::kFatal, "ducklake", "bad_catalog",
                           "the DuckLake catalog records no data_path");
  }
  return *rows[0][0];
}

std::string LedgerDdl() {
  return fmt::format(
      "CREATE TABLE IF NOT EXISTS {} (table_uuid VARCHAR NOT NULL, topic VARCHAR NOT NULL, "
      "\"partition\" BIGINT NOT NULL, next_offset BIGINT NOT NULL, snapshot_id BIGINT NOT NULL, "
      "writer VARCHAR, PRIMARY KEY (table_uuid, topic, \"partition\"))",
      kLedgerTable);
}

// Catalog operations (connecting, DDL) back off as every weir retry does; SIGTERM cuts a wait
// short (config.stop).
BackoffPolicy CatalogPolicy(const CatalogConfig& config) {
  return BackoffPolicy{.max_attempts = config.max_attempts};
}

}  // namespace

std::string_view DuckDbTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kBoolean:
      return "BOOLEAN";
    case ColumnType::kInteger:
      return "INTEGER";
    case ColumnType::kBigint:
      return "BIGINT";
    case ColumnType::kFloat:
      return "FLOAT";
    case ColumnType::kDouble:
      return "DOUBLE";
    case ColumnType::kTimestampTz:
      return "TIMESTAMPTZ";
    case ColumnType::kUuid:
      return "UUID";
    case ColumnType::kVariant:
      return "VARIANT";
    default:
      return "VARCHAR";
  }
}

ColumnType FromDuckLakeType(std::string_view name) {
  if (name == "boolean") return ColumnType::kBoolean;
  if (name == "int32") return ColumnType::kInteger;
  if (name == "int64") return ColumnType::kBigint;
  if (name == "float32") return ColumnType::kFloat;
  if (name == "float64") return ColumnType::kDouble;
  if (name == "varchar") return ColumnType::kVarchar;
  if (name == "timestamptz") return ColumnType::kTimestampTz;
  if (name == "uuid") return ColumnType::kUuid;
  if (name == "variant") return ColumnType::kVariant;
  return ColumnType::kOther;
}

Result<CatalogInspection> InspectCatalog(const CatalogConfig& config,
                                         std::chrono::milliseconds timeout) {
  std::unique_ptr<CatalogDb> db;
  if (config.kind == SqlDialect::kSqlite) {
    std::error_code ec;
    if (!std::filesystem::exists(config.sqlite_path, ec)) return CatalogInspection{};
    WEIR_ASSIGN_OR_RAISE(db, CatalogDb::OpenSqliteReadOnly(config.sqlite_path));
  } else {
    WEIR_ASSIGN_OR_RAISE(db, CatalogDb::OpenPostgresWithin(config.postgres_conninfo, timeout));
  }
  CatalogInspection inspection;
  WEIR_ASSIGN_OR_RAISE(inspection.exists, HasCatalog(*db));
  if (inspection.exists) {
    WEIR_ASSIGN_OR_RAISE(inspection.data_path, StoredDataPath(*db));
  }
  if (config.kind == SqlDialect::kSqlite) {
    std::error_code ec;
    const auto parent = std::filesystem::absolute(config.sqlite_path, ec).parent_path();
    if (access(config.sqlite_path.c_str(), W_OK) != 0) {
      inspection.unwritable = "the file is not writable";
    } else if (access(parent.c_str(), W_OK | X_OK) != 0) {
      inspection.unwritable = "its directory " + parent.string() +
                              " is not writable (the write-ahead log is kept there)";
    }
    return inspection;
  }
  WEIR_ASSIGN_OR_RAISE(
      auto rows,
      db->Query(inspection.exists
                    ? "SELECT has_table_privilege('ducklake_snapshot', 'INSERT'), current_user"
                    : "SELECT coalesce(has_schema_privilege(current_schema(), 'CREATE'), false), "
                      "current_user",
                {}));
  if (!ToBool(rows.at(0).at(0))) {
    inspection.unwritable = "role " + rows.at(0).at(1).value_or("?") +
                            (inspection.exists ? " may not INSERT into ducklake_snapshot"
                                               : " may not CREATE tables in the current schema");
  }
  return inspection;
}

namespace {

files::StorageAccess Access(const CatalogConfig& config) {
  return files::StorageAccess(config.s3, config.azure);
}

}  // namespace

DuckLakeCatalog::DuckLakeCatalog(CatalogConfig config, files::ObjectStore store)
    : config_(std::move(config)), store_(std::move(store)) {}
DuckLakeCatalog::~DuckLakeCatalog() = default;

Result<std::unique_ptr<DuckLakeCatalog>> DuckLakeCatalog::Open(const CatalogConfig& config) {
  BackoffPolicy connecting = CatalogPolicy(config);
  connecting.max_elapsed = config.open_deadline;
  WEIR_ASSIGN_OR_RAISE(auto db, Retry(connecting, config.stop, "connecting to the catalog",
                                      [&]() -> Result<std::unique_ptr<CatalogDb>> {
                                        auto connected = Connect(config);
                                        if (!connected.ok())
                                          return FatalAtStartup(connected.status());
                                        return connected;
                                      }));
  WEIR_ASSIGN_OR_RAISE(const bool exists, HasCatalog(*db));
  std::string data_path = config.data_path;
  if (exists) {
    WEIR_ASSIGN_OR_RAISE(data_path, StoredDataPath(*db));
    if (!config.data_path.empty()) {
      WEIR_ASSIGN_OR_RAISE(auto configured,
                           files::ObjectStore::Open(config.data_path, Access(config)));
      if (configured.uri() != data_path) {
        spdlog::warn("the catalog's data path is {}; the configured {} is not used", data_path,
                     configured.uri());
      }
    }
  }
  WEIR_ASSIGN_OR_RAISE(auto store, files::ObjectStore::Open(data_path, Access(config)));
  std::unique_ptr<DuckLakeCatalog> catalog(new DuckLakeCatalog(config, std::move(store)));
  if (config.kind == SqlDialect::kSqlite) {
    WEIR_ASSIGN_OR_RAISE(catalog->writer_lock_,
                         WriterLock::ForPath(SqliteWriterLockPath(config.sqlite_path)));
  }
  if (!exists) {
    // Several processes may start on an empty database at once: one creates the catalog, the
    // others fail on its lock and find the catalog there when they look again. Each attempt
    // takes the locks and gives them back before the retry waits.
    const BackoffPolicy contention{.initial = std::chrono::milliseconds(200),
                                   .multiplier = 1.5,
                                   .cap = std::chrono::milliseconds(2000),
                                   .max_jitter = 1.0,
                                   .max_attempts = config.max_attempts};
    WEIR_RETURN_NOT_OK(Retry(contention, config.stop, "creating the DuckLake catalog",
                             [&] { return catalog->CreateCatalog(*db); }));
  }
  {
    // Creating the ledger table is a write like any other.
    WEIR_ASSIGN_OR_RAISE(const auto hold, catalog->LockForWrite());
    WEIR_RETURN_NOT_OK(CreateIfNotExists(*db, LedgerDdl()));
  }
  return catalog;
}

Status DuckLakeCatalog::CreateCatalog(CatalogDb& db) {
  WEIR_ASSIGN_OR_RAISE(const auto hold, LockForWrite());
  std::lock_guard lock(ddl_mutex_);
  const Status created = AttachEngine(/*create=*/true);
  if (created.ok()) return created;
  WEIR_ASSIGN_OR_RAISE(const bool appeared, HasCatalog(db));
  if (appeared) return Status::OK();
  // Another process holding the database while it creates the catalog is contention.
  return ClassifiedError(ErrorClass::kRetriable, "ducklake", "create_catalog", created.message());
}

Status DuckLakeCatalog::AttachEngine(bool create) {
  if (engine_) return Status::OK();
  DuckDbOptions options;
  options.extension_directory = config_.extension_directory;
  options.extensions = {
      "ducklake", config_.kind == SqlDialect::kSqlite ? "sqlite_scanner" : "postgres_scanner"};
  const bool on_s3 = store_.kind() == files::StorageKind::kS3;
  const bool on_azure = store_.kind() == files::StorageKind::kAzure;
  if (on_s3) {
    for (auto& name : S3Extensions(config_.s3)) options.extensions.push_back(std::move(name));
  }
  if (on_azure) options.extensions.push_back("azure");
  WEIR_ASSIGN_OR_RAISE(auto engine, DuckDbEngine::Open(options));
  if (on_s3) {
    auto secret = engine->Run(CreateS3SecretSql("weir_s3", config_.s3));
    if (!secret.ok()) return WithContext(secret, "setting up S3 access (storage.s3_*)");
  }
  if (on_azure) {
    auto secret = engine->Run(CreateAzureSecretSql(
        "weir_azure", config_.azure, files::AzureAccountOf(config_.azure, store_.uri())));
    if (!secret.ok()) return WithContext(secret, "setting up Azure access (storage.azure_*)");
  }
  const std::string target = config_.kind == SqlDialect::kSqlite
                                 ? "ducklake:sqlite:" + config_.sqlite_path
                                 : "ducklake:postgres:" + config_.postgres_conninfo;
  std::string attach = "ATTACH " + QuoteLiteral(target) + " AS weir_lake";
  if (create) attach += " (DATA_PATH " + QuoteLiteral(store_.uri()) + ")";
  auto attached = engine->Run(attach);
  if (!attached.ok()) return WithContext(attached, "attaching the DuckLake catalog");
  engine_ = std::move(engine);
  return Status::OK();
}

Result<WriterLock::Hold> DuckLakeCatalog::LockForWrite() {
  if (!writer_lock_) return WriterLock::Hold();
  return writer_lock_->Acquire(kWriterLockTimeout);
}

Status DuckLakeCatalog::RunDdl(const std::vector<std::string>& statements) {
  // The locks are taken per attempt, so none is held while the retry waits.
  return Retry(CatalogPolicy(config_), config_.stop, "changing the DuckLake catalog",
               [&]() -> Status {
                 // Attaching may write too (DuckLake brings an older catalog's metadata up to
                 // date).
                 WEIR_ASSIGN_OR_RAISE(const auto hold, LockForWrite());
                 std::lock_guard lock(ddl_mutex_);
                 WEIR_RETURN_NOT_OK(AttachEngine(/*create=*/false));
                 WEIR_RETURN_NOT_OK(engine_->Run("BEGIN"));
                 for (const auto& sql : statements) {
                   auto ran = engine_->Run(sql);
                   if (!ran.ok()) {
                     (void)engine_->Run("ROLLBACK");
                     return ran;
                   }
                 }
                 auto committed = engine_->Run("COMMIT");
                 if (!committed.ok()) (void)engine_->Run("ROLLBACK");
                 return committed;
               });
}

Status DuckLakeCatalog::CheckSpec(const TableSpec& spec, std::string_view setting) const {
  for (const auto& key : spec.partitioning) {
    const auto kind = key.transform.kind;
    if (kind == TransformKind::kBucket || kind == TransformKind::kTruncate) {
      return Status::Invalid(setting, ": DuckLake cannot partition by ", ToString(key),
                             " (it has identity, year, month, day and hour; bucket[N] and "
                             "truncate[W] are Iceberg's)");
    }
  }
  // Sort keys are accepted: the writer sorts each flush's rows by them; DuckLake tables declare
  // no sort order.
  return Status::OK();
}

Result<OpenResult> DuckLakeCatalog::OpenTable(const TableSpec& spec, OpenMode mode) {
  const std::string& schema = spec.schema;
  const std::string& table = spec.table;
  WEIR_ASSIGN_OR_RAISE(auto db, Connect(config_));
  WEIR_ASSIGN_OR_RAISE(auto opened, DuckLakeTable::Load(this, std::move(db), schema, table));
  if (!opened) {
    if (mode != OpenMode::kOpenOrCreate || spec.columns.empty()) {
      return OpenResult{OpenStatus::kMissing, nullptr, ""};
    }
    const std::string name = "weir_lake." + QuoteIdentifier(schema) + "." + QuoteIdentifier(table);
    std::string create = "CREATE TABLE " + name + " (";
    for (size_t i = 0; i < spec.columns.size(); ++i) {
      create += fmt::format("{}{} {}", i ? ", " : "", QuoteIdentifier(spec.columns[i].first),
                            DuckDbTypeName(spec.columns[i].second));
    }
    create += ")";
    std::vector<std::string> ddl = {
        "CREATE SCHEMA IF NOT EXISTS weir_lake." + QuoteIdentifier(schema), create};
    if (!spec.partitioning.empty()) {
      ddl.push_back("ALTER TABLE " + name + " SET PARTITIONED BY " + ToString(spec.partitioning));
    }
    auto created = RunDdl(ddl);
    WEIR_ASSIGN_OR_RAISE(db, Connect(config_));
    WEIR_ASSIGN_OR_RAISE(opened, DuckLakeTable::Load(this, std::move(db), schema, table));
    if (!opened) {
      if (IsStatementRefusal(created)) {
        // Not the catalog failing: DuckDB refused the columns, whose names come from the data.
        return OpenResult{OpenStatus::kColumnsRefused, nullptr,
                          fmt::format("creating {}.{}: {}", schema, table, created.message())};
      }
      WEIR_RETURN_NOT_OK(WithContext(created, fmt::format("creating {}.{}", schema, table)));
      return Status::UnknownError("table ", schema, ".", table, " missing after creation");
    }
    if (created.ok()) {
      spdlog::info("created table {}.{} with {} columns", schema, table, spec.columns.size());
    } else {
      spdlog::info("{}.{} was created by another writer meanwhile", schema, table);
    }
  }
  if (mode != OpenMode::kOpenAsIs) WEIR_RETURN_NOT_OK(opened->CheckPartitioning(spec.partitioning));
  return OpenResult{OpenStatus::kOpened, std::move(opened), ""};
}

Result<std::vector<TableName>> DuckLakeCatalog::ListTables() {
  WEIR_ASSIGN_OR_RAISE(auto db, Connect(config_));
  WEIR_ASSIGN_OR_RAISE(
      auto rows,
      db->Query("SELECT s.schema_name, t.table_name FROM ducklake_table t JOIN ducklake_schema s "
                "ON s.schema_id = t.schema_id WHERE t.end_snapshot IS NULL AND s.end_snapshot IS "
                "NULL ORDER BY s.schema_name, t.table_name",
                {}));
  std::vector<TableName> names;
  for (const auto& row : rows) names.push_back({row[0].value_or(""), row[1].value_or("")});
  std::sort(names.begin(), names.end());  // byte order in either database
  return names;
}

}  // namespace weir::lake::ducklake
