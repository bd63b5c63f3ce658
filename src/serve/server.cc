#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "serve/client_connection.h"
#include "serve/pgwire/protocol.h"
#include "serve/session/protocol_session.h"

namespace weir::serve {
namespace {

using pgwire::ErrorFields;
using pgwire::Frame;
using pgwire::FrameReader;
using pgwire::MessageWriter;

ErrorFields Fatal(std::string sqlstate, std::string message) {
  return ErrorFields{"FATAL", std::move(sqlstate), std::move(message), "", "", 0};
}

// The peer's address as text (IPv4 or IPv6), the key of bans and per-address caps.
std::string PeerAddress(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return "unknown";
  char text[INET6_ADDRSTRLEN] = {};
  const void* address =
      peer.ss_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr);
  if (::inet_ntop(peer.ss_family, address, text, sizeof text) == nullptr) return "unknown";
  return text;
}

int32_t PeerPort(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return 0;
  return ntohs(peer.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port
                                          : reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
}

}  // namespace

Server::Server(ServerOptions options, Engine* engine)
    : options_(std::move(options)),
      engine_(engine),
      stopping_(options_.stop_flag != nullptr ? options_.stop_flag : &own_stop_flag_) {
  static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is raised by signals");
}

Server::~Server() { Stop(); }

Result<std::unique_ptr<Server>> Server::Make(ServerOptions options, Engine* engine) {
  std::unique_ptr<Server> server(new Server(std::move(options), engine));
  server->metrics_ = std::make_unique<ServeMetrics>(
      server->options_.registry != nullptr ? *server->options_.registry : server->own_registry_);
  server->metrics_->status = server->options_.status;
  WEIR_ASSIGN_OR_RAISE(server->tls_context_, auth::MakeServerContext(server->options_.cert_path,
                                                                     server->options_.key_path));
  unsigned char secret[32];
  if (RAND_bytes(secret, sizeof secret) != 1) {
    return ClassifiedError(ErrorClass::kFatal, "openssl", "rand_bytes",
                           "OpenSSL's random generator failed (the unknown-user salts' secret)");
  }
  server->mock_secret_.assign(reinterpret_cast<char*>(secret), sizeof secret);
  return server;
}

Status Server::Start() {
  WEIR_ASSIGN_OR_RAISE(auto listener, Listener::Open(options_.host, options_.port));
  listener_ = std::make_unique<Listener>(std::move(listener));
  port_ = listener_->port();
  addresses_ = listener_->addresses();
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  watchdog_ = std::thread([this] { Watchdog(); });
  return Status::OK();
}

void Server::Stop() {
  if (stopped_.exchange(true)) return;
  stopping_->store(true);
  {
    std::lock_guard lock(stop_mutex_);  // so a backoff wait cannot miss the notification
  }
  stop_wakeup_.notify_all();
  if (listener_ != nullptr) listener_->Wake();
  if (accept_thread_.joinable()) accept_thread_.join();
  listener_.reset();  // closed once no thread uses it
  // Idle sessions notice within 200 ms; running statements get the grace period, then are
  // interrupted and their sessions end with 57P01.
  const auto deadline = std::chrono::steady_clock::now() + options_.shutdown_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mutex_);
      if (live_.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard lock(mutex_);
    if (!live_.empty()) {
      spdlog::warn(
          "serve: interrupting {} statement(s) still running after the {} s shutdown "
          "grace period",
          live_.size(), options_.shutdown_timeout.count());
    }
    // A client that does not read its results is not waited for past the grace either.
    abort_writes_.store(true);
    for (auto& [key, session] : live_) session->Terminate();
  }
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, thread] : threads_) threads.push_back(std::move(thread));
    threads_.clear();
    finished_.clear();
  }
  for (auto& t : threads) t.join();
  watchdog_stop_.store(true);
  if (watchdog_.joinable()) watchdog_.join();
  DrainRefused(/*all=*/true);
}

void Server::ReapFinished() {
  std::vector<std::thread> ended;
  {
    std::lock_guard lock(mutex_);
    for (const uint64_t id : finished_) {
      if (auto found = threads_.find(id); found != threads_.end()) {
        ended.push_back(std::move(found->second));
        threads_.erase(found);
      }
    }
    finished_.clear();
  }
  for (auto& thread : ended) thread.join();  // each has only its return left to run
}

