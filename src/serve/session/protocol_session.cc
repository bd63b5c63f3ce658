#include "serve/session/protocol_session.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/sql_quote.h"
#include "serve/compat/compat.h"
#include "serve/compat/statement_kind.h"
#include "serve/session/protocol_session_internal.h"

namespace weir::serve {

using pgwire::ErrorFields;
using pgwire::MessageWriter;

namespace {

constexpr size_t kMaxLoggedStatement = 2000;

std::string OneLine(std::string_view text) {
  std::string out(text.substr(0, kMaxLoggedStatement));
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  if (text.size() > kMaxLoggedStatement) out += "...";
  return out;
}

// A statement ended by the server's shutdown ends its session too (FATAL, as PostgreSQL).
ErrorFields Fatal(const Status& status) { return pgwire::ErrorFieldsOf(status, "FATAL"); }

}  // namespace

Status SqlError(const char* sqlstate, std::string message) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", sqlstate, std::move(message));
}

ProtocolSession::ProtocolSession(Session* session, SessionIo io, SessionOptions options,
                                 ServeMetrics* metrics, const std::atomic<bool>* stopping,
                                 SessionSettings settings)
    : session_(session),
      io_(std::move(io)),
      options_(std::move(options)),
      settings_(std::move(settings)),
      metrics_(metrics),
      stopping_(stopping) {
  settings_.set_apply([this](const std::string& sql) { return session_->Configure(sql); });
  settings_.TakeReports();  // the startup's values were reported with AuthenticationOk
}

ProtocolSession::~ProtocolSession() { portals_.clear(); }

void ProtocolSession::Cancel() {
  cancelled_.store(true);
  session_->Interrupt();
}

void ProtocolSession::CheckDeadline(std::chrono::steady_clock::time_point now) {
  const int64_t deadline = deadline_ns_.load();
  if (deadline != 0 && now.time_since_epoch().count() >= deadline && !timed_out_.exchange(true)) {
    session_->Interrupt();
  }
}

void ProtocolSession::Terminate() {
  terminated_.store(true);
  session_->Interrupt();
}

void ProtocolSession::Arm() {
  timed_out_.store(false);
  cancelled_.store(false);
  started_ = std::chrono::steady_clock::now();
  if (options_.statement_timeout.count() > 0) {
    deadline_ns_.store((started_ + options_.statement_timeout).time_since_epoch().count());
  }
}

void ProtocolSession::Disarm() { deadline_ns_.store(0); }

// An interrupted statement says why it was interrupted, as PostgreSQL does.
Status ProtocolSession::Classify(Status status) {
  if (status.ok() || SqlStateOf(status) != "57014") return status;
  if (timed_out_.load()) return SqlError("57014", "canceling statement due to statement timeout");
  if (terminated_.load()) {
    return SqlError("57P01", "terminating connection due to administrator command");
  }
  return SqlError("57014", "canceling statement due to user request");
}

void ProtocolSession::LogQuery(const std::string& statement, const Status& status, uint64_t rows) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (metrics_ != nullptr) {
    metrics_->query_seconds.Observe(seconds);
    const std::string code = status.ok() ? "" : SqlStateOf(status);
    (status.ok()       ? metrics_->queries_ok
     : code == "57014" ? metrics_->queries_cancelled
                       : metrics_->queries_error)
        .Increment();
    if (metrics_->status != nullptr) {
      metrics_->status->StatementFinished(status.ok()       ? observe::QueryOutcome::kOk
                                          : code == "57014" ? observe::QueryOutcome::kCancelled
                                                            : observe::QueryOutcome::kError,
                                          seconds, statement, options_.user);
    }
  }
  if (!options_.query_log) return;
  spdlog::info(
      "query user={} application={} address={} duration_ms={:.3f} rows={} sqlstate={} "
      "statement={}",
      options_.user, options_.application.empty() ? "-" : options_.application, options_.address,
      seconds * 1000, rows, status.ok() ? "00000" : SqlStateOf(status), OneLine(statement));
}

