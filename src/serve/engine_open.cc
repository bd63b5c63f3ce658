// Engine::Open: the two DuckDB databases over the lake (the writers' and the readers'), the
// compatibility catalog in both, and the sandbox; Engine::Connect: a session's connection.
#include <duckdb.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/sql_quote.h"
#include "lake/duckdb_s3.h"
#include "lake/ducklake/catalog_db.h"
#include "serve/compat/compat.h"
#include "serve/compat/names.h"
#include "serve/engine.h"
#include "serve/engine_internal.h"

namespace weir::serve {
namespace {

// A DuckDB database with extensions from local files only: in memory (the writers'), or the
// file at `path` opened READ_ONLY (the readers').
Status OpenDatabase(const LakeAttachment& lake, const std::string& path,
                    const std::string& temp_directory, lake::DuckDbDatabase& db) {
  duckdb_config raw_config = nullptr;
  if (duckdb_create_config(&raw_config) != DuckDBSuccess) {
    return Status::OutOfMemory("DuckDB: cannot create a configuration");
  }
  const lake::DuckDbConfig config(raw_config);
  if (!path.empty()) duckdb_set_config(config.get(), "access_mode", "READ_ONLY");
  if (!temp_directory.empty()) {
    duckdb_set_config(config.get(), "temp_directory", temp_directory.c_str());
  }
  duckdb_set_config(config.get(), "autoinstall_known_extensions", "false");
  duckdb_set_config(config.get(), "autoload_known_extensions", "false");
  duckdb_set_config(config.get(), "extension_directory", lake.extension_directory.c_str());
  if (!lake.memory_limit.empty()) {
    duckdb_set_config(config.get(), "memory_limit", lake.memory_limit.c_str());
  }
  // PostgreSQL's `/` of two integers is an integer (truncated), DuckDB's a double unless told.
  duckdb_set_config(config.get(), "integer_division", "true");
  const std::string threads = std::to_string(lake.threads);
  if (lake.threads > 0) duckdb_set_config(config.get(), "threads", threads.c_str());
  char* error = nullptr;
  duckdb_database raw = nullptr;
  const auto opened =
      duckdb_open_ext(path.empty() ? nullptr : path.c_str(), &raw, config.get(), &error);
  db.reset(raw);
  if (opened == DuckDBSuccess) return Status::OK();
  std::string message = error ? error : "unknown";
  duckdb_free(error);
  return ClassifiedError(ErrorClass::kFatal, "duckdb", "open", "DuckDB: " + message);
}

// Attaches the lake as `lake` and makes it the connection's default. The readers' database
// attaches it READ_ONLY, next to its own database, the compatibility catalog opened READ_ONLY:
// nothing it holds can be written, so DuckDB refuses every write of its sessions (only their
// own temporary objects remain, which serve refuses to create; see Session::Run).
Status AttachLake(duckdb_connection conn, const LakeAttachment& lake, bool read_only) {
  const bool postgres = lake.catalog.starts_with("postgres:");
  // A lake on S3 (which needs a region or an endpoint, as for ingest): httpfs and the secret
  // (kept in memory; sessions see it redacted at most) come before ATTACH, which refuses an S3
  // data path without them. Without keys, the default credential chain (lake/duckdb_s3.h).
  const files::S3Settings& s3 = lake.s3;
  if (!s3.access_key_id.empty() || !s3.region.empty() || !s3.endpoint.empty()) {
    std::string setup;
    for (const auto& extension : lake::S3Extensions(s3)) setup += "LOAD " + extension + "; ";
    WEIR_RETURN_NOT_OK(WithContext(Exec(conn, setup + lake::CreateS3SecretSql("weir_lake_s3", s3)),
                                   "setting up S3 access (storage.s3_*)"));
  }
  // A lake in Azure Blob Storage: the azure extension and its secret (storage.azure_*).
  if (!lake.azure.account_name.empty()) {
    WEIR_RETURN_NOT_OK(WithContext(
        Exec(conn, "LOAD azure; " + lake::CreateAzureSecretSql("weir_lake_azure", lake.azure,
                                                               lake.azure.account_name)),
        "setting up Azure access (storage.azure_*)"));
  }
  if (lake.is_iceberg()) return AttachIceberg(conn, lake, read_only);
  auto attached = Exec(conn, std::string("SET TimeZone = 'UTC'; LOAD ducklake; ") +
                                 (postgres ? "LOAD postgres_scanner; " : "LOAD sqlite_scanner; ") +
                                 "ATTACH " + QuoteLiteral("ducklake:" + lake.catalog) + " AS lake" +
                                 (read_only ? " (READ_ONLY)" : "") + "; USE lake;");
  return attached.ok() ? attached
                       : WithContext(attached, read_only ? "attaching the lake READ_ONLY for "
                                                           "read users"
                                                         : "attaching the lake");
}

// Where the database behind `conn` spills (DuckDB's temp_directory).
Result<std::string> TempDirectory(duckdb_connection conn) {
  lake::DuckDbResult result;
  if (duckdb_query(conn, "SELECT current_setting('temp_directory')", result.out()) !=
      DuckDBSuccess) {
    return ResultError(*result);
  }
  const lake::DuckDbString value(duckdb_value_varchar(result.get(), 0, 0));
  return std::string(value.view());
}

// The files sessions may reach: the lake's data path, and a SQLite catalog's files.
Result<std::vector<std::string>> AllowedPaths(duckdb_connection conn, const LakeAttachment& lake) {
  if (lake.is_iceberg()) return IcebergAllowedPaths(conn, lake);
  std::vector<std::string> allowed;
  lake::DuckDbResult result;
  if (duckdb_query(conn,
                   "SELECT value FROM __ducklake_metadata_lake.ducklake_metadata "
                   "WHERE key = 'data_path' AND scope IS NULL",
                   result.out()) != DuckDBSuccess) {
    return WithContext(ResultError(*result), "reading the lake's data path");
  }
  if (duckdb_row_count(result.get()) > 0 && !duckdb_value_is_null(result.get(), 0, 0)) {
    const lake::DuckDbString path(duckdb_value_varchar(result.get(), 0, 0));
    allowed.emplace_back(path.view());
  }
  if (!lake.catalog.starts_with("postgres:")) {
    const std::string file = lake.catalog.substr(std::string("sqlite:").size());
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) allowed.push_back(file + suffix);
  }
  return allowed;
}

// The sandbox: sessions reach the lake's own files and nothing else on the server (no COPY
// TO/FROM files, no read_csv('/etc/...'), no ATTACH, INSTALL or LOAD), and cannot undo it.
Status LockSandbox(duckdb_connection conn, const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& path : allowed) list += (list.empty() ? "" : ", ") + QuoteLiteral(path);
  // TimeZone stays settable for Session::Configure (a session's PostgreSQL TimeZone is DuckDB's
  // own setting); Session::Run refuses every SET a client sends to DuckDB, so the lock's
  // exception serves weir only.
  return Exec(conn, "SET allowed_directories = [" + list +
                        "]; SET enable_external_access = false; SET allowed_configs = "
                        "['TimeZone']; SET lock_configuration = true");
}

}  // namespace

