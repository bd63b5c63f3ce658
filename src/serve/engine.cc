#include "serve/engine.h"

#include <duckdb.h>

#include <cctype>
#include <filesystem>
#include <list>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/text.h"
#include "lake/ducklake/catalog_db.h"
#include "serve/compat/compat.h"

namespace weir::serve {
namespace {

constexpr size_t kStatementCacheSize = 32;
// How long a writing statement waits for the SQLite catalog's other writers (then 40001).
constexpr std::chrono::milliseconds kWriterLockTimeout{60000};

// The SQLSTATE for a DuckDB error type (one table; messages are never matched).
std::string SqlStateOf(duckdb_error_type type) {
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
  };
  for (const auto& [prefix, type] : kPrefixes) {
    if (message.starts_with(prefix)) return type;
  }
  return DUCKDB_ERROR_UNKNOWN_TYPE;
}

// Whether a prepared statement returns rows, known before it runs (for Describe): queries,
// EXPLAIN and CALL do; DML does with RETURNING, when its columns are not DuckDB's single
// BIGINT "Count" of changed rows.
bool ReturnsRows(duckdb_prepared_statement statement) {
  switch (duckdb_prepared_statement_type(statement)) {
    case DUCKDB_STATEMENT_TYPE_SELECT:
    case DUCKDB_STATEMENT_TYPE_EXPLAIN:
    case DUCKDB_STATEMENT_TYPE_CALL:
      return true;
    case DUCKDB_STATEMENT_TYPE_INSERT:
    case DUCKDB_STATEMENT_TYPE_UPDATE:
    case DUCKDB_STATEMENT_TYPE_DELETE:
    case DUCKDB_STATEMENT_TYPE_MERGE_INTO:
      return !(duckdb_prepared_statement_column_count(statement) == 1 &&
               std::string_view(duckdb_prepared_statement_column_name(statement, 0)) == "Count" &&
               duckdb_prepared_statement_column_type(statement, 0) == DUCKDB_TYPE_BIGINT);
    default:
      return false;
  }
}

Status PrepareError(duckdb_prepared_statement statement) {
  const std::string message = duckdb_prepare_error(statement);
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", SqlStateOf(PrepareErrorType(message)),
                         message);
}

Status ResultError(duckdb_result& result) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate",
                         SqlStateOf(duckdb_result_error_type(&result)),
                         duckdb_result_error(&result));
}

// The first keyword of a statement, upper-cased ("" when it starts with something else).
std::string FirstWords(const std::string& sql, int count) {
  std::string words;
  size_t i = 0;
  for (int n = 0; n < count; ++n) {
    while (i < sql.size() && (std::isspace(static_cast<unsigned char>(sql[i])) || sql[i] == '(')) {
      ++i;
    }
    size_t start = i;
    while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_')) {
      ++i;
    }
    if (i == start) break;
    if (!words.empty()) words += ' ';
    for (size_t k = start; k < i; ++k) {
      words += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[k])));
    }
  }
  return words;
}

// PostgreSQL's command tag (without the row count) for DDL: "CREATE TABLE", "DROP VIEW", ...
std::string DdlTag(const std::string& sql, const char* verb) {
  const std::string words = FirstWords(sql, 6);
  for (const char* object :
       {"TABLE", "VIEW", "SCHEMA", "INDEX", "SEQUENCE", "MACRO", "FUNCTION", "TYPE", "SECRET"}) {
    if (words.find(std::string(" ") + object) != std::string::npos) {
      return std::string(verb) + " " + object;
    }
  }
  return verb;
}

// Approximate bytes a chunk holds (fixed-width values plus string payloads).
size_t ChunkBytes(duckdb_data_chunk chunk, const std::vector<duckdb_logical_type>& types) {
  const idx_t rows = duckdb_data_chunk_get_size(chunk);
  size_t bytes = 0;
  for (size_t c = 0; c < types.size(); ++c) {
    const duckdb_type id = duckdb_get_type_id(types[c]);
    if (id == DUCKDB_TYPE_VARCHAR || id == DUCKDB_TYPE_BLOB) {
      duckdb_vector vector = duckdb_data_chunk_get_vector(chunk, c);
      const auto* strings = static_cast<const duckdb_string_t*>(duckdb_vector_get_data(vector));
      for (idx_t r = 0; r < rows; ++r) bytes += 16 + strings[r].value.inlined.length;
    } else {
      bytes += 16 * rows;
    }
  }
  return bytes;
}

}  // namespace

