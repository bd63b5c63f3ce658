// Engine::Open: the two DuckDB databases over the lake (the writers' and the readers'), the
// compatibility catalog in both, and the sandbox; Engine::Connect: a session's connection.
#include <duckdb.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lake/ducklake/catalog_db.h"
#include "serve/compat/compat.h"
#include "serve/engine.h"
#include "serve/engine_internal.h"

namespace weir::serve {
namespace {

// The DuckDB secret for a lake on S3 (kept in memory; sessions see it redacted at most).
std::string S3Secret(const LakeAttachment& lake) {
  std::string endpoint = lake.s3_endpoint;
  bool use_ssl = lake.s3_use_ssl;
  if (endpoint.starts_with("http://")) {
    endpoint = endpoint.substr(7);
    use_ssl = false;
  } else if (endpoint.starts_with("https://")) {
    endpoint = endpoint.substr(8);
  }
  std::string secret = "CREATE SECRET weir_lake_s3 (TYPE s3";
  if (!lake.s3_access_key_id.empty()) {
    secret += ", KEY_ID " + QuoteLiteral(lake.s3_access_key_id) + ", SECRET " +
              QuoteLiteral(lake.s3_secret_access_key);
  } else {
    secret += ", PROVIDER credential_chain";
  }
  if (!lake.s3_region.empty()) secret += ", REGION " + QuoteLiteral(lake.s3_region);
  if (!endpoint.empty()) secret += ", ENDPOINT " + QuoteLiteral(endpoint);
  secret += std::string(", USE_SSL ") + (use_ssl ? "true" : "false");
  secret += ", URL_STYLE " + QuoteLiteral(lake.s3_url_style) + ")";
  return secret;
}

// A DuckDB database with extensions from local files only: in memory (the writers'), or the
// file at `path` opened READ_ONLY (the readers').
Status OpenDatabase(const LakeAttachment& lake, const std::string& path,
                    const std::string& temp_directory, duckdb_database* db) {
  duckdb_config config = nullptr;
  duckdb_create_config(&config);
  if (!path.empty()) duckdb_set_config(config, "access_mode", "READ_ONLY");
  if (!temp_directory.empty()) duckdb_set_config(config, "temp_directory", temp_directory.c_str());
  duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  duckdb_set_config(config, "extension_directory", lake.extension_directory.c_str());
  if (!lake.memory_limit.empty()) {
    duckdb_set_config(config, "memory_limit", lake.memory_limit.c_str());
  }
  const std::string threads = std::to_string(lake.threads);
  if (lake.threads > 0) duckdb_set_config(config, "threads", threads.c_str());
  char* error = nullptr;
  const auto opened = duckdb_open_ext(path.empty() ? nullptr : path.c_str(), db, config, &error);
  duckdb_destroy_config(&config);
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
  // come before ATTACH, which refuses an S3 data path without them. Without keys, the default
  // credential chain (environment, instance profile, ...) of the aws extension.
  if (!lake.s3_access_key_id.empty() || !lake.s3_region.empty() || !lake.s3_endpoint.empty()) {
    WEIR_RETURN_NOT_OK(WithContext(
        Exec(conn, std::string("LOAD httpfs; ") +
                       (lake.s3_access_key_id.empty() ? "LOAD aws; " : "") + S3Secret(lake)),
        "setting up S3 access"));
  }
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
  duckdb_result result;
  if (duckdb_query(conn, "SELECT current_setting('temp_directory')", &result) != DuckDBSuccess) {
    Status status = ResultError(result);
    duckdb_destroy_result(&result);
    return status;
  }
  char* value = duckdb_value_varchar(&result, 0, 0);
  std::string directory = value != nullptr ? value : "";
  duckdb_free(value);
  duckdb_destroy_result(&result);
  return directory;
}

// The files sessions may reach: the lake's data path, and a SQLite catalog's files.
Result<std::vector<std::string>> AllowedPaths(duckdb_connection conn, const LakeAttachment& lake) {
  std::vector<std::string> allowed;
  duckdb_result result;
  if (duckdb_query(conn,
                   "SELECT value FROM __ducklake_metadata_lake.ducklake_metadata "
                   "WHERE key = 'data_path' AND scope IS NULL",
                   &result) != DuckDBSuccess) {
    Status status = ResultError(result);
    duckdb_destroy_result(&result);
    return WithContext(status, "reading the lake's data path");
  }
  if (duckdb_row_count(&result) > 0 && !duckdb_value_is_null(&result, 0, 0)) {
    char* path = duckdb_value_varchar(&result, 0, 0);
    allowed.emplace_back(path);
    duckdb_free(path);
  }
  duckdb_destroy_result(&result);
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
  WEIR_RETURN_NOT_OK(OpenDatabase(lake, "", "", &handles->writer));
  std::unique_ptr<Engine> engine(new Engine(std::move(handles)));
  if (!lake.catalog.starts_with("postgres:")) {
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
  WEIR_RETURN_NOT_OK(RegisterActivityFunctions(writer->handles_->conn, engine->activity_.get()));
  // The writers' database first: attaching creates a lake that does not exist yet.
  WEIR_RETURN_NOT_OK(AttachLake(writer->handles_->conn, lake, false));
  std::unique_ptr<Session> reader;
  const auto open_reader = [&](const std::string& catalog_file) -> Status {
    // The readers' database is the catalog file itself, READ_ONLY, so that its default
    // database (what CHECKPOINT and DuckLake's own queries fall back to) is read-only too. It
    // spills where the writers' does: the catalog's directory goes once both have the file open.
    WEIR_ASSIGN_OR_RAISE(const std::string temp, TempDirectory(writer->handles_->conn));
    WEIR_RETURN_NOT_OK(OpenDatabase(lake, catalog_file, temp, &engine->handles_->reader));
    WEIR_ASSIGN_OR_RAISE(reader, engine->Connect(SIZE_MAX, /*read_only=*/true));
    WEIR_RETURN_NOT_OK(RegisterActivityFunctions(reader->handles_->conn, engine->activity_.get()));
    return AttachLake(reader->handles_->conn, lake, true);
  };
  WEIR_RETURN_NOT_OK(compat::InstallCatalog(writer->handles_->conn, open_reader));
  WEIR_ASSIGN_OR_RAISE(const auto allowed, AllowedPaths(writer->handles_->conn, lake));
  WEIR_RETURN_NOT_OK(LockSandbox(writer->handles_->conn, allowed));
  WEIR_RETURN_NOT_OK(LockSandbox(reader->handles_->conn, allowed));
  return engine;
}

Result<std::unique_ptr<Session>> Engine::Connect(size_t memory_limit, bool read_only) {
  auto handles = std::make_unique<Session::Handles>();
  if (duckdb_connect(read_only ? handles_->reader : handles_->writer, &handles->conn) !=
      DuckDBSuccess) {
    return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "53300", "cannot connect");
  }
  (void)Exec(handles->conn, "USE lake");  // absent before the lake is attached
  std::unique_ptr<Session> session(new Session(std::move(handles), memory_limit));
  session->read_only_ = read_only;
  session->reader_ = handles_->reader;
  if (!read_only) session->writer_lock_ = writer_lock_;
  return session;
}

}  // namespace weir::serve
