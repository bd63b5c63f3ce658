#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
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

uint64_t BigEndian(std::string_view bytes) {
  uint64_t v = 0;
  for (unsigned char c : bytes) v = (v << 8) | c;
  return v;
}

// A parameter sent in binary as the text DuckDB binds (the types clients send in binary).
std::optional<std::string> ParameterText(const std::optional<std::string>& value, int16_t format,
                                         uint32_t type_oid) {
  if (!value || format == 0) return value;
  const std::string& b = *value;
  switch (type_oid) {
    case 16:
      return std::string(!b.empty() && b[0] ? "true" : "false");
    case 21:
      if (b.size() == 2) return std::to_string(static_cast<int16_t>(BigEndian(b)));
      break;
    case 23:
      if (b.size() == 4) return std::to_string(static_cast<int32_t>(BigEndian(b)));
      break;
    case 20:
      if (b.size() == 8) return std::to_string(static_cast<int64_t>(BigEndian(b)));
      break;
    case 701:
      if (b.size() == 8) {
        const uint64_t bits = BigEndian(b);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return fmt::format("{}", d);
      }
      break;
    case 700:
      if (b.size() == 4) {
        const auto bits = static_cast<uint32_t>(BigEndian(b));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return fmt::format("{}", f);
      }
      break;
    default:
      break;
  }
  return value;  // text-like types: the bytes are the text
}

// A text value in PostgreSQL's binary format for the types that have a fixed layout; nullopt
// when the type is sent as text instead.
std::optional<std::string> BinaryOf(const std::string& text, uint32_t type_oid) {
  const auto be = [](uint64_t v, int bytes) {
    std::string out(static_cast<size_t>(bytes), '\0');
    for (int i = bytes - 1; i >= 0; --i, v >>= 8)
      out[static_cast<size_t>(i)] = static_cast<char>(v);
    return out;
  };
  switch (type_oid) {
    case 16:
      return std::string(1, text == "t" ? '\1' : '\0');
    case 21:
      return be(static_cast<uint64_t>(std::stoll(text)), 2);
    case 23:
      return be(static_cast<uint64_t>(std::stoll(text)), 4);
    case 20:
      return be(static_cast<uint64_t>(std::stoll(text)), 8);
    case 701: {
      const double d = std::stod(text);
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return be(bits, 8);
    }
    case 25:
      return text;
    default:
      return std::nullopt;
  }
}

std::vector<pgwire::FieldDescription> Fields(const std::vector<ResultColumn>& columns,
                                             const std::vector<int16_t>& formats) {
  std::vector<pgwire::FieldDescription> fields;
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& c = columns[i];
    const bool binary = pgwire::FormatAt(formats, i) == 1 && BinaryOf("0", c.type_oid);
    fields.push_back({c.name, 0, 0, c.type_oid, c.type_size, -1, binary ? int16_t{1} : int16_t{0}});
  }
  return fields;
}

// A bound statement awaiting (or part-way through) execution.
struct Portal {
  std::string statement;
  std::vector<std::optional<std::string>> parameters;
  std::vector<int16_t> result_formats;
  std::optional<QueryResult> result;  // materialised by the first Execute
  size_t next_row = 0;
};

}  // namespace

// One client connection: a socket, optionally wrapped in TLS.
struct Server::Connection {
  int fd = -1;
  SSL* ssl = nullptr;
  FrameReader reader;
  std::chrono::seconds read_timeout{0};
  const std::atomic<bool>* stopping = nullptr;
  Connection(int socket, size_t max_message_bytes, const std::atomic<bool>* server_stopping)
      : fd(socket), reader(max_message_bytes), stopping(server_stopping) {}
  ~Connection() {
    if (ssl != nullptr) {
      SSL_shutdown(ssl);
      SSL_free(ssl);
    }
    // The socket itself is closed by the accept loop's thread, after it is forgotten.
  }

  bool Write(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const int n = ssl != nullptr
                        ? SSL_write(ssl, bytes.data() + sent, static_cast<int>(bytes.size() - sent))
                        : static_cast<int>(
                              ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL));
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  bool Write(MessageWriter& writer) { return Write(writer.Take()); }