// --- ResultStream -------------------------------------------------------------------------------

ResultStream::ResultStream(Session* session, duckdb_result result, bool streaming,
                           std::string tag_prefix)
    : session_(session),
      result_(result),
      streaming_(streaming),
      tag_prefix_(std::move(tag_prefix)) {
  if (duckdb_result_return_type(result_) == DUCKDB_RESULT_TYPE_QUERY_RESULT) {
    const idx_t count = duckdb_column_count(&result_);
    for (idx_t c = 0; c < count; ++c) {
      duckdb_logical_type type = duckdb_column_logical_type(&result_, c);
      types_.push_back(type);
      columns_.push_back(
          {duckdb_column_name(&result_, c), PgTypeOf(type), ColumnEncoder(type).has_binary()});
    }
  } else {
    changed_ = duckdb_rows_changed(&result_);
    exhausted_ = true;
  }
  session_->open_streams_.push_back(this);
  if (streaming_ && !exhausted_) session_->streaming_ = this;
}

ResultStream::~ResultStream() {
  for (auto& type : types_) duckdb_destroy_logical_type(&type);
  buffered_.clear();
  duckdb_destroy_result(&result_);
  std::erase(session_->open_streams_, this);
  if (session_->streaming_ == this) {
    session_->streaming_ = nullptr;
    (void)session_->EndImplicitTransaction(true);
  }
}

Result<DataChunk> ResultStream::Next() {
  if (!buffered_.empty()) {
    DataChunk chunk = std::move(buffered_.front());
    buffered_.pop_front();
    buffered_bytes_ -= ChunkBytes(chunk.get(), types_);
    rows_ += duckdb_data_chunk_get_size(chunk.get());
    return chunk;
  }
  if (exhausted_) return DataChunk();
  DataChunk chunk(duckdb_fetch_chunk(result_));
  if (!chunk || duckdb_data_chunk_get_size(chunk.get()) == 0) {
    exhausted_ = true;
    if (duckdb_result_error(&result_) != nullptr) {
      Status status = ResultError(result_);
      if (session_->transaction_status_ == 'T') session_->transaction_status_ = 'E';
      if (session_->streaming_ == this) {
        session_->streaming_ = nullptr;
        (void)session_->EndImplicitTransaction(false);
      }
      return status;
    }
    if (session_->streaming_ == this) {
      session_->streaming_ = nullptr;
      WEIR_RETURN_NOT_OK(session_->EndImplicitTransaction(true));
    }
    return DataChunk();
  }
  rows_ += duckdb_data_chunk_get_size(chunk.get());
  return chunk;
}

Status ResultStream::Buffer() {
  while (!exhausted_) {
    DataChunk chunk(duckdb_fetch_chunk(result_));
    if (!chunk || duckdb_data_chunk_get_size(chunk.get()) == 0) {
      exhausted_ = true;
      break;
    }
    buffered_bytes_ += ChunkBytes(chunk.get(), types_);
    buffered_.push_back(std::move(chunk));
    if (session_->BufferedBytes() > session_->memory_limit_) {
      exhausted_ = true;
      buffered_.clear();
      buffered_bytes_ = 0;
      if (session_->streaming_ == this) session_->streaming_ = nullptr;
      (void)session_->EndImplicitTransaction(false);
      return ClassifiedError(
          ErrorClass::kBadData, "sqlstate", "53200",
          fmt::format("out of memory: an open portal or cursor needs more than the session's "
                      "memory limit of {} bytes to be kept while another statement runs",
                      session_->memory_limit_));
    }
  }
  if (session_->streaming_ == this) {
    session_->streaming_ = nullptr;
    WEIR_RETURN_NOT_OK(session_->EndImplicitTransaction(true));
  }
  if (duckdb_result_error(&result_) != nullptr) return ResultError(result_);
  return Status::OK();
}

std::string ResultStream::CommandTag() const {
  // With RETURNING, DML counts the rows it returned (DuckDB reports no changed rows then).
  const uint64_t changed = returns_rows() ? rows_ : changed_;
  if (tag_prefix_ == "SELECT") return fmt::format("SELECT {}", rows_);
  if (tag_prefix_ == "INSERT") return fmt::format("INSERT 0 {}", changed);
  if (tag_prefix_ == "UPDATE" || tag_prefix_ == "DELETE") {
    return fmt::format("{} {}", tag_prefix_, changed);
  }
  return tag_prefix_;
}