void Server::AcceptLoop() {
  // 10 ms doubling to 1 s: quick to resume once descriptors are free, a handful of attempts a
  // second while they are not.
  Backoff backoff(BackoffPolicy{std::chrono::milliseconds(10), 2.0, std::chrono::seconds(1), 0.25,
                                /*max_attempts=*/0},
                  static_cast<uint64_t>(::getpid()));
  int burst = 0;  // failed accept() calls since the last success
  while (!stopping_->load() && listener_->Wait()) {
    ScopedFd fd(listener_->Accept());
    if (!fd.valid()) {
      const int error = errno;
      if (stopping_->load()) return;
      // Retriable at once: nothing pending any more, a signal, or a connection that went away
      // before it was accepted.
      if (error == EAGAIN || error == EWOULDBLOCK || error == EINTR || error == ECONNABORTED ||
          error == EPROTO) {
        continue;
      }
      BackOffAccepting(error, ++burst, backoff);
      continue;
    }
    if (burst > 0) {
      spdlog::info("serve: accepting connections again after {} failed accept() calls", burst);
      burst = 0;
      backoff.Reset();
    }
    // Small messages (TLS handshake, SCRAM, one-row results) must not wait for delayed ACKs.
    const int nodelay = 1;
    if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay) != 0) {
      spdlog::debug("serve: TCP_NODELAY refused on an accepted connection: {}",
                    std::strerror(errno));  // it still works, with delayed ACKs
    }
    metrics_->connections.Increment();
    const auto accepted = std::chrono::steady_clock::now();
    // Bans and caps before the first byte is read: an unauthenticated connection holds a
    // slot, and a refused one costs no thread.
    std::string ip = PeerAddress(fd.get());
    std::optional<std::string> banned;
    if (auto refused = Admit(ip, &banned)) {
      metrics_->refused.Increment();
      Refuse(std::move(fd), refused->first, refused->second);
      continue;
    }
    if (banned) metrics_->refused.Increment();
    std::lock_guard lock(mutex_);
    // Sessions notice Stop within 200 ms when idle, or when their statement ends. The thread
    // reports its end under the lock, so after its entry is in threads_.
    const uint64_t id = next_thread_id_++;
    threads_.emplace(id, std::thread([this, fd = std::move(fd), id, accepted, ip = std::move(ip),
                                      banned = std::move(banned)]() mutable {
                       Serve(fd.get(), ip, accepted, banned);
                       Release(ip);
                       fd.Reset();
                       std::lock_guard done(mutex_);
                       finished_.push_back(id);
                     }));
  }
}

void Server::BackOffAccepting(int error, int burst, Backoff& backoff) {
  // EMFILE, ENFILE, ENOBUFS, ENOMEM (and anything unexpected): the pending connection stays
  // in the backlog, so retrying at once would fail again at once.
  metrics_->accept_errors.Increment();
  if (burst == 1) {
    spdlog::warn(
        "serve: cannot accept connections: {} (errno {}); retrying with backoff, logged once "
        "until it recovers",
        std::strerror(error), error);
  }
  const auto delay = backoff.Next().value_or(std::chrono::seconds(1));
  std::unique_lock lock(stop_mutex_);
  stop_wakeup_.wait_for(lock, delay, [this] { return stopping_->load(); });
}

std::optional<std::pair<std::string, std::string>> Server::Admit(
    const std::string& ip, std::optional<std::string>* banned) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (auto ban = banned_until_.find(ip); ban != banned_until_.end()) {
    if (now < ban->second) {
      const auto left = std::chrono::duration_cast<std::chrono::seconds>(ban->second - now);
      std::string why =
          fmt::format("too many failed logins from {}; retry in {} s", ip, left.count() + 1);
      if (connections_ >= options_.max_connections ||
          connections_per_ip_[ip] >= options_.max_connections_per_ip) {
        return std::make_pair(std::string("28000"), std::move(why));
      }
      // Within the caps (which bound what banned clients cost): told after TLS.
      *banned = std::move(why);
      ++connections_;
      ++connections_per_ip_[ip];
      return std::nullopt;
    }
    banned_until_.erase(ban);
  }
  if (connections_ >= options_.max_connections) {
    return std::make_pair(
        std::string("53300"),
        fmt::format("sorry, too many clients already (limit {})", options_.max_connections));
  }
  if (connections_per_ip_[ip] >= options_.max_connections_per_ip) {
    return std::make_pair(std::string("53300"),
                          fmt::format("too many connections from {} (limit {})", ip,
                                      options_.max_connections_per_ip));
  }
  ++connections_;
  ++connections_per_ip_[ip];
  return std::nullopt;
}

