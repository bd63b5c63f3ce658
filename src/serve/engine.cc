#include "serve/engine.h"

#include <duckdb.h>

#include <algorithm>
#include <list>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "base/sql_quote.h"
#include "serve/compat/compat.h"
#include "serve/compat/names.h"
#include "serve/compat/statement_kind.h"
#include "serve/engine_internal.h"

namespace weir::serve {
namespace {

constexpr size_t kStatementCacheSize = 32;
// How long a writing statement waits for the SQLite catalog's other writers (then 40001).
constexpr std::chrono::milliseconds kWriterLockTimeout{60000};

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
               PreparedColumnName(statement, 0) == "Count" &&
               duckdb_prepared_statement_column_type(statement, 0) == DUCKDB_TYPE_BIGINT);
    default:
      return false;
  }
}

// Approximate bytes a chunk holds (fixed-width values plus string payloads).
size_t ChunkBytes(duckdb_data_chunk chunk, const std::vector<lake::DuckDbLogicalType>& types) {
  const idx_t rows = duckdb_data_chunk_get_size(chunk);
  size_t bytes = 0;
  for (size_t c = 0; c < types.size(); ++c) {
    const duckdb_type id = duckdb_get_type_id(types[c].get());
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

ResultStream::ResultStream(Session* session, lake::DuckDbResult result, bool streaming,
                           std::string tag_prefix)
    : session_(session),
      result_(std::move(result)),
      streaming_(streaming),
      tag_prefix_(std::move(tag_prefix)) {
  if (duckdb_result_return_type(*result_) == DUCKDB_RESULT_TYPE_QUERY_RESULT) {
    const idx_t count = duckdb_column_count(result_.get());
    for (idx_t c = 0; c < count; ++c) {
      duckdb_logical_type type = duckdb_column_logical_type(result_.get(), c);
      types_.emplace_back(type);
      columns_.push_back(
          {duckdb_column_name(result_.get(), c), PgTypeOf(type), ColumnEncoder(type).has_binary()});
    }
  } else {
    changed_ = duckdb_rows_changed(result_.get());
    exhausted_ = true;
  }
  session_->open_streams_.push_back(this);
  if (streaming_ && !exhausted_) session_->streaming_ = this;
}

ResultStream::~ResultStream() {
  buffered_.clear();
  result_ = lake::DuckDbResult();  // before the session's implicit transaction ends
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
  DataChunk chunk(duckdb_fetch_chunk(*result_));
  if (!chunk || duckdb_data_chunk_get_size(chunk.get()) == 0) {
    exhausted_ = true;
    if (duckdb_result_error(result_.get()) != nullptr) {
      Status status = session_->InReadOnlyTerms(ResultError(*result_));
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
    DataChunk chunk(duckdb_fetch_chunk(*result_));
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
  if (duckdb_result_error(result_.get()) != nullptr) {
    return session_->InReadOnlyTerms(ResultError(*result_));
  }
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
  if (appender_ != nullptr && !closed_) duckdb_appender_clear(appender_.get());  // lands nothing
}

Status TableAppender::Error(const std::string& context) {
  const lake::DuckDbErrorData error(duckdb_appender_error_data(appender_.get()));
  const std::string message = duckdb_error_data_has_error(error.get())
                                  ? duckdb_error_data_message(error.get())
                                  : "appender failed";
  const duckdb_error_type type = duckdb_error_data_error_type(error.get());
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", SqlStateOf(type, message),
                         context.empty() ? message : context + ": " + message);
}

Status TableAppender::AppendRow(std::vector<OwnedValue>& row) {
  for (auto& value : row) {
    if (duckdb_append_value(appender_.get(), value.get()) != DuckDBSuccess) return Error("");
  }
  if (duckdb_appender_end_row(appender_.get()) != DuckDBSuccess) return Error("");
  ++rows_;
  return Status::OK();
}

Result<uint64_t> TableAppender::Close() {
  if (duckdb_appender_close(appender_.get()) != DuckDBSuccess) return Error("");
  closed_ = true;
  return rows_;
}

// --- Session ----------------------------------------------------------------------------------

Session::Session(std::unique_ptr<Handles> handles, size_t memory_limit)
    : handles_(std::move(handles)), memory_limit_(memory_limit) {}
Session::~Session() = default;

void Session::SetReadOnly(bool read_only) {
  if (!read_only || read_only_) return;  // a read-only session never becomes writable
  // The session moves to the readers' database before its first statement: what it prepared
  // on the writers' database goes with the old connection.
  handles_->Clear();
  read_only_ = true;
  writer_lock_.reset();
  duckdb_connection conn = nullptr;
  if (duckdb_connect(reader_, &conn) != DuckDBSuccess) return;  // every statement: 53300
  handles_->conn.reset(conn);
  if (!Exec(handles_->conn.get(), "USE lake").ok()) {
    (void)Exec(handles_->conn.get(), "USE " + std::string(compat::kCatalogDatabase));
  }
  if (iceberg_) ResolveIcebergTables(handles_->conn.get());
}

Status Session::InReadOnlyTerms(Status status) const {
  if (!read_only_ || status.ok()) return status;
  const ErrorDetail* detail = GetErrorDetail(status);
  if (detail == nullptr) return status;
  // A read session commits no writes, so it cannot lose a race to another writer: what DuckDB
  // reports there as a transaction failure is a refused write, or DuckLake's aftermath of one:
  // the parallel parts of a maintenance function (ducklake_flush_inlined_data, CHECKPOINT)
  // find their transaction aborted by the refused part, which DuckLake reports as a
  // Transaction or an Invalid Input error, whichever part fails first.
  const bool aftermath =
      detail->code() == "22023" &&
      status.message().find("Current transaction is aborted") != std::string::npos;
  if (detail->code() != "40001" && !aftermath) return status;
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "25006", status.message());
}

Status Session::Connected() const {
  if (handles_->conn != nullptr) return Status::OK();
  return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "53300",
                         "the session has no DuckDB connection");
}

void Session::Interrupt() {
  interrupted_.store(true);
  if (handles_->conn != nullptr) duckdb_interrupt(handles_->conn.get());
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
  return Exec(handles_->conn.get(), "SET VARIABLE " + name + " = " + QuoteLiteral(value));
}

void Session::ClearStatementCache() {
  handles_->cache.clear();
  handles_->parsed.clear();
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
    (void)Exec(handles_->conn.get(), "SELECT error('aborted by a failed COPY')");
    transaction_status_ = 'E';
  }
}