// --- TableAppender ------------------------------------------------------------------------------

TableAppender::~TableAppender() {
  if (appender_ != nullptr) {
    if (!closed_) duckdb_appender_clear(appender_);  // a failed COPY lands nothing
    duckdb_appender_destroy(&appender_);
  }
  for (auto& type : types_) duckdb_destroy_logical_type(&type);
}

Status TableAppender::Error(const std::string& context) {
  duckdb_error_data error = duckdb_appender_error_data(appender_);
  const std::string message =
      duckdb_error_data_has_error(error) ? duckdb_error_data_message(error) : "appender failed";
  const duckdb_error_type type = duckdb_error_data_error_type(error);
  duckdb_destroy_error_data(&error);
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", SqlStateOf(type),
                         context.empty() ? message : context + ": " + message);
}

Status TableAppender::AppendRow(std::vector<OwnedValue>& row) {
  for (auto& value : row) {
    if (duckdb_append_value(appender_, value.get()) != DuckDBSuccess) return Error("");
  }
  if (duckdb_appender_end_row(appender_) != DuckDBSuccess) return Error("");
  ++rows_;
  return Status::OK();
}

Result<uint64_t> TableAppender::Close() {
  if (duckdb_appender_close(appender_) != DuckDBSuccess) return Error("");
  closed_ = true;
  return rows_;
}

// --- Engine
// ---------------------------------------------------------------------------------------

struct Engine::Handles {
  duckdb_database db = nullptr;
  ~Handles() {
    if (db != nullptr) duckdb_close(&db);
  }
};

struct Session::Handles {
  duckdb_connection conn = nullptr;
  struct Prepared {
    duckdb_prepared_statement statement = nullptr;
    std::string sql;
    StatementInfo info;
  };
  std::map<std::string, Prepared> prepared;
  // Simple-query SELECTs without parameters, prepared once and reused (most recent first):
  // DuckDB's prepare costs several times its execution for small queries, and DuckDB rebinds a
  // prepared statement by itself when the catalog changed under it.
  std::list<std::pair<std::string, duckdb_prepared_statement>> cache;
  ~Handles() {
    for (auto& [sql, statement] : cache) duckdb_destroy_prepare(&statement);
    for (auto& [name, p] : prepared) duckdb_destroy_prepare(&p.statement);
    if (conn != nullptr) duckdb_disconnect(&conn);
  }
};