void Server::Release(const std::string& ip) {
  std::lock_guard lock(mutex_);
  --connections_;
  if (--connections_per_ip_[ip] <= 0) connections_per_ip_.erase(ip);
}

void Server::SetUsers(std::map<std::string, auth::ScramVerifier> users,
                      std::map<std::string, std::string> roles) {
  std::lock_guard lock(users_mutex_);
  options_.users = std::move(users);
  options_.roles = std::move(roles);
}

void Server::RecordFailedLogin(const std::string& ip) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  auto& times = failures_[ip];
  std::erase_if(times, [&](auto t) { return now - t > options_.ban_window; });
  times.push_back(now);
  metrics_->auth_failures.Increment();
  if (static_cast<int>(times.size()) >= options_.max_failed_logins) {
    metrics_->bans.Increment();
    banned_until_[ip] = now + options_.ban_duration;
    times.clear();
    spdlog::warn("serve: {} banned for {} s after {} failed logins", ip,
                 options_.ban_duration.count(), options_.max_failed_logins);
  }
}

void Server::Serve(int fd, const std::string& ip, std::chrono::steady_clock::time_point accepted,
                   const std::optional<std::string>& banned) {
  // Before authentication a message is at most 10,000 bytes (SCRAM's are under 1 KiB), so an
  // unauthenticated peer cannot make the server buffer the session's message limit.
  ClientConnection conn(fd, pgwire::kMaxStartupPacketBytes, stopping_, &abort_writes_,
                        accepted + options_.authentication_timeout);
  MessageWriter out;
  // --- startup: SSL/GSSENC negotiation, cancel requests, the startup message ---------------
  pgwire::StartupMessage startup;
  while (true) {
    auto frame = conn.Read(/*startup=*/true);
    if (!frame.ok()) {  // an impossible length (over 10,000 bytes, say): say so, then close
      out.ErrorResponse(Fatal("08P01", frame.status().message()));
      conn.Write(out);
      return;
    }
    if (!*frame) return;
    auto packet = pgwire::ParseStartupPacket((**frame).body);
    if (!packet.ok()) {
      out.ErrorResponse(pgwire::ErrorFieldsOf(packet.status(), "FATAL"));
      conn.Write(out);
      return;
    }
    if (std::holds_alternative<pgwire::SslRequest>(*packet)) {
      if (conn.ssl != nullptr || conn.reader.buffered() > 0) return;  // no repeat, no pipelining
      out.SingleByte('S');
      if (!conn.Write(out)) return;
      if (!conn.StartTls(tls_context_.get())) return;
      continue;
    }
    if (std::holds_alternative<pgwire::GssEncRequest>(*packet)) {
      out.SingleByte('N');
      if (!conn.Write(out)) return;
      continue;
    }
    if (const auto* cancel = std::get_if<pgwire::CancelRequest>(&*packet)) {
      std::lock_guard lock(mutex_);
      auto found = live_.find({cancel->process_id, cancel->secret_key});
      if (found != live_.end()) found->second->Cancel();
      return;  // a cancel request gets no answer
    }
    startup = std::get<pgwire::StartupMessage>(std::move(*packet));
    break;
  }
  if (options_.require_tls && conn.ssl == nullptr) {
    out.ErrorResponse(Fatal("28000", "this server requires TLS (sslmode=require or stronger)"));
    conn.Write(out);
    return;
  }
  if (stopping_->load()) {
    out.ErrorResponse(Fatal("57P03", "the database system is shutting down"));
    conn.Write(out);
    return;
  }
  if (banned) {
    out.ErrorResponse(Fatal("28000", *banned));
    conn.Write(out);
    return;
  }
  const std::string user = startup.parameters["user"];
  // --- SCRAM-SHA-256 -------------------------------------------------------------------------
  std::optional<auth::ScramVerifier> verifier;
  bool read_only = false;
  {
    std::lock_guard lock(users_mutex_);
    if (auto known = options_.users.find(user); known != options_.users.end()) {
      verifier = known->second;
    }
    const auto role = options_.roles.find(user);
    read_only = role != options_.roles.end() && role->second == "read";
  }
  auth::ScramServer scram = verifier ? auth::ScramServer(*verifier)
                                     : auth::ScramServer::ForUnknownUser(user, mock_secret_);
  out.AuthenticationSasl({"SCRAM-SHA-256"});
  if (!conn.Write(out)) return;
  const auto fail = [&](const Status& status) {
    const std::string sqlstate = pgwire::SqlStateOf(status);
    if (sqlstate == "28P01") {
      // Each failed login, with who and from where (never what was sent).
      spdlog::warn("serve: login failed for user \"{}\" from {}{}", user, ip,
                   verifier ? ": wrong password" : ": no such user");
      RecordFailedLogin(ip);
    }
    out.ErrorResponse(
        Fatal(sqlstate, sqlstate == "28P01"
                            ? fmt::format("password authentication failed for user \"{}\"", user)
                            : status.message()));
    conn.Write(out);
  };
  auto first = conn.Read(false);
  if (!first.ok()) return fail(first.status());  // e.g. over the 10,000 bytes
  if (!*first || (**first).type != 'p') return;
  auto initial = pgwire::ParseSaslInitialResponse((**first).body);
  if (!initial.ok() || initial->mechanism != "SCRAM-SHA-256" || !initial->data) {
    fail(initial.ok() ? pgwire::ProtocolViolation("expected SCRAM-SHA-256") : initial.status());
    return;
  }
  auto server_first = scram.HandleClientFirst(*initial->data);
  if (!server_first.ok()) return fail(server_first.status());
  out.AuthenticationSaslContinue(*server_first);
  if (!conn.Write(out)) return;
  auto final_frame = conn.Read(false);
  if (!final_frame.ok()) return fail(final_frame.status());
  if (!*final_frame || (**final_frame).type != 'p') return;
  auto server_final = scram.HandleClientFinal((**final_frame).body);
  if (!server_final.ok()) return fail(server_final.status());
  out.AuthenticationSaslFinal(*server_final);
  out.AuthenticationOk();
  // --- session -------------------------------------------------------------------------------
  auto session = engine_->Connect(options_.session_memory_limit);
  if (!session.ok()) {
    out.ErrorResponse(Fatal("53300", session.status().message()));
    conn.Write(out);
    return;
  }
  (*session)->SetReadOnly(read_only);
  const int32_t process_id = next_process_id_++;
  (void)(*session)->SetVariable("weir_user", user);
  (void)(*session)->SetVariable("weir_backend_pid", std::to_string(process_id));
  int32_t secret_key = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&secret_key), sizeof secret_key) != 1) {
    out.ErrorResponse(Fatal("XX000", "cannot draw the session's cancel key"));
    conn.Write(out);  // a guessable key would let anyone cancel this session's statements
    return;
  }
  // The startup packet's settings (TimeZone, DateStyle, client_encoding, application_name,
  // extra_float_digits, options='-c name=value', ...), checked as SET checks them: an invalid
  // one ends the connection, as in PostgreSQL.
  SessionSettings settings(
      {{"statement_timeout", ShowMillis(options_.statement_timeout.count())},
       {"idle_session_timeout", ShowMillis(options_.idle_session_timeout.count())}},
      [&session](const std::string& sql) { return (*session)->Configure(sql); });
  Status started = settings.ApplyStartup(startup.parameters);
  if (started.ok()) started = settings.ApplyAll();
  if (!started.ok()) {
    out.ErrorResponse(pgwire::ErrorFieldsOf(started, "FATAL"));
    conn.Write(out);
    return;
  }
  for (const auto& [name, value] : settings.TakeReports()) out.ParameterStatus(name, value);
  out.ParameterStatus("session_authorization", user);
  out.BackendKeyData(process_id, secret_key);
  out.ReadyForQuery('I');
  conn.Authenticated(options_.max_message_bytes, options_.send_timeout);
  if (!conn.Write(out)) return;
  SessionOptions session_options;
  session_options.user = user;
  session_options.application = settings.Get("application_name");
  session_options.address = ip;
  session_options.statement_timeout = options_.statement_timeout;
  session_options.idle_session_timeout = options_.idle_session_timeout;
  session_options.query_log = options_.query_log;
  session_options.activity = &engine_->activity();
  session_options.pid = process_id;
  std::atomic<bool> terminate_requested{false};
  conn.terminated = &terminate_requested;
  SessionIo io;
  io.read = [&conn](std::chrono::milliseconds idle) -> Result<std::optional<Frame>> {
    conn.SetReadTimeout(idle);
    return conn.Read(false);
  };
  io.write = [&conn](std::string_view bytes) { return conn.Write(bytes); };
  io.idle_expired = [&conn] { return conn.timed_out; };
  ProtocolSession protocol(session->get(), std::move(io), session_options, metrics_.get(),
                           stopping_, std::move(settings));
  metrics_->sessions.Add(1);
  if (metrics_->status != nullptr) metrics_->status->SessionOpened();
  {
    std::lock_guard lock(mutex_);
    live_[{process_id, secret_key}] = &protocol;
  }
  BackendActivity activity;
  activity.pid = process_id;
  activity.user = user;
  activity.read_only = (*session)->read_only();
  activity.application = session_options.application;
  activity.address = ip;
  activity.port = PeerPort(fd);
  activity.backend_start = NowMicros() - std::chrono::duration_cast<std::chrono::microseconds>(
                                             std::chrono::steady_clock::now() - accepted)
                                             .count();
  activity.state_change = NowMicros();
  engine_->activity().Add(activity, (*session)->connection_id(),
                          {[&protocol] { protocol.Cancel(); },
                           [&protocol, &terminate_requested] {
                             terminate_requested.store(true);
                             protocol.Terminate();
                           }});
  auto last = protocol.Run();
  engine_->activity().Remove(process_id);
  {
    std::lock_guard lock(mutex_);
    live_.erase({process_id, secret_key});
  }
  if (!last && terminate_requested.load()) {
    last = Fatal("57P01", "terminating connection due to administrator command");
  }
  metrics_->sessions.Add(-1);
  if (metrics_->status != nullptr) metrics_->status->SessionClosed();
  if (conn.send_timed_out) {
    spdlog::warn(
        "serve: ended the session of {} from {}: it read nothing of its results for {} ms "
        "(serve.send_timeout)",
        user, ip, options_.send_timeout.count());
  }
  if (last) {
    out.ErrorResponse(*last);
    conn.Write(out);
  }
}