Status Session::EndImplicitTransaction(bool commit) {
  if (!implicit_transaction_) return Status::OK();
  implicit_transaction_ = false;
  Status ended = InReadOnlyTerms(Exec(handles_->conn.get(), commit ? "COMMIT" : "ROLLBACK"));
  write_hold_ = WriterLock::Hold();
  return ended;
}

// Makes room for a new statement: a result still streaming is read into memory first.
Status Session::BeforeStatement() {
  WEIR_RETURN_NOT_OK(Connected());
  if (streaming_ != nullptr) WEIR_RETURN_NOT_OK(streaming_->Buffer());
  return Status::OK();
}

Status Session::RefuseLakeFileWork(const std::string& sql) {
  if (!read_only_) return Status::OK();
  const std::string call = compat::LakeWritingCallOf(sql);
  if (call.empty()) return Status::OK();
  if (transaction_status_ == 'T') {
    (void)Exec(handles_->conn.get(), "SELECT error('aborted by a refused call')");
    transaction_status_ = 'E';
  }
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "42501",
      fmt::format("permission denied: read-only users cannot run {} ({})", call,
                  call == "iceberg_load_table_response"
                      ? "its answer carries the catalog's storage credentials"
                      : "it works on the lake's files before its catalog write could be refused"));
}

Result<std::unique_ptr<ResultStream>> Session::Query(const std::string& statement) {
  WEIR_RETURN_NOT_OK(BeforeStatement());
  auto& cache = handles_->cache;
  for (auto it = cache.begin(); it != cache.end(); ++it) {
    if (it->statement != statement) continue;
    cache.splice(cache.begin(), cache, it);
    WEIR_RETURN_NOT_OK(RefuseLakeFileWork(it->sql));
    return Run(it->prepared.get(), it->sql);
  }
  const std::string sql = compat::RewriteForDuckDb(statement);
  WEIR_RETURN_NOT_OK(RefuseLakeFileWork(sql));
  duckdb_prepared_statement raw = nullptr;
  const bool prepared_ok = duckdb_prepare(handles_->conn.get(), sql.c_str(), &raw) == DuckDBSuccess;
  lake::DuckDbPrepared prepared(raw);
  if (!prepared_ok) {
    Status status = PrepareError(prepared.get());
    if (transaction_status_ == 'T') transaction_status_ = 'E';
    (void)EndImplicitTransaction(false);
    return status;
  }
  auto stream = Run(prepared.get(), sql);
  if (duckdb_prepared_statement_type(prepared.get()) == DUCKDB_STATEMENT_TYPE_SELECT &&
      duckdb_nparams(prepared.get()) == 0) {
    cache.push_front({statement, sql, std::move(prepared)});
    if (cache.size() > kStatementCacheSize) cache.pop_back();
  }
  return stream;
}