  // Reads more bytes into the frame reader; false on EOF, error, the read deadline, or the
  // server stopping (checked every 200 ms while the client is silent).
  bool Fill() {
    if (ssl == nullptr || SSL_pending(ssl) == 0) {
      const auto deadline = std::chrono::steady_clock::now() + read_timeout;
      while (true) {
        pollfd waiting{fd, POLLIN, 0};
        const int ready = ::poll(&waiting, 1, 200);
        if (ready > 0) break;
        if (ready < 0 && errno != EINTR) return false;
        if (stopping != nullptr && stopping->load()) return false;
        if (read_timeout.count() > 0 && std::chrono::steady_clock::now() >= deadline) {
          return false;
        }
      }
    }
    char buffer[65536];
    const int n = ssl != nullptr ? SSL_read(ssl, buffer, sizeof buffer)
                                 : static_cast<int>(::recv(fd, buffer, sizeof buffer, 0));
    if (n <= 0) return false;
    reader.Feed(std::string_view(buffer, static_cast<size_t>(n)));
    return true;
  }

  // The next message (typed or startup); nullopt when the peer went away.
  Result<std::optional<Frame>> Read(bool startup) {
    while (true) {
      WEIR_ASSIGN_OR_RAISE(auto frame, startup ? reader.NextStartup() : reader.Next());
      if (frame) return frame;
      if (!Fill()) return std::optional<Frame>();
    }
  }

  // 0 = no deadline (after authentication).
  void SetReadTimeout(std::chrono::seconds timeout) { read_timeout = timeout; }
};

// One message of the extended query protocol; an error makes the caller skip to Sync.
Status HandleExtended(const Frame& message, Session& session,
                      std::map<std::string, Portal>& portals,
                      std::map<std::string, std::vector<uint32_t>>& declared_types,
                      MessageWriter& out) {
  switch (message.type) {
    case 'P': {
      WEIR_ASSIGN_OR_RAISE(auto parse, pgwire::ParseParse(message.body));
      WEIR_RETURN_NOT_OK(session.Prepare(parse.statement, parse.query).status());
      declared_types[parse.statement] = parse.parameter_types;
      out.ParseComplete();
      return Status::OK();
    }
    case 'B': {
      WEIR_ASSIGN_OR_RAISE(auto bind, pgwire::ParseBind(message.body));
      WEIR_ASSIGN_OR_RAISE(auto info, session.Describe(bind.statement));
      Portal portal;
      portal.statement = bind.statement;
      portal.result_formats = bind.result_formats;
      const auto& declared = declared_types[bind.statement];
      for (size_t i = 0; i < bind.parameters.size(); ++i) {
        // The type the client declared in Parse wins (it says how binary values are laid out).
        uint32_t oid = i < info.parameter_types.size() ? info.parameter_types[i] : 25;
        if (i < declared.size() && declared[i] != 0) oid = declared[i];
        portal.parameters.push_back(
            ParameterText(bind.parameters[i], pgwire::FormatAt(bind.parameter_formats, i), oid));
      }
      portals[bind.portal] = std::move(portal);
      out.BindComplete();
      return Status::OK();
    }
    case 'D': {
      WEIR_ASSIGN_OR_RAISE(auto describe, pgwire::ParseDescribe(message.body));
      std::vector<int16_t> formats;
      std::string statement = describe.name;
      if (describe.kind == 'P') {
        auto found = portals.find(describe.name);
        if (found == portals.end()) {
          return ClassifiedError(ErrorClass::kBadData, "sqlstate", "34000",
                                 "portal \"" + describe.name + "\" does not exist");
        }
        statement = found->second.statement;
        formats = found->second.result_formats;
      }
      WEIR_ASSIGN_OR_RAISE(auto info, session.Describe(statement));
      if (describe.kind == 'S') out.ParameterDescription(info.parameter_types);
      if (info.columns.empty()) {
        out.NoData();
      } else {
        out.RowDescription(Fields(info.columns, formats));
      }
      return Status::OK();
    }
    case 'E': {
      WEIR_ASSIGN_OR_RAISE(auto execute, pgwire::ParseExecute(message.body));
      auto found = portals.find(execute.portal);
      if (found == portals.end()) {
        return ClassifiedError(ErrorClass::kBadData, "sqlstate", "34000",
                               "portal \"" + execute.portal + "\" does not exist");
      }
      Portal& portal = found->second;
      if (!portal.result) {
        WEIR_ASSIGN_OR_RAISE(auto result, session.Execute(portal.statement, portal.parameters));
        portal.result = std::move(result);
      }
      const QueryResult& result = *portal.result;
      const auto fields = Fields(result.columns, portal.result_formats);
      const size_t limit = execute.max_rows > 0 ? static_cast<size_t>(execute.max_rows) : SIZE_MAX;
      size_t sent = 0;
      std::vector<std::string> binary(result.columns.size());
      while (portal.next_row < result.rows.size() && sent < limit) {
        const auto& row = result.rows[portal.next_row++];
        std::vector<std::optional<std::string_view>> values;
        for (size_t c = 0; c < row.size(); ++c) {
          if (!row[c]) {
            values.emplace_back(std::nullopt);
          } else if (fields[c].format == 1) {
            binary[c] = *BinaryOf(*row[c], fields[c].type_oid);
            values.emplace_back(binary[c]);
          } else {
            values.emplace_back(*row[c]);
          }
        }
        out.DataRow(values);
        ++sent;
      }
      if (portal.next_row < result.rows.size()) {
        out.PortalSuspended();
      } else {
        out.CommandComplete(result.command_tag);
      }
      return Status::OK();
    }
    case 'C': {
      WEIR_ASSIGN_OR_RAISE(auto close, pgwire::ParseClose(message.body));
      if (close.kind == 'S') {
        session.ClosePrepared(close.name);
      } else {
        portals.erase(close.name);
      }
      out.CloseComplete();
      return Status::OK();
    }
    default:
      return pgwire::ProtocolViolation(fmt::format("unknown message type '{}'", message.type));
  }
}