bool ProtocolSession::Flush() {
  if (out_.empty()) return true;
  if (metrics_ != nullptr) metrics_->bytes_sent.Increment(static_cast<double>(out_.size()));
  const bool written = io_.write(out_);
  out_.clear();
  return written;
}

std::optional<ErrorFields> ProtocolSession::Run() {
  bool skipping_to_sync = false;  // after an error in the extended protocol
  while (true) {
    if (stopping_->load()) break;
    auto frame = io_.read(options_.idle_session_timeout);
    if (!frame.ok()) {
      return ErrorFields{"FATAL", "08P01", frame.status().message(), "", "", 0};
    }
    if (!*frame) {
      if (io_.idle_expired()) {
        if (metrics_ != nullptr) metrics_->idle_timeouts.Increment();
        return ErrorFields{"FATAL", "57P05", "terminating connection due to idle-session timeout",
                           "",      "",      0};
      }
      break;
    }
    const pgwire::Frame& message = **frame;
    MessageWriter writer;
    if (message.type == 'X') return std::nullopt;
    // The flag may have been raised while the read waited (a poll woken by this very message
    // does not look at it): a message that arrives after SIGTERM is refused, never run.
    if (stopping_->load()) break;
    if (message.type == 'Q') {
      skipping_to_sync = false;
      auto query = pgwire::ParseQuery(message.body);
      Status ran = query.ok() ? HandleQuery(query->sql) : query.status();
      if (!ran.ok()) {
        if (SqlStateOf(ran) == "57P01") return Fatal(ran);
        writer.ErrorResponse(pgwire::ErrorFieldsOf(ran));
      }
      ReportSettings(writer);
      writer.ReadyForQuery(session_->transaction_status());
      out_ += writer.Take();
      if (!Flush()) return std::nullopt;
      EndTransactionScopedPortals();
      continue;
    }
    if (message.type == 'S') {  // Sync: the end of an extended-protocol batch
      skipping_to_sync = false;
      EndTransactionScopedPortals();
      ReportSettings(writer);
      writer.ReadyForQuery(session_->transaction_status());
      out_ += writer.Take();
      if (!Flush()) return std::nullopt;
      continue;
    }
    if (message.type == 'H') {  // Flush
      if (!Flush()) return std::nullopt;
      continue;
    }
    if (skipping_to_sync) continue;
    Status handled = HandleExtended(message);
    if (!handled.ok()) {
      if (SqlStateOf(handled) == "57P01") return Fatal(handled);
      writer.ErrorResponse(pgwire::ErrorFieldsOf(handled));
      skipping_to_sync = std::string_view("PBDEC").find(message.type) != std::string_view::npos;
      if (!skipping_to_sync) {
        ReportSettings(writer);
        writer.ReadyForQuery(session_->transaction_status());
      }
      out_ += writer.Take();
      if (!Flush()) return std::nullopt;
    }
  }
  if (stopping_->load()) {
    return ErrorFields{"FATAL", "57P01", "terminating connection due to administrator command",
                       "",      "",      0};
  }
  return std::nullopt;
}

// Portals die with their transaction (cursors WITH HOLD live on, read into memory).
void ProtocolSession::EndTransactionScopedPortals() {
  if (session_->transaction_status() != 'I') {
    last_status_ = session_->transaction_status();
    return;
  }
  std::erase_if(portals_, [](const auto& entry) { return !entry.second->hold; });
  last_status_ = 'I';
}

// --- simple query -----------------------------------------------------------------------------