Engine::Engine(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
Engine::~Engine() = default;
Session::Session(std::unique_ptr<Handles> handles, size_t memory_limit)
    : handles_(std::move(handles)), memory_limit_(memory_limit) {}
Session::~Session() = default;

namespace {

// Runs setup SQL on a connection (several statements); the first error is returned.
Status Exec(duckdb_connection conn, const std::string& sql) {
  duckdb_result result;
  Status status;
  if (duckdb_query(conn, sql.c_str(), &result) != DuckDBSuccess) status = ResultError(result);
  duckdb_destroy_result(&result);
  return status;
}

std::string QuoteLiteral(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

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

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Open(const LakeAttachment& lake) {
  duckdb_config config = nullptr;
  duckdb_create_config(&config);
  duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  duckdb_set_config(config, "extension_directory", lake.extension_directory.c_str());
  if (!lake.memory_limit.empty()) {
    duckdb_set_config(config, "memory_limit", lake.memory_limit.c_str());
  }
  const std::string threads = std::to_string(lake.threads);
  if (lake.threads > 0) duckdb_set_config(config, "threads", threads.c_str());
  auto handles = std::make_unique<Handles>();
  char* error = nullptr;
  const auto opened = duckdb_open_ext(nullptr, &handles->db, config, &error);
  duckdb_destroy_config(&config);
  if (opened != DuckDBSuccess) {
    std::string message = error ? error : "unknown";
    duckdb_free(error);
    return ClassifiedError(ErrorClass::kFatal, "duckdb", "open", "DuckDB: " + message);
  }
  std::unique_ptr<Engine> engine(new Engine(std::move(handles)));
  const bool postgres = lake.catalog.starts_with("postgres:");
  if (!postgres) {
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
  WEIR_ASSIGN_OR_RAISE(auto setup, engine->Connect());
  duckdb_connection conn = setup->handles_->conn;
  // A lake on S3 (which needs a region or an endpoint, as for ingest): httpfs and the secret
  // come before ATTACH, which refuses an S3 data path without them. Without keys, the default
  // credential chain (environment, instance profile, ...) of the aws extension.
  if (!lake.s3_access_key_id.empty() || !lake.s3_region.empty() || !lake.s3_endpoint.empty()) {
    WEIR_RETURN_NOT_OK(WithContext(
        Exec(conn, std::string("LOAD httpfs; ") +
                       (lake.s3_access_key_id.empty() ? "LOAD aws; " : "") + S3Secret(lake)),
        "setting up S3 access"));
  }
  auto attached =
      Exec(conn, std::string("SET TimeZone = 'UTC'; LOAD ducklake; ") +
                     (postgres ? "LOAD postgres_scanner; " : "LOAD sqlite_scanner; ") + "ATTACH " +
                     QuoteLiteral("ducklake:" + lake.catalog) + " AS lake; USE lake;");
  if (!attached.ok()) return WithContext(attached, "attaching the lake");
  WEIR_RETURN_NOT_OK(compat::InstallCatalog(conn));
  // The sandbox: sessions reach the lake's own files and nothing else on the server (no COPY
  // TO/FROM files, no read_csv('/etc/...'), no ATTACH, INSTALL or LOAD), and cannot undo it.
  std::vector<std::string> allowed;
  {
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
  }
  if (!postgres) {
    const std::string file = lake.catalog.substr(std::string("sqlite:").size());
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) allowed.push_back(file + suffix);
  }
  std::string list;
  for (const auto& path : allowed) list += (list.empty() ? "" : ", ") + QuoteLiteral(path);
  WEIR_RETURN_NOT_OK(Exec(conn, "SET allowed_directories = [" + list +
                                    "]; SET enable_external_access = false; "
                                    "SET lock_configuration = true"));
  return engine;
}

Result<std::unique_ptr<Session>> Engine::Connect(size_t memory_limit) {
  auto handles = std::make_unique<Session::Handles>();
  if (duckdb_connect(handles_->db, &handles->conn) != DuckDBSuccess) {
    return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "53300", "cannot connect");
  }
  (void)Exec(handles->conn, "USE lake");  // absent before the lake is attached
  std::unique_ptr<Session> session(new Session(std::move(handles), memory_limit));
  session->writer_lock_ = writer_lock_;
  return session;
}

// --- Session ----------------------------------------------------------------------------------

void Session::Interrupt() {
  interrupted_.store(true);
  duckdb_interrupt(handles_->conn);
}

Result<WriterLock::Hold> Session::LockForWrite(bool may_commit_write) {
  if (writer_lock_ == nullptr || read_only_ || !may_commit_write) return WriterLock::Hold();
  auto hold = writer_lock_->Acquire(kWriterLockTimeout, [this] { return interrupted_.load(); });
  if (hold.ok()) return hold;
  const ErrorDetail* detail = GetErrorDetail(hold.status());
  const bool cancelled = detail != nullptr && detail->code() == "lock_cancelled";
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", cancelled ? "57014" : "40001",
                         hold.status().message());
}

Status Session::SetVariable(const std::string& name, const std::string& value) {
  return Exec(handles_->conn, "SET VARIABLE " + name + " = " + QuoteLiteral(value));
}

void Session::ClearStatementCache() {
  for (auto& [sql, statement] : handles_->cache) duckdb_destroy_prepare(&statement);
  handles_->cache.clear();
}

size_t Session::BufferedBytes() const {
  size_t bytes = 0;
  for (const ResultStream* stream : open_streams_) bytes += stream->buffered_bytes();
  return bytes;
}

void Session::FailTransaction() {
  if (implicit_transaction_) {
    (void)EndImplicitTransaction(false);
  } else if (transaction_status_ == 'T') {
    // DuckDB aborts a transaction block after a failed statement, as PostgreSQL does.
    (void)Exec(handles_->conn, "SELECT error('aborted by a failed COPY')");
    transaction_status_ = 'E';
  }
}

Status Session::EndImplicitTransaction(bool commit) {
  if (!implicit_transaction_) return Status::OK();
  implicit_transaction_ = false;
  Status ended = Exec(handles_->conn, commit ? "COMMIT" : "ROLLBACK");
  write_hold_ = WriterLock::Hold();
  return ended;
}

// Makes room for a new statement: a result still streaming is read into memory first; a
// read-only session opens its READ ONLY transaction when no block is open.
Status Session::BeforeStatement(const std::string& sql) {
  if (streaming_ != nullptr) WEIR_RETURN_NOT_OK(streaming_->Buffer());
  if (read_only_ && transaction_status_ == 'I' && !implicit_transaction_) {
    const std::string first = FirstWords(sql, 1);
    if (first != "BEGIN" && first != "START" && first != "COMMIT" && first != "END" &&
        first != "ROLLBACK" && first != "ABORT") {
      WEIR_RETURN_NOT_OK(Exec(handles_->conn, "BEGIN TRANSACTION READ ONLY"));
      implicit_transaction_ = true;
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<ResultStream>> Session::Query(const std::string& statement) {
  std::string sql = compat::RewriteForDuckDb(statement);
  if (read_only_) {
    const std::string first = FirstWords(sql, 1);
    if (first == "BEGIN" || first == "START") sql = "BEGIN TRANSACTION READ ONLY";
  }
  WEIR_RETURN_NOT_OK(BeforeStatement(sql));
  auto& cache = handles_->cache;
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (it->first != sql) continue;
    cache.splice(cache.begin(), cache, it);
    return Run(it->second, sql);
  }
  duckdb_prepared_statement prepared = nullptr;
  if (duckdb_prepare(handles_->conn, sql.c_str(), &prepared) != DuckDBSuccess) {
    Status status = PrepareError(prepared);
    duckdb_destroy_prepare(&prepared);
    if (transaction_status_ == 'T') transaction_status_ = 'E';
    (void)EndImplicitTransaction(false);
    return status;
  }
  auto stream = Run(prepared, sql);
  if (duckdb_prepared_statement_type(prepared) == DUCKDB_STATEMENT_TYPE_SELECT &&
      duckdb_nparams(prepared) == 0) {
    cache.emplace_front(sql, prepared);
    if (cache.size() > kStatementCacheSize) {
      duckdb_destroy_prepare(&cache.back().second);
      cache.pop_back();
    }
  } else {
    duckdb_destroy_prepare(&prepared);
  }
  return stream;
}

Result<std::unique_ptr<ResultStream>> Session::Run(duckdb_prepared_statement statement,
                                                   const std::string& sql) {
  const duckdb_statement_type type = duckdb_prepared_statement_type(statement);
  if (type == DUCKDB_STATEMENT_TYPE_DETACH) {
    // DuckDB checks no permission on DETACH; detaching the lake or the compatibility catalog
    // would break every session.
    (void)EndImplicitTransaction(false);
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42501",
                           "permission denied: sessions cannot DETACH databases");
  }
  const bool streaming = type == DUCKDB_STATEMENT_TYPE_SELECT;
  // DuckLake commits an autocommit write at the end of the statement, and a transaction block
  // at its end; both hold the SQLite catalog's writer lock while they run.
  interrupted_.store(false);
  auto hold = LockForWrite(
      !streaming && (transaction_status_ == 'I' || type == DUCKDB_STATEMENT_TYPE_TRANSACTION));
  if (!hold.ok()) {
    if (transaction_status_ == 'T') transaction_status_ = 'E';
    (void)EndImplicitTransaction(false);
    return hold.status();
  }
  duckdb_result result;
  const duckdb_state state = streaming ? duckdb_execute_prepared_streaming(statement, &result)
                                       : duckdb_execute_prepared(statement, &result);
  if (state != DuckDBSuccess) {
    Status status = ResultError(result);
    // Sessions run with DuckDB's configuration locked: a SET that DuckDB refuses as invalid
    // input is a setting sessions may not change, PostgreSQL's "permission denied to set".
    if (type == DUCKDB_STATEMENT_TYPE_SET &&
        duckdb_result_error_type(&result) == DUCKDB_ERROR_INVALID_INPUT) {
      status = ClassifiedError(
          ErrorClass::kBadData, "sqlstate", "42501",
          std::string("permission denied to set parameter: ") + duckdb_result_error(&result));
    }
    duckdb_destroy_result(&result);
    if (type == DUCKDB_STATEMENT_TYPE_TRANSACTION && transaction_status_ != 'I') {
      // A failed COMMIT (one that lost to another writer) has ended the block in DuckDB, as it
      // does in PostgreSQL: the session is idle, and the client's ROLLBACK is a no-op warning.
      transaction_status_ = 'I';
    } else if (transaction_status_ == 'T') {
      transaction_status_ = 'E';
    }
    (void)EndImplicitTransaction(false);
    return status;
  }
  std::string tag;
  switch (type) {
    case DUCKDB_STATEMENT_TYPE_SELECT:
      tag = "SELECT";
      break;
    case DUCKDB_STATEMENT_TYPE_INSERT:
      tag = "INSERT";
      break;
    case DUCKDB_STATEMENT_TYPE_UPDATE:
      tag = "UPDATE";
      break;
    case DUCKDB_STATEMENT_TYPE_DELETE:
      tag = "DELETE";
      break;
    case DUCKDB_STATEMENT_TYPE_CREATE:
      tag = DdlTag(sql, "CREATE");
      break;
    case DUCKDB_STATEMENT_TYPE_DROP:
      tag = DdlTag(sql, "DROP");
      break;
    case DUCKDB_STATEMENT_TYPE_ALTER:
      tag = DdlTag(sql, "ALTER");
      break;
    case DUCKDB_STATEMENT_TYPE_TRANSACTION:
      TrackTransaction(sql, tag);
      break;
    case DUCKDB_STATEMENT_TYPE_SET:
    case DUCKDB_STATEMENT_TYPE_VARIABLE_SET:
      // Settings and variables are folded into plans when they are bound: cached statements
      // that read them would go stale.
      ClearStatementCache();
      tag = "SET";
      break;
    default:
      if (type == DUCKDB_STATEMENT_TYPE_PRAGMA) ClearStatementCache();
      tag = duckdb_result_return_type(result) == DUCKDB_RESULT_TYPE_QUERY_RESULT
                ? "SELECT"
                : FirstWords(sql, 1);
      break;
  }
  std::unique_ptr<ResultStream> stream(new ResultStream(this, result, streaming, tag));
  if (streaming_ != stream.get() && type != DUCKDB_STATEMENT_TYPE_TRANSACTION &&
      stream->buffered_.empty()) {
    // Materialised results (DDL, DML, EXPLAIN) are complete: an implicit transaction ends now.
    WEIR_RETURN_NOT_OK(EndImplicitTransaction(true));
  }
  return stream;
}

void Session::TrackTransaction(const std::string& sql, std::string& tag) {
  // BEGIN opens a block; COMMIT/ROLLBACK close it (DuckDB rejects nesting for us).
  const std::string first = FirstWords(sql, 1);
  if (first == "BEGIN" || first == "START") {
    transaction_status_ = 'T';
    tag = "BEGIN";
  } else if (first == "ROLLBACK" || first == "ABORT") {
    transaction_status_ = 'I';
    tag = "ROLLBACK";
  } else {
    // COMMIT of a failed block rolls it back, as in PostgreSQL.
    tag = transaction_status_ == 'E' ? "ROLLBACK" : "COMMIT";
    transaction_status_ = 'I';
  }
}

Result<StatementInfo> Session::Prepare(const std::string& name, const std::string& sql) {
  if (streaming_ != nullptr) WEIR_RETURN_NOT_OK(streaming_->Buffer());
  duckdb_prepared_statement statement = nullptr;
  const std::string rewritten = compat::RewriteForDuckDb(sql);
  if (duckdb_prepare(handles_->conn, rewritten.c_str(), &statement) != DuckDBSuccess) {
    Status status = PrepareError(statement);
    duckdb_destroy_prepare(&statement);
    return status;
  }
  ClosePrepared(name);
  Handles::Prepared prepared;
  prepared.statement = statement;
  prepared.sql = rewritten;
  for (idx_t i = 1; i <= duckdb_nparams(statement); ++i) {
    duckdb_logical_type type = duckdb_param_logical_type(statement, i);
    prepared.info.parameter_types.push_back(type != nullptr ? PgTypeOf(type).oid : 25);
    if (type != nullptr) duckdb_destroy_logical_type(&type);
  }
  if (ReturnsRows(statement)) {
    for (idx_t c = 0; c < duckdb_prepared_statement_column_count(statement); ++c) {
      duckdb_logical_type type = duckdb_prepared_statement_column_logical_type(statement, c);
      prepared.info.columns.push_back({duckdb_prepared_statement_column_name(statement, c),
                                       PgTypeOf(type), ColumnEncoder(type).has_binary()});
      duckdb_destroy_logical_type(&type);
    }
  }
  StatementInfo info = prepared.info;
  handles_->prepared[name] = std::move(prepared);
  return info;
}

bool Session::HasPrepared(const std::string& name) const {
  return handles_->prepared.contains(name);
}

Result<StatementInfo> Session::Describe(const std::string& name) const {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "26000",
                           "prepared statement \"" + name + "\" does not exist");
  }
  return found->second.info;
}