Engine::Engine(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::Open(const LakeAttachment& lake) {
  auto handles = std::make_unique<Handles>();
  WEIR_RETURN_NOT_OK(OpenDatabase(lake, "", "", handles->writer));
  std::unique_ptr<Engine> engine(new Engine(std::move(handles)));
  engine->iceberg_ = lake.is_iceberg();
  if (lake.is_iceberg()) {
    // Every commit of DuckDB's iceberg extension asserts the table's current snapshot: sessions
    // of this server take turns instead of failing each other's commits; ingest and other
    // engines' commits can still conflict with one (40001).
    engine->writer_lock_ = WriterLock::InProcess("the Iceberg catalog's writers of weir serve");
  } else if (!lake.catalog.starts_with("postgres:")) {
    // Readers must never wait for a writer, and writers of this and other weir processes
    // queue on one lock instead of colliding inside SQLite (see docs/ARCHITECTURE.md).
    const std::string file = lake.catalog.substr(std::string("sqlite:").size());
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
      const Status wal = lake::ducklake::EnsureSqliteWal(file);
      if (!wal.ok()) {
        return ClassifiedError(ErrorClass::kFatal, "sqlite", "journal_mode",
                               "the SQLite catalog cannot be served: " + wal.message());
      }
    }
    WEIR_ASSIGN_OR_RAISE(engine->writer_lock_,
                         WriterLock::ForPath(lake::ducklake::SqliteWriterLockPath(file)));
  } else {
    // PostgreSQL transactions wait for each other, but every DuckLake commit takes the next
    // snapshot id: sessions writing at once lose that race to each other again and again, and
    // DuckLake's own retries (ducklake_max_retry_count) run out. The sessions of this server
    // take turns; ingest and other processes are left to DuckLake's retries.
    engine->writer_lock_ = WriterLock::InProcess("the PostgreSQL catalog's writers of weir serve");
  }
  WEIR_ASSIGN_OR_RAISE(auto writer, engine->Connect());
  // Before the catalog: its pg_stat_activity view reads weir_stat_activity().
  WEIR_RETURN_NOT_OK(
      RegisterActivityFunctions(writer->handles_->conn.get(), engine->activity_.get()));
  // The writers' database first: attaching creates a lake that does not exist yet.
  WEIR_RETURN_NOT_OK(AttachLake(writer->handles_->conn.get(), lake, false));
  std::unique_ptr<Session> reader;
  const auto open_reader = [&](const std::string& catalog_file) -> Status {
    // The readers' database is the catalog file itself, READ_ONLY, so that its default
    // database (what CHECKPOINT and DuckLake's own queries fall back to) is read-only too. It
    // spills where the writers' does: the catalog's directory goes once both have the file open.
    WEIR_ASSIGN_OR_RAISE(const std::string temp, TempDirectory(writer->handles_->conn.get()));
    WEIR_RETURN_NOT_OK(OpenDatabase(lake, catalog_file, temp, engine->handles_->reader));
    WEIR_ASSIGN_OR_RAISE(reader, engine->Connect(SIZE_MAX, /*read_only=*/true));
    WEIR_RETURN_NOT_OK(
        RegisterActivityFunctions(reader->handles_->conn.get(), engine->activity_.get()));
    return AttachLake(reader->handles_->conn.get(), lake, true);
  };
  WEIR_RETURN_NOT_OK(compat::InstallCatalog(writer->handles_->conn.get(), open_reader));
  WEIR_ASSIGN_OR_RAISE(const auto allowed, AllowedPaths(writer->handles_->conn.get(), lake));
  WEIR_RETURN_NOT_OK(LockSandbox(writer->handles_->conn.get(), allowed));
  WEIR_RETURN_NOT_OK(LockSandbox(reader->handles_->conn.get(), allowed));
  return engine;
}

Result<std::unique_ptr<Session>> Engine::Connect(size_t memory_limit, bool read_only) {
  auto handles = std::make_unique<Session::Handles>();
  duckdb_connection conn = nullptr;
  if (duckdb_connect(read_only ? handles_->reader.get() : handles_->writer.get(), &conn) !=
      DuckDBSuccess) {
    return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "53300", "cannot connect");
  }
  handles->conn.reset(conn);
  // Sessions start in the lake; when it has no default schema (an Iceberg catalog without a
  // namespace main), in the read-only compatibility catalog, so that an unqualified write is
  // refused rather than landing in the writers' in-memory database. Both are absent before
  // the lake is attached.
  if (!Exec(handles->conn.get(), "USE lake").ok()) {
    (void)Exec(handles->conn.get(), "USE " + std::string(compat::kCatalogDatabase));
  }
  std::unique_ptr<Session> session(new Session(std::move(handles), memory_limit));
  session->read_only_ = read_only;
  session->reader_ = handles_->reader.get();
  session->iceberg_ = iceberg_;
  if (iceberg_) ResolveIcebergTables(session->handles_->conn.get());
  if (!read_only) session->writer_lock_ = writer_lock_;
  return session;
}

}  // namespace weir::serve