Result<std::unique_ptr<ResultStream>> Session::Run(duckdb_prepared_statement statement,
                                                   const std::string& sql) {
  const duckdb_statement_type type = duckdb_prepared_statement_type(statement);
  if (Status counts = WithinProtocolCounts(statement); !counts.ok()) {
    FailTransaction();  // an error ends a transaction block, as any other
    return counts;
  }
  if (type == DUCKDB_STATEMENT_TYPE_SET) {
    // PostgreSQL's settings are SessionSettings' (through Configure); DuckDB's own are not the
    // sessions' whatever the syntax (SET GLOBAL, RESET, PRAGMA x = y): the lock's TimeZone
    // exception serves Configure only.
    (void)EndImplicitTransaction(false);
    if (transaction_status_ == 'T') FailTransaction();
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42501",
                           "permission denied to set parameter: sessions cannot change DuckDB's "
                           "configuration");
  }
  if (type == DUCKDB_STATEMENT_TYPE_DETACH) {
    // DuckDB checks no permission on DETACH; detaching the lake or the compatibility catalog
    // would break every session.
    (void)EndImplicitTransaction(false);
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42501",
                           "permission denied: sessions cannot DETACH databases");
  }
  if (read_only_ && WritesByItsType(type)) {
    // DuckDB would refuse it too (nothing in the readers' database is writable); refusing by
    // type first gives PostgreSQL's error, and keeps read sessions from creating temporary
    // objects, as PostgreSQL's read-only transactions do.
    if (transaction_status_ == 'T') {
      (void)Exec(handles_->conn.get(), "SELECT error('aborted by a refused write')");
      transaction_status_ = 'E';
    }
    return ClassifiedError(
        ErrorClass::kBadData, "sqlstate", "25006",
        fmt::format("cannot execute {} in a read-only transaction", TagOfType(type, sql)));
  }
  // A CALL (DuckLake's maintenance functions) of a read session runs in a transaction of its
  // own, prepared again inside it (DuckLake binds a table function to the transaction it was
  // prepared in) and ended once it ran: a refused write then fails that COMMIT with DuckDB's
  // read-only error, rather than with what DuckLake reports when its binding's transaction is
  // gone.
  lake::DuckDbPrepared in_transaction;
  if (read_only_ && type == DUCKDB_STATEMENT_TYPE_CALL && transaction_status_ == 'I' &&
      !implicit_transaction_ && duckdb_nparams(statement) == 0) {
    WEIR_RETURN_NOT_OK(Exec(handles_->conn.get(), "BEGIN"));
    implicit_transaction_ = true;
    duckdb_prepared_statement again = nullptr;
    const bool prepared =
        duckdb_prepare(handles_->conn.get(), sql.c_str(), &again) == DuckDBSuccess;
    in_transaction.reset(again);
    if (!prepared) {
      Status status = PrepareError(again);
      (void)EndImplicitTransaction(false);
      return status;
    }
    statement = again;
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
  lake::DuckDbResult result;
  const duckdb_state state = streaming ? duckdb_execute_prepared_streaming(statement, result.out())
                                       : duckdb_execute_prepared(statement, result.out());
  if (state != DuckDBSuccess) {
    Status status = InReadOnlyTerms(ResultError(*result));
    // Sessions run with DuckDB's configuration locked: a SET that DuckDB refuses as invalid
    // input is a setting sessions may not change, PostgreSQL's "permission denied to set".
    if (type == DUCKDB_STATEMENT_TYPE_SET &&
        duckdb_result_error_type(result.get()) == DUCKDB_ERROR_INVALID_INPUT) {
      status = ClassifiedError(
          ErrorClass::kBadData, "sqlstate", "42501",
          std::string("permission denied to set parameter: ") + duckdb_result_error(result.get()));
    }
    result = lake::DuckDbResult();
    if (type == DUCKDB_STATEMENT_TYPE_TRANSACTION && transaction_status_ != 'I' &&
        compat::TransactionControlOf(sql) != compat::TransactionControl::kBegin) {
      // A failed COMMIT (one that lost to another writer, or a write refused at commit) has
      // ended the block in DuckDB, as it does in PostgreSQL: the session is idle, and the
      // client's ROLLBACK is a no-op warning.
      transaction_status_ = 'I';
    } else if (transaction_status_ == 'T') {
      transaction_status_ = 'E';
    }
    (void)EndImplicitTransaction(false);
    return status;
  }
  std::string tag;
  switch (type) {
    case DUCKDB_STATEMENT_TYPE_TRANSACTION:
      TrackTransaction(sql, tag);
      break;
    case DUCKDB_STATEMENT_TYPE_SET:
    case DUCKDB_STATEMENT_TYPE_VARIABLE_SET:
    case DUCKDB_STATEMENT_TYPE_PRAGMA:
    case DUCKDB_STATEMENT_TYPE_CREATE:
    case DUCKDB_STATEMENT_TYPE_DROP:
    case DUCKDB_STATEMENT_TYPE_ALTER:
      // Settings and variables are folded into plans when they are bound, and the session's
      // own DDL changes what its queries return: cached statements would go stale.
      ClearStatementCache();
      [[fallthrough]];
    default:
      tag = type != DUCKDB_STATEMENT_TYPE_SELECT &&
                    duckdb_result_return_type(*result) == DUCKDB_RESULT_TYPE_QUERY_RESULT &&
                    !ReturnsRowCount(type)
                ? "SELECT"
                : TagOfType(type, sql);
      break;
  }
  std::unique_ptr<ResultStream> stream(new ResultStream(this, std::move(result), streaming, tag));
  if (streaming_ != stream.get() && type != DUCKDB_STATEMENT_TYPE_TRANSACTION &&
      stream->buffered_.empty()) {
    // Materialised results (DDL, DML, EXPLAIN) are complete: an implicit transaction ends now.
    WEIR_RETURN_NOT_OK(EndImplicitTransaction(true));
  }
  return stream;
}