void Server::Refuse(ScopedFd fd, const std::string& sqlstate, const std::string& message) {
  MessageWriter out;
  out.ErrorResponse(Fatal(sqlstate, message));
  const std::string bytes = out.Take();
  // A fresh socket's send buffer takes the short answer whole; a peer that cannot take even
  // that is not waited for.
  (void)::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd.get(), SHUT_WR);
  // Closed at once, the socket would answer the peer's first packet (in flight, or unread in
  // our buffer) with a reset, which can discard the answer before the client reads it. So it
  // lingers, drained by the watchdog, until the peer closes or for a second.
  std::lock_guard lock(mutex_);
  if (refused_.size() >= kMaxLingeringRefusals) return;  // closed now
  refused_.push_back({std::move(fd), std::chrono::steady_clock::now() + std::chrono::seconds(1)});
}

void Server::DrainRefused(bool all) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(refused_, [&](const Lingering& lingering) {
    char discard[512];
    ssize_t n = 0;
    while ((n = ::recv(lingering.fd.get(), discard, sizeof discard, MSG_DONTWAIT)) > 0) {
    }
    const bool done = all || now >= lingering.close_at || n == 0 ||
                      (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    return done;  // erasing it closes it
  });
}

void Server::Watchdog() {
  while (!watchdog_stop_.load()) {
    {
      std::lock_guard lock(mutex_);
      const auto now = std::chrono::steady_clock::now();
      for (auto& [key, session] : live_) session->CheckDeadline(now);
    }
    ReapFinished();
    DrainRefused(/*all=*/false);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace weir::serve
