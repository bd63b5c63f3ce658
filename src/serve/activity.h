// The server's live sessions as pg_stat_activity shows them, and the signals
// pg_cancel_backend / pg_terminate_backend send them. Sessions register at login (pid = the
// BackendKeyData process id) and report each statement's start and end; the DuckDB functions
// behind pg_stat_activity and the signal functions (engine_activity.cc) read it.
//
// Threading: every method may be called from any thread (one mutex). The signal callbacks run
// under it, so a session never goes away while it is being signalled; they must only raise
// flags and interrupt DuckDB.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace weir::serve {

// PostgreSQL 15's refusals of the signal functions to an unprivileged role (read users);
// engine_errors.cc makes them 42501.
inline constexpr const char* kCancelRefused =
    "must be a member of the role whose query is being canceled or member of pg_signal_backend";
inline constexpr const char* kTerminateRefused =
    "must be a member of the role whose process is being terminated or member of "
    "pg_signal_backend";

struct BackendActivity {
  int32_t pid = 0;
  std::string user;
  bool read_only = false;  // a read user: sees other users' sessions without their details
  std::string application;
  std::string address;
  int32_t port = 0;
  // Microseconds since 1970 (UTC); 0 = NULL.
  int64_t backend_start = 0, xact_start = 0, query_start = 0, state_change = 0;
  std::string state = "idle";  // active, idle, idle in transaction, ... (aborted)
  std::string query;           // the running statement, or the last one
};

class ActivityRegistry {
 public:
  struct Signals {
    std::function<void()> cancel;     // as a CancelRequest
    std::function<void()> terminate;  // ends the session with FATAL 57P01
  };
  // A session logged in; `connection_id` is its DuckDB connection's (who calls the functions).
  void Add(const BackendActivity& activity, uint64_t connection_id, Signals signals);
  void Remove(int32_t pid);
  // A statement starts (`in_transaction`: a block was open before it) / ended in `status`
  // ('I', 'T', 'E'), with the application name of the session now.
  void Started(int32_t pid, const std::string& query, bool in_transaction);
  void Finished(int32_t pid, char transaction_status, const std::string& application);

  // The sessions as the caller (by DuckDB connection) may see them; nullopt fields are
  // hidden as PostgreSQL hides them (`query` "<insufficient privilege>").
  struct Row {
    BackendActivity activity;
    bool visible = true;
  };
  std::vector<Row> Snapshot(uint64_t caller_connection) const;

  // Whether the caller's session may use the signal functions (a write user's).
  bool MaySignal(uint64_t caller_connection) const;
  enum class SignalResult { kSent, kNoSuchSession, kRefused };
  SignalResult Cancel(uint64_t caller_connection, int32_t pid);
  SignalResult Terminate(uint64_t caller_connection, int32_t pid);
  // Waits until session `pid` is gone; false at the timeout.
  bool WaitGone(int32_t pid, std::chrono::milliseconds timeout);
  // A WARNING for the session of `caller_connection` (sent after its statement).
  void Warn(uint64_t caller_connection, std::string message);
  std::vector<std::string> TakeWarnings(int32_t pid);

 private:
  struct Entry {
    BackendActivity activity;
    uint64_t connection_id;
    Signals signals;
    std::vector<std::string> warnings;
  };
  const Entry* Caller(uint64_t connection_id) const;  // requires mutex_
  SignalResult Signal(uint64_t caller_connection, int32_t pid, bool terminate);

  mutable std::mutex mutex_;
  std::condition_variable gone_;
  std::map<int32_t, Entry> sessions_;  // GUARDED_BY(mutex_)
};

int64_t NowMicros();

}  // namespace weir::serve
