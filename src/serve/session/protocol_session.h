// One authenticated session's state machine: the simple and extended query protocols, COPY in
// both directions, cursors, portals that stream results chunk by chunk, the session's
// PostgreSQL settings (SessionSettings: SET, RESET, DISCARD, ParameterStatus; statement_timeout
// and the idle-session timeout it enforces), its pg_stat_activity entry, the query log and the
// metrics.
//
// Threading: Run() is called on the connection's thread and returns when the session ends.
// Interrupt(), CheckDeadline() and the atomics are used by the server's watchdog and cancel
// requests from other threads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "serve/engine.h"
#include "serve/pgwire/protocol.h"
#include "serve/serve_metrics.h"
#include "serve/session/commands.h"
#include "serve/session/session_settings.h"

namespace weir::serve {

struct SessionOptions {
  std::string user;
  std::string application;
  std::string address;
  std::chrono::milliseconds statement_timeout{0};     // 0 = none; SET statement_timeout
  std::chrono::milliseconds idle_session_timeout{0};  // 0 = none
  bool query_log = true;
  ActivityRegistry* activity = nullptr;  // where pg_stat_activity sees this session
  int32_t pid = 0;                       // its BackendKeyData process id
};

// How the session reaches its client.
struct SessionIo {
  // The next message; nullopt when the peer went away, the server is stopping, or `idle`
  // passed without a byte (0 = no limit). A malformed frame is an error.
  std::function<Result<std::optional<pgwire::Frame>>(std::chrono::milliseconds idle)> read;
  std::function<bool(std::string_view bytes)> write;
  // Whether the last read ended because the idle limit passed.
  std::function<bool()> idle_expired;
};

class ProtocolSession {
 public:
  // `settings`: the session's PostgreSQL settings, startup parameters applied (see server.cc).
  ProtocolSession(Session* session, SessionIo io, SessionOptions options, ServeMetrics* metrics,
                  const std::atomic<bool>* stopping, SessionSettings settings = SessionSettings());
  ~ProtocolSession();

  // Serves messages until Terminate, the peer leaving, the idle timeout or the server stopping;
  // returns the FATAL to send last (empty when none is due).
  std::optional<pgwire::ErrorFields> Run();

  // A cancel request: interrupts the running statement (57014).
  void Cancel();
  // Interrupts a statement running past its deadline; called by the watchdog.
  void CheckDeadline(std::chrono::steady_clock::time_point now);
  // Interrupts whatever runs because the server stops (after the shutdown grace period).
  void Terminate();

 private:
  struct Portal;
  // Simple query.
  Status HandleQuery(const std::string& sql);
  Status RunStatement(const std::string& statement);
  bool AnswerTransactionNoOp(const std::string& statement);
  Status RunCommand(Command& command, Portal* extended);
  Status CopyOut(const CopyCommand& copy);
  Status CopyIn(const CopyCommand& copy);
  Status Declare(const DeclareCommand& declare, Portal* extended);
  Status Fetch(const FetchCommand& fetch, bool describe_rows);
  Status Setting(const SettingCommand& setting, bool send_rows);
  Status Discard(const DiscardCommand& discard, Portal* extended);
  Status Savepoint(const SavepointCommand& savepoint);
  // After a statement: its WARNINGs, its end in pg_stat_activity, and a transaction that ended
  // takes its SET LOCALs (and, rolled back, its SETs) along; `before` is the transaction
  // status before the statement.
  void AfterStatement(char before, const std::string& statement, const Status& status);
  // ParameterStatus for every reported setting that changed (before ReadyForQuery).
  void ReportSettings(pgwire::MessageWriter& writer);
  // WARNINGs the signal functions left for this session's statement.
  void AppendWarnings();
  // The settings the session enforces itself (timeouts) and logs (application_name).
  void SyncOptions();
  // The output settings of new encoders.
  OutputSettings Output() const;
  Status Deallocate(const DeallocateCommand& deallocate);
  void CloseAllStatements();  // of the extended protocol
  // Extended query.
  Status HandleExtended(const pgwire::Frame& message);
  Status Bind(const pgwire::Bind& bind);
  Status Execute(const pgwire::Execute& execute);
  Status DescribePortal(const std::string& name);
  // Results.
  Status StartStream(Portal& portal, Result<std::unique_ptr<ResultStream>> stream);
  // Sends (or with `discard`, skips) up to `limit` rows of the portal; true when it is
  // exhausted. `sent` receives the number of rows taken.
  Result<bool> Pump(Portal& portal, uint64_t limit, uint64_t* sent = nullptr, bool discard = false);
  void SendRowDescription(const Portal& portal);
  void EndTransactionScopedPortals();
  bool Flush();
  // Timeouts and the query log around one statement.
  void Arm();
  void Disarm();
  Status Classify(Status status);
  void LogQuery(const std::string& statement, const Status& status, uint64_t rows);

  Session* session_;
  SessionIo io_;
  SessionOptions options_;
  SessionSettings settings_;
  ServeMetrics* metrics_;
  const std::atomic<bool>* stopping_;
  std::string out_;
  std::map<std::string, std::unique_ptr<Portal>> portals_;  // portals and cursors share names
  std::map<std::string, Command> command_statements_;       // Parse of a server command
  std::map<std::string, std::vector<uint32_t>> declared_types_;
  std::map<std::string, std::string> statement_text_;  // for the query log
  char last_status_ = 'I';
  uint64_t command_rows_ = 0;  // rows of the last server command (COPY, FETCH), for the log
  // Cross-thread.
  std::atomic<int64_t> deadline_ns_{0};  // steady clock; 0 = none
  std::atomic<bool> timed_out_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> terminated_{false};
  std::chrono::steady_clock::time_point started_;
};

}  // namespace weir::serve