void Session::TrackTransaction(const std::string& sql, std::string& tag) {
  // BEGIN opens a block; COMMIT/ROLLBACK close it (DuckDB rejects nesting for us).
  switch (compat::TransactionControlOf(sql)) {
    case compat::TransactionControl::kBegin:
      transaction_status_ = 'T';
      tag = "BEGIN";
      return;
    case compat::TransactionControl::kRollback:
      transaction_status_ = 'I';
      tag = "ROLLBACK";
      return;
    default:
      // COMMIT (of a failed block it rolls back, as in PostgreSQL). A transaction statement
      // PostgreSQL could not parse is taken as an end too: outside a block every write takes
      // the writer lock, the safe side.
      tag = transaction_status_ == 'E' ? "ROLLBACK" : "COMMIT";
      transaction_status_ = 'I';
      return;
  }
}

Result<StatementInfo> Session::Prepare(const std::string& name, const std::string& sql) {
  WEIR_RETURN_NOT_OK(BeforeStatement());
  auto& parsed = handles_->parsed;
  for (auto it = parsed.begin(); it != parsed.end(); ++it) {
    if (it->first != sql) continue;
    parsed.splice(parsed.begin(), parsed, it);
    WEIR_RETURN_NOT_OK(RefuseLakeFileWork(it->second->sql));
    ClosePrepared(name);
    handles_->prepared[name] = it->second;
    return it->second->info;
  }
  duckdb_prepared_statement raw = nullptr;
  const std::string rewritten = compat::RewriteForDuckDb(sql);
  WEIR_RETURN_NOT_OK(RefuseLakeFileWork(rewritten));
  const bool prepared_ok =
      duckdb_prepare(handles_->conn.get(), rewritten.c_str(), &raw) == DuckDBSuccess;
  lake::DuckDbPrepared owned(raw);
  if (!prepared_ok) return PrepareError(owned.get());
  WEIR_RETURN_NOT_OK(WithinProtocolCounts(owned.get()));
  ClosePrepared(name);
  auto prepared = std::make_shared<Handles::Prepared>();
  const duckdb_prepared_statement statement = owned.get();
  prepared->statement = std::move(owned);
  prepared->sql = rewritten;
  prepared->info = InfoOf(statement);
  handles_->prepared[name] = prepared;
  if (duckdb_prepared_statement_type(statement) == DUCKDB_STATEMENT_TYPE_SELECT) {
    handles_->parsed.emplace_front(sql, prepared);
    if (handles_->parsed.size() > kStatementCacheSize) handles_->parsed.pop_back();
  }
  return prepared->info;
}

StatementInfo Session::InfoOf(duckdb_prepared_statement statement) {
  StatementInfo info;
  for (idx_t i = 1; i <= duckdb_nparams(statement); ++i) {
    const lake::DuckDbLogicalType type(duckdb_param_logical_type(statement, i));
    info.parameter_types.push_back(type != nullptr ? PgTypeOf(type.get()).oid : 25);
  }
  if (ReturnsRows(statement)) {
    for (idx_t c = 0; c < duckdb_prepared_statement_column_count(statement); ++c) {
      const lake::DuckDbLogicalType type(
          duckdb_prepared_statement_column_logical_type(statement, c));
      info.columns.push_back({PreparedColumnName(statement, c), PgTypeOf(type.get()),
                              ColumnEncoder(type.get()).has_binary()});
    }
  }
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
  return found->second->info;
}