Result<std::unique_ptr<ResultStream>> Session::Execute(const std::string& name,
                                                       const std::vector<OwnedValue>& parameters) {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "26000",
                           "prepared statement \"" + name + "\" does not exist");
  }
  duckdb_prepared_statement statement = found->second.statement;
  if (parameters.size() != duckdb_nparams(statement)) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "08P01",
                           fmt::format("bind message supplies {} parameters, but the prepared "
                                       "statement requires {}",
                                       parameters.size(), duckdb_nparams(statement)));
  }
  std::string sql = found->second.sql;
  WEIR_RETURN_NOT_OK(BeforeStatement(sql));
  duckdb_clear_bindings(statement);
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (duckdb_bind_value(statement, i + 1, parameters[i].get()) != DuckDBSuccess) {
      (void)EndImplicitTransaction(false);
      return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P02",
                             fmt::format("parameter ${} cannot be bound", i + 1));
    }
  }
  return Run(statement, sql);
}

void Session::ClosePrepared(const std::string& name) {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) return;
  duckdb_destroy_prepare(&found->second.statement);
  handles_->prepared.erase(found);
}

Result<std::unique_ptr<TableAppender>> Session::OpenAppender(
    const std::string& table, const std::vector<std::string>& columns) {
  std::string list;
  for (const auto& column : columns) list += (list.empty() ? "" : ", ") + column;
  WEIR_RETURN_NOT_OK(BeforeStatement("INSERT"));
  // The column types come from the table itself.
  duckdb_prepared_statement probe = nullptr;
  const std::string select =
      "SELECT " + (list.empty() ? std::string("*") : list) + " FROM " + table + " LIMIT 0";
  if (duckdb_prepare(handles_->conn, select.c_str(), &probe) != DuckDBSuccess) {
    Status status = PrepareError(probe);
    duckdb_destroy_prepare(&probe);
    (void)EndImplicitTransaction(false);
    return status;
  }
  if (!implicit_transaction_ && transaction_status_ == 'I') {
    // A COPY lands as a whole or not at all. Its transaction reads the catalog when the first
    // rows are flushed and commits at the end: it holds the writer lock all along.
    interrupted_.store(false);
    WEIR_ASSIGN_OR_RAISE(write_hold_, LockForWrite(true));
    WEIR_RETURN_NOT_OK(Exec(handles_->conn, "BEGIN"));
    implicit_transaction_ = true;
  }
  std::unique_ptr<TableAppender> appender(new TableAppender());
  std::vector<std::string> names;
  for (idx_t c = 0; c < duckdb_prepared_statement_column_count(probe); ++c) {
    appender->types_.push_back(duckdb_prepared_statement_column_logical_type(probe, c));
    names.push_back(fmt::format("c{}", c));
  }
  duckdb_destroy_prepare(&probe);
  std::vector<const char*> name_pointers;
  for (const auto& n : names) name_pointers.push_back(n.c_str());
  const std::string insert = "INSERT INTO " + table +
                             (list.empty() ? std::string() : " (" + list + ")") +
                             " SELECT * FROM copied";
  if (duckdb_appender_create_query(handles_->conn, insert.c_str(), appender->types_.size(),
                                   appender->types_.data(), "copied", name_pointers.data(),
                                   &appender->appender_) != DuckDBSuccess) {
    Status status = appender->Error("COPY " + table);
    (void)EndImplicitTransaction(false);
    return status;
  }
  return appender;
}

}  // namespace weir::serve
