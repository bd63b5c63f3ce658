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
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "serve/pgwire/protocol.h"
#include "serve/protocol_session.h"
#include "serve/tls_socket.h"

namespace weir::serve {
namespace {

using pgwire::ErrorFields;
using pgwire::Frame;
using pgwire::FrameReader;
using pgwire::MessageWriter;

ErrorFields Fatal(std::string sqlstate, std::string message) {
  return ErrorFields{"FATAL", std::move(sqlstate), std::move(message), "", "", 0};
}

ErrorFields ErrorOf(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  const std::string code = detail != nullptr && detail->source() == "sqlstate" ? detail->code()
                           : detail != nullptr && detail->source() == "scram"  ? detail->code()
                                                                               : "XX000";
  return ErrorFields{"ERROR", code, status.message(), "", "", 0};
}

}  // namespace

// One client connection: a socket, optionally wrapped in TLS. No write raises SIGPIPE: plain
// sends use MSG_NOSIGNAL and TLS goes through the MSG_NOSIGNAL BIO of tls_socket.h.
struct Server::Connection {
  int fd = -1;
  TlsPtr ssl;
  bool tls_failed = false;  // an SSL call failed: no close_notify
  FrameReader reader;
  std::chrono::milliseconds read_timeout{0};
  bool timed_out = false;
  const std::atomic<bool>* stopping = nullptr;
  Connection(int socket, size_t max_message_bytes, const std::atomic<bool>* server_stopping)
      : fd(socket), reader(max_message_bytes), stopping(server_stopping) {}
  ~Connection() {
    if (ssl != nullptr && !tls_failed) ShutdownTls(ssl.get());
    // The socket itself is closed by the accept loop's thread, after it is forgotten.
  }

  // The TLS handshake after the 'S' answer to an SSLRequest, under the read deadline: the
  // BIO's reads never block, so a peer that stalls mid-handshake is waited for here, where
  // the deadline and the server stopping end the wait.
  bool StartTls(SSL_CTX* context) {
    auto made = NewServerTls(context, fd);
    if (!made.ok()) return false;
    ssl = std::move(*made);
    const auto deadline = ReadDeadline();
    while (true) {
      ERR_clear_error();
      const int result = SSL_accept(ssl.get());
      if (result == 1) return true;
      if (SSL_get_error(ssl.get(), result) != SSL_ERROR_WANT_READ || !Await(deadline)) {
        tls_failed = true;
        ERR_clear_error();
        return false;
      }
    }
  }

  bool Write(std::string_view bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const int n = ssl != nullptr ? SSL_write(ssl.get(), bytes.data() + sent,
                                               static_cast<int>(bytes.size() - sent))
                                   : static_cast<int>(::send(fd, bytes.data() + sent,
                                                             bytes.size() - sent, MSG_NOSIGNAL));
      if (n <= 0) {
        if (ssl != nullptr) {
          tls_failed = true;
          ERR_clear_error();
        }
        return false;
      }
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  bool Write(MessageWriter& writer) { return Write(writer.Take()); }

  std::chrono::steady_clock::time_point ReadDeadline() const {
    return std::chrono::steady_clock::now() + read_timeout;
  }

  // Waits until the socket is readable, in 200 ms slices; false on an error, at the read
  // deadline (0 = none; sets timed_out) or when the server stops.
  bool Await(std::chrono::steady_clock::time_point deadline) {
    while (true) {
      pollfd waiting{fd, POLLIN, 0};
      const int ready = ::poll(&waiting, 1, 200);
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return false;
      if (stopping != nullptr && stopping->load()) return false;
      if (read_timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
        timed_out = true;
        return false;
      }
    }
  }

  // Reads more bytes into the frame reader; false on EOF, error, the read deadline, or the
  // server stopping. A TLS record that arrives in pieces is waited for like any silence.
  bool Fill() {
    const auto deadline = ReadDeadline();
    char buffer[65536];
    while (true) {
      if ((ssl == nullptr || SSL_pending(ssl.get()) == 0) && !Await(deadline)) return false;
      if (ssl == nullptr) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n > 0) {
          reader.Feed(std::string_view(buffer, static_cast<size_t>(n)));
          return true;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        return false;
      }
      ERR_clear_error();
      const int n = SSL_read(ssl.get(), buffer, sizeof buffer);
      if (n > 0) {
        reader.Feed(std::string_view(buffer, static_cast<size_t>(n)));
        return true;
      }
      const int error = SSL_get_error(ssl.get(), n);
      if (error == SSL_ERROR_WANT_READ) continue;  // part of a record: wait for the rest
      // A clean close_notify from the peer still allows ours; anything else does not.
      tls_failed = error != SSL_ERROR_ZERO_RETURN;
      ERR_clear_error();
      return false;
    }
  }

  // The next message (typed or startup); nullopt when the peer went away.
  Result<std::optional<Frame>> Read(bool startup) {
    while (true) {
      WEIR_ASSIGN_OR_RAISE(auto frame, startup ? reader.NextStartup() : reader.Next());
      if (frame) return frame;
      if (!Fill()) return std::optional<Frame>();
    }
  }

