// The PostgreSQL wire endpoint: accepts connections, negotiates TLS, authenticates with
// SCRAM-SHA-256 and runs a session state machine per connection on the Engine.
//
// Threading: Start spawns an accept thread and a watchdog; each connection runs on its own
// thread with its own engine Session, joined by the watchdog within 20 ms of its end (so a
// long-running server holds no thread of a finished connection). Stop closes the listener and
// ends every session with FATAL 57P01.
// Shutdown begins when the stop flag is raised (by Stop, or earlier by a signal handler, see
// ServerOptions::stop_flag): from then on a message a session reads is answered with FATAL
// 57P01 instead of being run, a statement already running gets the grace period.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/backoff.h"
#include "base/scoped_fd.h"
#include "base/status.h"
#include "observe/metrics_registry.h"
#include "observe/status_model.h"
#include "serve/auth/scram.h"
#include "serve/auth/tls.h"
#include "serve/engine.h"
#include "serve/listener.h"
#include "serve/serve_metrics.h"

namespace weir::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";  // an IPv4 or IPv6 address or a host name (see listener.h)
  int port = 5432;                 // 0 picks a free port
  std::string cert_path, key_path;
  bool require_tls = true;
  std::map<std::string, auth::ScramVerifier> users;
  // One deadline from accept for the TLS handshake and every read and write before
  // authentication (PostgreSQL's authentication_timeout).
  std::chrono::milliseconds authentication_timeout{60000};
  // After authentication, a write that makes no progress for this long ends the connection
  // (a client that stops reading its results); 0 = none.
  std::chrono::milliseconds send_timeout{60000};
  size_t max_message_bytes = 64 << 20;
  int max_connections = 100;        // in total; more are answered with FATAL 53300
  int max_connections_per_ip = 20;  // per client address; likewise
  int max_failed_logins = 5;        // per address within ban_window; then banned
  std::chrono::seconds ban_window{60};
  std::chrono::seconds ban_duration{300};
  std::map<std::string, std::string> roles;           // user -> "read" | "write" (absent: write)
  std::chrono::milliseconds statement_timeout{0};     // default of SET statement_timeout
  std::chrono::milliseconds idle_session_timeout{0};  // 0 = sessions may idle forever
  std::chrono::seconds shutdown_timeout{30};          // grace for running statements at Stop
  size_t session_memory_limit = 256 << 20;            // bytes of buffered results per session
  bool query_log = true;                              // one log line per statement
  observe::MetricsRegistry* registry = nullptr;       // where the metrics go (else a private one)
  observe::ServeStatus* status = nullptr;  // fed for /status (optional; outlives the server)
  // The shutdown flag, raised by Stop. A SIGTERM handler raises it directly (a lock-free
  // atomic store is async-signal-safe), so sessions stop taking statements the moment the
  // signal arrives rather than when the thread that calls Stop gets to it. Must outlive the
  // server; null: the server's own.
  std::atomic<bool>* stop_flag = nullptr;
};

class ProtocolSession;

class Server {
 public:
  static Result<std::unique_ptr<Server>> Make(ServerOptions options, Engine* engine);
  ~Server();

  Status Start();
  void Stop();
  // Replaces the users and their roles (a reloaded users file): logins from now on see them;
  // sessions already open keep theirs. Any thread.
  void SetUsers(std::map<std::string, auth::ScramVerifier> users,
                std::map<std::string, std::string> roles);
  int port() const { return port_; }
  // The addresses serve.host stands for, each listened on (after Start).
  const std::vector<std::string>& addresses() const { return addresses_; }

 private:
  Server(ServerOptions options, Engine* engine);
  void AcceptLoop();
  // After an accept() error: counts it, warns once per burst, and waits (interruptibly by
  // Stop) for the next delay of `backoff`, so a listener that cannot accept never spins.
  void BackOffAccepting(int error, int burst, Backoff& backoff);
  // `banned`: the FATAL to answer once TLS and the startup message are through (a banned
  // client's libpq shows no error sent before TLS).
  void Serve(int fd, const std::string& ip, std::chrono::steady_clock::time_point accepted,
             const std::optional<std::string>& banned);
  // Admission at accept, before the first byte is read: bans and connection caps. Empty when
  // admitted (the connection holds a slot until Release), else the SQLSTATE and message of the
  // FATAL to answer with.
  // A banned address within the caps is admitted with `*banned` set: its connection is told
  // why after TLS, where a client can read it.
  std::optional<std::pair<std::string, std::string>> Admit(const std::string& ip,
                                                           std::optional<std::string>* banned);
  void RecordFailedLogin(const std::string& ip);
  void Release(const std::string& ip);
  // Answers a refused connection with one non-blocking FATAL and leaves it to linger.
  void Refuse(ScopedFd fd, const std::string& sqlstate, const std::string& message);
  void DrainRefused(bool all);  // closes the lingering refusals that are done (or all of them)
  void Watchdog();              // statement deadlines, and reaping finished connection threads
  void ReapFinished();          // joins the connection threads that have ended

  ServerOptions options_;  // users and roles GUARDED_BY(users_mutex_)
  std::mutex users_mutex_;
  Engine* engine_;
  auth::SslContextPtr tls_context_;
  std::string mock_secret_;             // salts of unknown users (see ScramServer::ForUnknownUser)
  std::unique_ptr<Listener> listener_;  // from Start until Stop
  int port_ = 0;
  std::vector<std::string> addresses_;
  std::atomic<bool> own_stop_flag_{false};
  std::atomic<bool>* stopping_;  // options_.stop_flag or &own_stop_flag_
  std::atomic<bool> stopped_{false};
  std::atomic<bool> abort_writes_{false};  // raised past the shutdown grace: writes give up
  std::mutex stop_mutex_;                  // with stop_wakeup_: cuts the accept backoff short
  std::condition_variable stop_wakeup_;    // notified by Stop
  std::atomic<bool> watchdog_stop_{false};
  std::thread watchdog_;
  observe::MetricsRegistry own_registry_;
  std::unique_ptr<ServeMetrics> metrics_;
  std::thread accept_thread_;
  std::mutex mutex_;
  std::map<uint64_t, std::thread> threads_;  // GUARDED_BY(mutex_)
  std::vector<uint64_t> finished_;  // threads_ keys whose thread has ended; GUARDED_BY(mutex_)
  uint64_t next_thread_id_ = 0;     // GUARDED_BY(mutex_)
  std::map<std::pair<int32_t, int32_t>, ProtocolSession*> live_;  // GUARDED_BY(mutex_)
  std::atomic<int32_t> next_process_id_{1000};
  int connections_ = 0;                            // GUARDED_BY(mutex_)
  std::map<std::string, int> connections_per_ip_;  // GUARDED_BY(mutex_)
  std::map<std::string, std::vector<std::chrono::steady_clock::time_point>> failures_;  // ditto
  std::map<std::string, std::chrono::steady_clock::time_point> banned_until_;           // ditto
  struct Lingering {
    ScopedFd fd;
    std::chrono::steady_clock::time_point close_at;
  };
  static constexpr size_t kMaxLingeringRefusals = 1024;
  std::vector<Lingering> refused_;  // refused sockets draining until closed; GUARDED_BY(mutex_)
};

}  // namespace weir::serve