Status ProtocolSession::HandleQuery(const std::string& sql) {
  const std::vector<std::string> statements = compat::SplitStatements(sql);
  if (statements.empty()) {
    MessageWriter writer;
    writer.EmptyQueryResponse();
    out_ += writer.Take();
    return Status::OK();
  }
  for (const std::string& statement : statements) {
    WEIR_RETURN_NOT_OK(RunStatement(statement));
    // A transaction that ended closes its cursors before the next statement.
    if (session_->transaction_status() == 'I' && last_status_ != 'I') {
      EndTransactionScopedPortals();
    }
    last_status_ = session_->transaction_status();
  }
  return Status::OK();
}

// Ending a transaction that is not open, or opening one inside another, is a warning in
// PostgreSQL (DuckDB makes both errors); clients rely on it, e.g. a ROLLBACK "just in case".
bool ProtocolSession::AnswerTransactionNoOp(const std::string& statement) {
  const compat::TransactionControl control = compat::TransactionControlOf(statement);
  const char status = session_->transaction_status();
  const bool ends = control == compat::TransactionControl::kCommit ||
                    control == compat::TransactionControl::kRollback;
  const bool begins = control == compat::TransactionControl::kBegin;
  if (!(ends && status == 'I') && !(begins && status != 'I')) return false;
  MessageWriter writer;
  writer.NoticeResponse(ErrorFields{
      "WARNING", ends ? "25P01" : "25001",
      ends ? "there is no transaction in progress" : "there is already a transaction in progress",
      "", "", 0});
  writer.CommandComplete(begins                                             ? "BEGIN"
                         : control == compat::TransactionControl::kRollback ? "ROLLBACK"
                                                                            : "COMMIT");
  out_ += writer.Take();
  return true;
}

Status ProtocolSession::RunStatement(const std::string& statement) {
  Arm();
  const char before = session_->transaction_status();
  if (options_.activity != nullptr)
    options_.activity->Started(options_.pid, statement, before != 'I');
  uint64_t rows = 0;
  Status status;
  if (AnswerTransactionNoOp(statement)) {
    Disarm();
    AfterStatement(before, statement, status);
    LogQuery(statement, status, 0);
    return status;
  }
  auto command = RecognizeCommand(statement);
  if (!command.ok()) {
    status = command.status();
  } else if (!std::holds_alternative<std::monostate>(*command)) {
    command_rows_ = 0;
    status = RunCommand(*command, nullptr);
    rows = command_rows_;
  } else {
    Portal portal;
    status = StartStream(portal, session_->Query(statement));
    if (status.ok()) {
      if (portal.stream->returns_rows()) SendRowDescription(portal);
      auto done = Pump(portal, std::numeric_limits<uint64_t>::max());
      status = done.status();
      if (status.ok()) {
        AppendWarnings();
        MessageWriter writer;
        writer.CommandComplete(portal.stream->CommandTag());
        out_ += writer.Take();
      }
      rows = portal.stream->rows();
    }
  }
  Disarm();
  status = Classify(status);
  AfterStatement(before, statement, status);
  LogQuery(statement, status, rows);
  return status;
}

Status ProtocolSession::StartStream(Portal& portal, Result<std::unique_ptr<ResultStream>> stream) {
  if (!stream.ok()) return stream.status();
  portal.stream = std::move(*stream);
  portal.encoders.clear();
  portal.binary.clear();
  for (size_t c = 0; c < portal.stream->columns().size(); ++c) {
    portal.encoders.emplace_back(portal.stream->type(c), Output());
    const bool wants_binary =
        portal.binary_cursor || pgwire::FormatAt(portal.result_formats, c) == 1;
    portal.binary.push_back(wants_binary && portal.encoders.back().has_binary());
  }
  return Status::OK();
}

void ProtocolSession::SendRowDescription(const Portal& portal) {
  std::vector<pgwire::FieldDescription> fields;
  const auto& columns = portal.stream->columns();
  for (size_t c = 0; c < columns.size(); ++c) {
    const PgType& type = columns[c].type;
    fields.push_back({columns[c].name, 0, 0, type.oid, type.size, type.modifier,
                      portal.binary[c] ? int16_t{1} : int16_t{0}});
  }
  MessageWriter writer;
  writer.RowDescription(fields);
  out_ += writer.Take();
}