  // 0 = no deadline.
  void SetReadTimeout(std::chrono::milliseconds timeout) {
    read_timeout = timeout;
    timed_out = false;
  }
};

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
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  const int yes = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(options_.port));
  inet_pton(AF_INET, options_.host.c_str(), &address.sin_addr);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, 128) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return ClassifiedError(
        ErrorClass::kFatal, "os", "bind",
        fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, why));
  }
  socklen_t length = sizeof address;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
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
  if (listen_fd_ >= 0) {
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
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
  while (!stopping_->load()) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      if (stopping_->load()) return;
      // Retriable at once: a signal, or a connection that went away before it was accepted.
      if (error == EINTR || error == ECONNABORTED || error == EPROTO) continue;
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
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
    metrics_->connections.Increment();
    std::lock_guard lock(mutex_);
    // Sessions notice Stop within 200 ms when idle, or when their statement ends. The thread
    // reports its end under the lock, so after its entry is in threads_.
    const uint64_t id = next_thread_id_++;
    threads_.emplace(id, std::thread([this, fd, id] {
                       Serve(fd);
                       ::close(fd);
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

std::optional<std::pair<std::string, std::string>> Server::Admit(const std::string& ip) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (auto ban = banned_until_.find(ip); ban != banned_until_.end()) {
    if (now < ban->second) {
      const auto left = std::chrono::duration_cast<std::chrono::seconds>(ban->second - now);
      return std::make_pair(
          std::string("28000"),
          fmt::format("too many failed logins from {}; retry in {} s", ip, left.count() + 1));
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

void Server::Serve(int fd) {
  // Before authentication a message is at most 10,000 bytes (SCRAM's are under 1 KiB), so an
  // unauthenticated peer cannot make the server buffer the session's message limit.
  Connection conn(fd, pgwire::kMaxStartupPacketBytes, stopping_);
  std::string ip = "unknown";
  {
    sockaddr_in peer{};
    socklen_t length = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) == 0) {
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
      ip = text;
    }
  }
  conn.SetReadTimeout(options_.startup_timeout);
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
      out.ErrorResponse(Fatal(ErrorOf(packet.status()).sqlstate, packet.status().message()));
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
  if (auto refused = Admit(ip)) {
    metrics_->refused.Increment();
    out.ErrorResponse(Fatal(refused->first, refused->second));
    conn.Write(out);
    return;
  }
  struct Admitted {
    Server* server;
    std::string ip;
    ~Admitted() { server->Release(ip); }
  } admitted{this, ip};
  const std::string user = startup.parameters["user"];
  // --- SCRAM-SHA-256 -------------------------------------------------------------------------
  auto known = options_.users.find(user);
  auth::ScramServer scram = known != options_.users.end()
                                ? auth::ScramServer(known->second)
                                : auth::ScramServer::ForUnknownUser(user, mock_secret_);
  out.AuthenticationSasl({"SCRAM-SHA-256"});
  if (!conn.Write(out)) return;
  const auto fail = [&](const Status& status) {
    const auto fields = ErrorOf(status);
    if (fields.sqlstate == "28P01") RecordFailedLogin(ip);
    out.ErrorResponse(
        Fatal(fields.sqlstate == "28P01" ? "28P01" : fields.sqlstate,
              fields.sqlstate == "28P01"
                  ? fmt::format("password authentication failed for user \"{}\"", user)
                  : fields.message));
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
  const auto role = options_.roles.find(user);
  (*session)->SetReadOnly(role != options_.roles.end() && role->second == "read");
  const int32_t process_id = next_process_id_++;
  (void)(*session)->SetVariable("weir_user", user);
  (void)(*session)->SetVariable("weir_backend_pid", std::to_string(process_id));
  int32_t secret_key = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&secret_key), sizeof secret_key) != 1) {
    out.ErrorResponse(Fatal("XX000", "cannot draw the session's cancel key"));
    conn.Write(out);  // a guessable key would let anyone cancel this session's statements
    return;
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"server_version", "15.0 (weir)"},
           {"server_encoding", "UTF8"},
           {"client_encoding", "UTF8"},
           {"DateStyle", "ISO, MDY"},
           {"IntervalStyle", "postgres"},
           {"TimeZone", "UTC"},
           {"integer_datetimes", "on"},
           {"standard_conforming_strings", "on"},
           {"is_superuser", "off"},
           {"session_authorization", user},
           {"application_name", startup.parameters["application_name"]}}) {
    out.ParameterStatus(name, value);
  }
  out.BackendKeyData(process_id, secret_key);
  out.ReadyForQuery('I');
  conn.SetReadTimeout(std::chrono::milliseconds(0));  // authenticated: no read deadline
  conn.reader.set_max_message_bytes(options_.max_message_bytes);
  if (!conn.Write(out)) return;
  SessionOptions session_options;
  session_options.user = user;
  session_options.application = startup.parameters["application_name"];
  session_options.address = ip;
  session_options.statement_timeout = options_.statement_timeout;
  session_options.idle_session_timeout = options_.idle_session_timeout;
  session_options.query_log = options_.query_log;
  SessionIo io;
  io.read = [&conn](std::chrono::milliseconds idle) -> Result<std::optional<Frame>> {
    conn.SetReadTimeout(idle);
    return conn.Read(false);
  };
  io.write = [&conn](std::string_view bytes) { return conn.Write(bytes); };
  io.idle_expired = [&conn] { return conn.timed_out; };
  ProtocolSession protocol(session->get(), std::move(io), session_options, metrics_.get(),
                           stopping_);
  metrics_->sessions.Add(1);
  {
    std::lock_guard lock(mutex_);
    live_[{process_id, secret_key}] = &protocol;
  }
  auto last = protocol.Run();
  {
    std::lock_guard lock(mutex_);
    live_.erase({process_id, secret_key});
  }
  metrics_->sessions.Add(-1);
  if (last) {
    out.ErrorResponse(*last);
    conn.Write(out);
  }
}

void Server::Watchdog() {
  while (!watchdog_stop_.load()) {
    {
      std::lock_guard lock(mutex_);
      const auto now = std::chrono::steady_clock::now();
      for (auto& [key, session] : live_) session->CheckDeadline(now);
    }
    ReapFinished();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace weir::serve