Server::Server(ServerOptions options, Engine* engine)
    : options_(std::move(options)), engine_(engine) {}

Server::~Server() {
  Stop();
  if (tls_context_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(tls_context_));
}

Result<std::unique_ptr<Server>> Server::Make(ServerOptions options, Engine* engine) {
  std::unique_ptr<Server> server(new Server(std::move(options), engine));
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::IOError("OpenSSL: cannot create a TLS context");
  server->tls_context_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, server->options_.cert_path.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, server->options_.key_path.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return ClassifiedError(ErrorClass::kFatal, "openssl", "certificate",
                           fmt::format("TLS certificate {} / key {} cannot be used",
                                       server->options_.cert_path, server->options_.key_path));
  }
  unsigned char secret[32];
  RAND_bytes(secret, sizeof secret);
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
  return Status::OK();
}

void Server::Stop() {
  if (stopping_.exchange(true)) return;
  if (listen_fd_ >= 0) {
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

void Server::AcceptLoop() {
  while (!stopping_.load()) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) {
      if (stopping_.load()) return;
      continue;
    }
    std::lock_guard lock(mutex_);
    // Sessions notice Stop within 200 ms when idle, or when their statement ends.
    threads_.emplace_back([this, fd] {
      Serve(fd);
      ::close(fd);
    });
  }
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
  if (static_cast<int>(times.size()) >= options_.max_failed_logins) {
    banned_until_[ip] = now + options_.ban_duration;
    times.clear();
    spdlog::warn("serve: {} banned for {} s after {} failed logins", ip,
                 options_.ban_duration.count(), options_.max_failed_logins);
  }
}