// Moves the portal to its next chunk; false at the end of the result.
static Result<bool> NextChunk(ResultStream& stream, DataChunk& chunk, idx_t& rows, idx_t& next,
                              std::vector<ColumnEncoder>& encoders) {
  chunk.reset();
  WEIR_ASSIGN_OR_RAISE(chunk, stream.Next());
  if (!chunk) return false;
  rows = duckdb_data_chunk_get_size(chunk.get());
  next = 0;
  for (size_t c = 0; c < encoders.size(); ++c) {
    encoders[c].Bind(duckdb_data_chunk_get_vector(chunk.get(), c));
  }
  return true;
}

Result<bool> ProtocolSession::Pump(Portal& portal, uint64_t limit, uint64_t* sent_rows,
                                   bool discard) {
  uint64_t sent = 0;
  if (sent_rows != nullptr) *sent_rows = 0;
  while (sent < limit) {
    if (!portal.chunk || portal.next_row >= portal.chunk_rows) {
      WEIR_ASSIGN_OR_RAISE(bool more, NextChunk(*portal.stream, portal.chunk, portal.chunk_rows,
                                                portal.next_row, portal.encoders));
      if (!more) return true;
    }
    const idx_t take =
        static_cast<idx_t>(std::min<uint64_t>(limit - sent, portal.chunk_rows - portal.next_row));
    if (!discard) {
      AppendDataRows(portal.encoders, portal.binary, portal.chunk.get(), portal.next_row,
                     portal.next_row + take, out_);
      if (metrics_ != nullptr) metrics_->rows_sent.Increment(static_cast<double>(take));
    }
    portal.next_row += take;
    sent += take;
    if (sent_rows != nullptr) *sent_rows = sent;
    if (out_.size() >= kFlushBytes && !Flush()) {
      return SqlError("08006", "the client went away while rows were being sent");
    }
  }
  // Exactly `limit` rows sent: the portal is exhausted only if nothing is left.
  if (portal.chunk && portal.next_row < portal.chunk_rows) return false;
  WEIR_ASSIGN_OR_RAISE(bool more, NextChunk(*portal.stream, portal.chunk, portal.chunk_rows,
                                            portal.next_row, portal.encoders));
  return !more;
}

// --- server commands ----------------------------------------------------------------------------

Status ProtocolSession::RunCommand(Command& command, Portal* extended) {
  if (auto* copy = std::get_if<CopyCommand>(&command)) {
    if (extended != nullptr) {
      return SqlError("0A000", "COPY is supported in the simple query protocol only");
    }
    return copy->from_stdin ? CopyIn(*copy) : CopyOut(*copy);
  }
  if (auto* declare = std::get_if<DeclareCommand>(&command)) return Declare(*declare, extended);
  if (auto* fetch = std::get_if<FetchCommand>(&command)) return Fetch(*fetch, extended == nullptr);
  if (auto* close = std::get_if<CloseCommand>(&command)) {
    if (close->all) {
      std::erase_if(portals_, [](const auto& entry) { return entry.second->cursor; });
    } else {
      auto found = portals_.find(close->name);
      if (found == portals_.end() || !found->second->cursor) {
        return SqlError("34000", fmt::format("cursor \"{}\" does not exist", close->name));
      }
      portals_.erase(found);
    }
    MessageWriter writer;
    writer.CommandComplete(close->all ? "CLOSE CURSOR ALL" : "CLOSE CURSOR");
    out_ += writer.Take();
    return Status::OK();
  }
  if (auto* deallocate = std::get_if<DeallocateCommand>(&command)) {
    return Deallocate(*deallocate);
  }
  if (auto* setting = std::get_if<SettingCommand>(&command)) {
    return Setting(*setting, extended == nullptr);
  }
  if (auto* discard = std::get_if<DiscardCommand>(&command)) return Discard(*discard, extended);
  if (auto* savepoint = std::get_if<SavepointCommand>(&command)) return Savepoint(*savepoint);
  return SqlError("XX000", "unknown server command");
}