Result<std::unique_ptr<ResultStream>> Session::Execute(const std::string& name,
                                                       const std::vector<OwnedValue>& parameters) {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "26000",
                           "prepared statement \"" + name + "\" does not exist");
  }
  Handles::Prepared& prepared = *found->second;
  duckdb_prepared_statement statement = prepared.statement.get();
  if (parameters.size() != duckdb_nparams(statement)) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "08P01",
                           fmt::format("bind message supplies {} parameters, but the prepared "
                                       "statement requires {}",
                                       parameters.size(), duckdb_nparams(statement)));
  }
  std::string sql = prepared.sql;
  WEIR_RETURN_NOT_OK(BeforeStatement());
  duckdb_clear_bindings(statement);
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (duckdb_bind_value(statement, i + 1, parameters[i].get()) != DuckDBSuccess) {
      (void)EndImplicitTransaction(false);
      return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P02",
                             fmt::format("parameter ${} cannot be bound", i + 1));
    }
  }
  WEIR_ASSIGN_OR_RAISE(auto stream, Run(statement, sql));
  // DuckDB binds a statement again when the tables changed under it (a column added by
  // ingest), and the rows follow; a portal is described from its rows, and a Describe of the
  // statement from now on says what the rows are now.
  if (stream->returns_rows() && !prepared.info.columns.empty()) {
    prepared.info.columns = stream->columns();
  }
  return stream;
}

void Session::ClosePrepared(const std::string& name) {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) return;
  handles_->prepared.erase(found);
}

Result<std::unique_ptr<TableAppender>> Session::OpenAppender(
    const std::string& table, const std::vector<std::string>& columns) {
  std::string list;
  for (const auto& column : columns) list += (list.empty() ? "" : ", ") + column;
  WEIR_RETURN_NOT_OK(BeforeStatement());
  if (read_only_) {
    // DuckDB would refuse the INSERT behind the appender as well, but only once the rows came.
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "25006",
                           "cannot execute COPY FROM in a read-only transaction");
  }
  // The column types come from the table itself.
  duckdb_prepared_statement raw_probe = nullptr;
  const std::string select =
      "SELECT " + (list.empty() ? std::string("*") : list) + " FROM " + table + " LIMIT 0";
  const bool probed =
      duckdb_prepare(handles_->conn.get(), select.c_str(), &raw_probe) == DuckDBSuccess;
  const lake::DuckDbPrepared probe(raw_probe);
  if (!probed) {
    Status status = PrepareError(probe.get());
    (void)EndImplicitTransaction(false);
    return status;
  }
  if (Status counts = WithinProtocolCounts(probe.get()); !counts.ok()) {  // CopyInResponse's count
    (void)EndImplicitTransaction(false);
    return counts;
  }
  if (!implicit_transaction_ && transaction_status_ == 'I') {
    // A COPY lands as a whole or not at all. Its transaction reads the catalog when the first
    // rows are flushed and commits at the end: it holds the writer lock all along.
    interrupted_.store(false);
    WEIR_ASSIGN_OR_RAISE(write_hold_, LockForWrite(true));
    WEIR_RETURN_NOT_OK(Exec(handles_->conn.get(), "BEGIN"));
    implicit_transaction_ = true;
  }
  std::unique_ptr<TableAppender> appender(new TableAppender());
  std::vector<std::string> names;
  std::vector<duckdb_logical_type> types;
  for (idx_t c = 0; c < duckdb_prepared_statement_column_count(probe.get()); ++c) {
    appender->types_.emplace_back(duckdb_prepared_statement_column_logical_type(probe.get(), c));
    types.push_back(appender->types_.back().get());
    names.push_back(fmt::format("c{}", c));
  }
  std::vector<const char*> name_pointers;
  for (const auto& n : names) name_pointers.push_back(n.c_str());
  const std::string insert = "INSERT INTO " + table +
                             (list.empty() ? std::string() : " (" + list + ")") +
                             " SELECT * FROM copied";
  duckdb_appender raw_appender = nullptr;
  const bool created =
      duckdb_appender_create_query(handles_->conn.get(), insert.c_str(), types.size(), types.data(),
                                   "copied", name_pointers.data(), &raw_appender) == DuckDBSuccess;
  appender->appender_.reset(raw_appender);
  if (!created) {
    Status status = appender->Error("COPY " + table);
    (void)EndImplicitTransaction(false);
    return status;
  }
  return appender;
}

}  // namespace weir::serve