void Server::Serve(int fd) {
  Connection conn(fd, options_.max_message_bytes, &stopping_);
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
    if (!frame.ok() || !*frame) return;
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
      conn.ssl = SSL_new(static_cast<SSL_CTX*>(tls_context_));
      SSL_set_fd(conn.ssl, fd);
      if (SSL_accept(conn.ssl) != 1) return;
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
      if (found != live_.end()) found->second->Interrupt();
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
  if (auto refused = Admit(ip)) {
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
  if (!first.ok() || !*first || (**first).type != 'p') return;
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
  if (!final_frame.ok() || !*final_frame || (**final_frame).type != 'p') return;
  auto server_final = scram.HandleClientFinal((**final_frame).body);
  if (!server_final.ok()) return fail(server_final.status());
  out.AuthenticationSaslFinal(*server_final);
  out.AuthenticationOk();
  // --- session -------------------------------------------------------------------------------
  auto session = engine_->Connect();
  if (!session.ok()) {
    out.ErrorResponse(Fatal("53300", session.status().message()));
    conn.Write(out);
    return;
  }
  const int32_t process_id = next_process_id_++;
  int32_t secret_key = 0;
  RAND_bytes(reinterpret_cast<unsigned char*>(&secret_key), sizeof secret_key);
  {
    std::lock_guard lock(mutex_);
    live_[{process_id, secret_key}] = session->get();
  }
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"server_version", "15.0 (weir)"},
           {"server_encoding", "UTF8"},
           {"client_encoding", "UTF8"},
           {"DateStyle", "ISO, MDY"},
           {"TimeZone", "UTC"},
           {"integer_datetimes", "on"},
           {"standard_conforming_strings", "on"},
           {"application_name", startup.parameters["application_name"]}}) {
    out.ParameterStatus(name, value);
  }
  out.BackendKeyData(process_id, secret_key);
  out.ReadyForQuery('I');
  conn.SetReadTimeout(std::chrono::seconds(0));  // authenticated: no read deadline
  bool open = conn.Write(out);
  bool skipping_to_sync = false;  // after an error in the extended protocol
  std::map<std::string, Portal> portals;
  std::map<std::string, std::vector<uint32_t>> declared_types;  // Parse's parameter types
  while (open && !stopping_.load()) {
    auto frame = conn.Read(false);
    if (!frame.ok()) {
      out.ErrorResponse(Fatal("08P01", frame.status().message()));
      conn.Write(out);
      break;
    }
    if (!*frame) break;
    const Frame& message = **frame;
    if (message.type == 'X') break;
    if (message.type == 'Q') {
      skipping_to_sync = false;
      auto query = pgwire::ParseQuery(message.body);
      std::vector<QueryResult> results;
      Status ran = query.ok() ? (*session)->Run(query->sql, &results) : query.status();
      for (const auto& result : results) {
        if (!result.columns.empty()) {
          std::vector<pgwire::FieldDescription> fields;
          for (const auto& c : result.columns) {
            fields.push_back({c.name, 0, 0, c.type_oid, c.type_size, -1, 0});
          }
          out.RowDescription(fields);
          for (const auto& row : result.rows) {
            std::vector<std::optional<std::string_view>> values;
            for (const auto& v : row) {
              values.push_back(v ? std::optional<std::string_view>(*v) : std::nullopt);
            }
            out.DataRow(values);
          }
        }
        out.CommandComplete(result.command_tag);
      }
      if (!ran.ok()) {
        out.ErrorResponse(ErrorOf(ran));
      } else if (results.empty()) {
        out.EmptyQueryResponse();
      }
      out.ReadyForQuery((*session)->transaction_status());
      open = conn.Write(out);
      continue;
    }
    if (message.type == 'S') {  // Sync ends an extended-protocol batch
      skipping_to_sync = false;
      portals.erase("");  // the unnamed portal lives until the end of the transaction; simplify
      out.ReadyForQuery((*session)->transaction_status());
      open = conn.Write(out);
      continue;
    }
    if (message.type == 'H') {  // Flush
      open = conn.Write(out);
      continue;
    }
    if (skipping_to_sync) continue;
    Status handled = HandleExtended(message, **session, portals, declared_types, out);
    if (!handled.ok()) {
      out.ErrorResponse(ErrorOf(handled));
      skipping_to_sync = std::string_view("PBDEC").find(message.type) != std::string_view::npos;
      if (!skipping_to_sync) out.ReadyForQuery((*session)->transaction_status());
      open = conn.Write(out);
    }
  }
  if (stopping_.load()) {
    out.ErrorResponse(Fatal("57P01", "terminating connection due to administrator command"));
    conn.Write(out);
  }
  std::lock_guard lock(mutex_);
  live_.erase({process_id, secret_key});
}

}  // namespace weir::serve