// DEALLOCATE closes the extended protocol's named statements (psycopg sends DEALLOCATE ALL after
// a rollback once it has prepared statements); a name the protocol does not know is left to
// DuckDB, whose SQL-level PREPARE it may be.
void ProtocolSession::CloseAllStatements() {
  for (const auto& [name, text] : statement_text_) session_->ClosePrepared(name);
  statement_text_.clear();
  command_statements_.clear();
  declared_types_.clear();
}

Status ProtocolSession::Deallocate(const DeallocateCommand& deallocate) {
  MessageWriter writer;
  if (deallocate.all) {
    CloseAllStatements();
    writer.CommandComplete("DEALLOCATE ALL");
  } else if (statement_text_.contains(deallocate.name)) {
    session_->ClosePrepared(deallocate.name);
    statement_text_.erase(deallocate.name);
    command_statements_.erase(deallocate.name);
    declared_types_.erase(deallocate.name);
    writer.CommandComplete("DEALLOCATE");
  } else {
    WEIR_RETURN_NOT_OK(session_->Query("DEALLOCATE " + QuoteIdentifier(deallocate.name)).status());
    writer.CommandComplete("DEALLOCATE");
  }
  out_ += writer.Take();
  return Status::OK();
}

Status ProtocolSession::Declare(const DeclareCommand& declare, Portal* extended) {
  if (!declare.hold && session_->transaction_status() == 'I') {
    return SqlError("25P01", "DECLARE CURSOR can only be used in transaction blocks");
  }
  if (declare.scroll) {
    return SqlError("0A000", "SCROLL cursors are not supported; cursors only scan forward");
  }
  if (portals_.contains(declare.name)) {
    return SqlError("42P03", fmt::format("cursor \"{}\" already exists", declare.name));
  }
  auto cursor = std::make_unique<Portal>();
  cursor->cursor = true;
  cursor->hold = declare.hold;
  cursor->binary_cursor = declare.binary;
  if (extended != nullptr && extended->parameters_bound) {
    // Parameters of an extended-protocol DECLARE were bound to its query's statement.
    WEIR_RETURN_NOT_OK(
        StartStream(*cursor, session_->Execute(extended->statement, extended->parameters)));
  } else {
    WEIR_RETURN_NOT_OK(StartStream(*cursor, session_->Query(declare.query)));
  }
  portals_[declare.name] = std::move(cursor);
  MessageWriter writer;
  writer.CommandComplete("DECLARE CURSOR");
  out_ += writer.Take();
  return Status::OK();
}

Status ProtocolSession::Fetch(const FetchCommand& fetch, bool describe_rows) {
  auto found = portals_.find(fetch.name);
  if (found == portals_.end() || !found->second->cursor) {
    return SqlError("34000", fmt::format("cursor \"{}\" does not exist", fetch.name));
  }
  if (!fetch.forward) {
    return SqlError("55000", "cursor can only scan forward");
  }
  Portal& cursor = *found->second;
  if (!fetch.move && describe_rows) SendRowDescription(cursor);
  const auto count = static_cast<uint64_t>(std::max<int64_t>(fetch.count, 0));
  uint64_t taken = 0;
  if (!cursor.done) {
    auto done = Pump(cursor, count, &taken, /*discard=*/fetch.move);
    WEIR_RETURN_NOT_OK(done.status());
    cursor.done = *done;
  }
  command_rows_ = taken;
  MessageWriter writer;
  writer.CommandComplete(fmt::format("{} {}", fetch.move ? "MOVE" : "FETCH", taken));
  out_ += writer.Take();
  return Status::OK();
}

}  // namespace weir::serve
