#include "app/serve_command.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <thread>

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "app/load_settings.h"
#include "app/s3_settings.h"
#include "app/version.h"
#include "base/logging.h"
#include "config/describe.h"
#include "config/load.h"
#include "lake/duckdb_engine.h"
#include "observe/http_server.h"
#include "observe/metrics_registry.h"
#include "serve/auth/base64.h"
#include "serve/auth/scram.h"
#include "serve/auth/tls.h"
#include "serve/auth/users_file.h"
#include "serve/engine.h"
#include "serve/server.h"

namespace weir::app {
namespace {

// Raised by SIGTERM/SIGINT and shared with the server as its stop flag (see
// ServerOptions::stop_flag): sessions refuse new statements from the moment the signal arrives.
std::atomic<bool> g_serve_stop{false};
extern "C" void OnServeStop(int) { g_serve_stop.store(true); }

// Raised by SIGHUP: the users file is read again (as it is when it changes).
std::atomic<bool> g_reload_users{false};
extern "C" void OnServeReload(int) { g_reload_users.store(true); }

void InstallStopHandlers() {
  struct sigaction stop = {};
  stop.sa_handler = OnServeStop;
  stop.sa_flags = SA_RESTART;  // a recv or send in flight resumes instead of failing
  sigemptyset(&stop.sa_mask);
  sigaction(SIGTERM, &stop, nullptr);
  sigaction(SIGINT, &stop, nullptr);
  struct sigaction reload = stop;
  reload.sa_handler = OnServeReload;
  sigaction(SIGHUP, &reload, nullptr);
}

// The users file as the server holds it: re-read when its modification time or size changes
// (`weir serve --add-user` from another shell) or on SIGHUP, and handed to the server. A file
// that does not parse is reported and the users held stay.
class UsersFileWatch {
 public:
  explicit UsersFileWatch(std::string path) : path_(std::move(path)) { stamp_ = Stamp(); }

  void Poll(serve::Server& server) {
    const bool asked = g_reload_users.exchange(false);
    const auto stamp = Stamp();
    if (!asked && stamp == stamp_) return;
    stamp_ = stamp;
    auto users = serve::auth::ReadUsersFile(path_);
    if (!users.ok()) {
      spdlog::error("serve: users file {} not reloaded (the users held stay): {}", path_,
                    users.status().message());
      return;
    }
    std::map<std::string, serve::auth::ScramVerifier> verifiers;
    std::map<std::string, std::string> roles;
    for (const auto& [name, user] : *users) {
      verifiers[name] = user.verifier;
      roles[name] = user.role;
    }
    server.SetUsers(std::move(verifiers), std::move(roles));
    spdlog::info("serve: users file {} reloaded ({}): {} user(s)", path_,
                 asked ? "SIGHUP" : "it changed", users->size());
  }

 private:
  std::pair<int64_t, int64_t> Stamp() const {
    std::error_code ec;
    const auto time = std::filesystem::last_write_time(path_, ec);
    if (ec) return {-1, -1};
    const auto size = std::filesystem::file_size(path_, ec);
    return {time.time_since_epoch().count(), ec ? -1 : static_cast<int64_t>(size)};
  }

  std::string path_;
  std::pair<int64_t, int64_t> stamp_;
};

// Every socket write of the server uses MSG_NOSIGNAL (tls_socket.h for TLS), so it never raises
// SIGPIPE. A write that does (a path that misses it, or the /metrics server's library, which
// sends without the flag) is counted in weir_serve_sigpipe_total and fails with EPIPE instead
// of ending the process; the count is warned about at stop. See docs/ARCHITECTURE.md.
std::atomic<observe::Counter*> g_sigpipe_counter{nullptr};
std::atomic<uint64_t> g_sigpipes{0};
extern "C" void OnSigpipe(int) {
  g_sigpipes.fetch_add(1, std::memory_order_relaxed);
  if (observe::Counter* counter = g_sigpipe_counter.load()) counter->Increment();
}

// At start, and again once the HTTP server is made: httplib::Server's constructor sets SIGPIPE
// to SIG_IGN for the whole process, which would hide such a write.
void InstallSigpipeCounter() {
  struct sigaction pipe = {};
  pipe.sa_handler = OnSigpipe;
  pipe.sa_flags = SA_RESTART;
  sigemptyset(&pipe.sa_mask);
  sigaction(SIGPIPE, &pipe, nullptr);
}

constexpr const char* kAdminUser = "weir";

Result<std::string> NewPassword() {
  unsigned char bytes[18];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    return ClassifiedError(ErrorClass::kFatal, "openssl", "rand_bytes",
                           "OpenSSL's random generator failed (a new user's password)");
  }
  std::string password =
      serve::auth::Base64Encode(std::string_view(reinterpret_cast<char*>(bytes), 18));
  for (char& c : password) {
    if (c == '/' || c == '+') c = 'x';
  }
  return password;
}

// Users come from `<tls_dir>/users` (serve/auth/users_file.h). On the first run the admin user
// is created with $WEIR_SERVE_PASSWORD, or with a generated password printed once. Later, a
// $WEIR_SERVE_PASSWORD the file's admin verifier does not match replaces it (and says so):
// the password a deployment sets is the one that works, never silently ignored.
Result<serve::auth::Users> LoadUsers(const std::string& dir, std::ostream& out) {
  const std::string path = dir + "/users";
  const char* given = std::getenv("WEIR_SERVE_PASSWORD");
  if (given != nullptr && *given == '\0') given = nullptr;
  if (std::filesystem::exists(path)) {
    WEIR_ASSIGN_OR_RAISE(auto users, serve::auth::ReadUsersFile(path));
    if (given == nullptr) return users;
    const auto admin = users.find(kAdminUser);
    if (admin != users.end()) {
      const serve::auth::ScramVerifier& old = admin->second.verifier;
      WEIR_ASSIGN_OR_RAISE(auto same,
                           serve::auth::MakeVerifierWithSalt(given, old.salt, old.iterations));
      if (same == old) return users;
    }
    WEIR_ASSIGN_OR_RAISE(auto verifier, serve::auth::MakeVerifier(given));
    const bool existed = admin != users.end();
    users[kAdminUser] =
        serve::auth::UserEntry{verifier, existed ? admin->second.role : std::string("write")};
    WEIR_RETURN_NOT_OK(serve::auth::WriteUsersFile(path, users));
    out << "weir serve: WEIR_SERVE_PASSWORD is set: user \"" << kAdminUser << "\" "
        << (existed ? "now has that password" : "created with it") << " in " << path << "\n";
    return users;
  }
  std::string password;
  if (given != nullptr) {
    password = given;
  } else {
    WEIR_ASSIGN_OR_RAISE(password, NewPassword());
    out << "weir serve: created user \"" << kAdminUser << "\" with password " << password
        << " (shown once; stored only as a SCRAM verifier in " << path << ")\n";
  }
  WEIR_ASSIGN_OR_RAISE(auto verifier, serve::auth::MakeVerifier(password));
  serve::auth::Users users;
  users[kAdminUser] = serve::auth::UserEntry{verifier, "write"};
  WEIR_RETURN_NOT_OK(serve::auth::WriteUsersFile(path, users));
  return users;
}

// `weir serve --add-user NAME --role R`: writes the user's verifier (replacing an older one).
Status AddUser(const ServeArgs& args, const std::string& tls_dir, std::ostream& out) {
  WEIR_ASSIGN_OR_RAISE(auto users, LoadUsers(tls_dir, out));
  std::string password;
  if (const char* given = std::getenv("WEIR_SERVE_NEW_PASSWORD"); given != nullptr && *given) {
    password = given;
  } else {
    WEIR_ASSIGN_OR_RAISE(password, NewPassword());
    out << "weir serve: user \"" << args.add_user << "\" gets password " << password
        << " (shown once)\n";
  }
  WEIR_ASSIGN_OR_RAISE(auto verifier, serve::auth::MakeVerifier(password));
  const std::string path = tls_dir + "/users";
  users[args.add_user] = serve::auth::UserEntry{verifier, args.role};
  WEIR_RETURN_NOT_OK(serve::auth::WriteUsersFile(path, users));
  out << "weir serve: user \"" << args.add_user << "\" (" << args.role << ") saved in " << path
      << " (a weir serve running on it reloads the file within a second)\n";
  return Status::OK();
}

serve::LakeAttachment MakeLakeAttachment(const config::ServeSettings& s) {
  serve::LakeAttachment lake;
  lake.catalog = s.catalog.kind == config::CatalogKind::kPostgres
                     ? "postgres:" + s.catalog.postgres_dsn
                     : "sqlite:" + s.catalog.sqlite_path;
  if (s.lake_format == "iceberg") {  // the REST catalog (config validation refuses sql)
    lake.iceberg.uri = s.iceberg.uri;
    lake.iceberg.warehouse = s.iceberg.warehouse;
    lake.iceberg.token = s.iceberg.token;
    lake.iceberg.credential = s.iceberg.credential;
    lake.iceberg.timeout_seconds =
        static_cast<int>(std::chrono::ceil<std::chrono::seconds>(s.iceberg_timeout).count());
    lake.iceberg.locations = s.iceberg_locations;
  }
  lake.extension_directory = lake::ExtensionDirectory(s.duckdb_extension_dir);
  lake.memory_limit = s.memory_limit;
  lake.threads = s.threads;
  lake.s3 = S3SettingsOf(s.storage);
  lake.azure = AzureSettingsOf(s.storage);
  return lake;
}

// Everything but the users, the certificate and the metrics registry.
serve::ServerOptions MakeServerOptions(const config::ServeSettings& s) {
  serve::ServerOptions options;
  options.host = s.host;
  options.port = s.port;
  options.max_connections = s.max_connections;
  options.max_connections_per_ip = s.max_connections_per_ip;
  options.max_failed_logins = s.max_failed_logins;
  options.ban_duration = std::chrono::seconds(s.ban_seconds);
  options.statement_timeout = s.statement_timeout;
  options.idle_session_timeout = s.idle_session_timeout;
  options.shutdown_timeout = std::chrono::ceil<std::chrono::seconds>(s.shutdown_timeout);
  options.authentication_timeout = s.authentication_timeout;
  options.send_timeout = s.send_timeout;
  options.session_memory_limit = static_cast<size_t>(s.session_memory_bytes);
  options.query_log = s.query_log;
  return options;
}

}  // namespace

int RunServe(const ServeArgs& args, std::ostream& out, std::ostream& err) {
  const auto settings =
      LoadSettings(config::LoadServeSettings, args.config_path, args.overrides, "weir serve", err);
  if (!settings) return kExitFailure;
  const config::ServeSettings& s = *settings;

  InstallStopHandlers();
  InstallSigpipeCounter();

  const std::string cert = s.tls_dir + "/server.crt", key = s.tls_dir + "/server.key";
  // The TLS pair and the users file, made when missing (`--add-user` needs no lake).
  const auto prepare_tls_dir = [&]() -> bool {
    std::error_code ec;
    std::filesystem::create_directories(s.tls_dir, ec);
    if (auto made = serve::auth::EnsureSelfSignedCertificate(cert, key, "weir"); !made.ok()) {
      err << "weir serve: serve.tls_dir " << s.tls_dir << ": " << made.message() << "\n";
      return false;
    }
    return true;
  };
  if (!args.add_user.empty()) {
    if (!prepare_tls_dir()) return kExitFailure;
    Status added = AddUser(args, s.tls_dir, out);
    if (!added.ok()) err << "weir serve: " << added.message() << "\n";
    return added.ok() ? kExitOk : kExitFailure;
  }
  spdlog::info("weir serve starting; settings given or derived (the rest at their defaults):\n{}",
               config::DescribeChanged(s));
  spdlog::debug("every setting:\n{}", config::Describe(s));
  // The lake first: a start that cannot serve one creates nothing (no catalog file, no TLS
  // directory, no users file).
  if (s.lake_format != "iceberg" && s.catalog.kind == config::CatalogKind::kSqlite &&
      !std::filesystem::exists(s.catalog.sqlite_path)) {
    err << "weir serve: no lake at " << s.catalog.sqlite_path
        << " (catalog.sqlite_path): run weir ingest first, or set catalog.* to the lake's "
           "catalog\n";
    return kExitFailure;
  }
  auto engine = serve::Engine::Open(MakeLakeAttachment(s));
  if (!engine.ok()) {
    err << "weir serve: " << engine.status().message() << "\n";
    return kExitFailure;
  }
  if (!prepare_tls_dir()) return kExitFailure;
  auto users = LoadUsers(s.tls_dir, out);
  if (!users.ok()) {
    err << "weir serve: " << users.status().message() << "\n";
    return kExitFailure;
  }
  serve::ServerOptions options = MakeServerOptions(s);
  options.cert_path = cert;
  options.key_path = key;
  for (const auto& [name, user] : *users) {
    options.users[name] = user.verifier;
    options.roles[name] = user.role;
  }
  observe::MetricsRegistry registry;
  options.registry = &registry;
  observe::StatusModel status("serve", kVersion);
  options.status = &status.Serve();
  options.stop_flag = &g_serve_stop;
  g_sigpipe_counter.store(&registry.Counter(
      "weir_serve_sigpipe_total",
      "Writes that raised SIGPIPE and failed with EPIPE instead (never the server's sockets: "
      "they write with MSG_NOSIGNAL).",
      {}));
  struct ForgetCounter {
    ~ForgetCounter() { g_sigpipe_counter.store(nullptr); }
  } forget_counter;  // before the registry goes
  auto server = serve::Server::Make(options, engine->get());
  const Status started = server.ok() ? (*server)->Start() : server.status();
  if (!started.ok()) {
    err << "weir serve: cannot start on " << s.host << ":" << s.port
        << " (serve.host, serve.port): " << started.message() << "\n";
    return kExitFailure;
  }
  std::unique_ptr<observe::HttpServer> http;
  if (s.http_port >= 0) {
    observe::HttpServerOptions http_options;
    http_options.host = s.host;
    http_options.port = s.http_port;
    http_options.registry = &registry;
    http_options.status = &status;
    http_options.health = [] { return observe::ProbeResult{true, "serving"}; };
    http_options.readiness = [] {
      return g_serve_stop.load() ? observe::ProbeResult{false, "stopping"}
                                 : observe::ProbeResult{true, "accepting connections"};
    };
    auto made = observe::HttpServer::Make(http_options);
    Status http_started = made.ok() ? (*made)->Start() : made.status();
    if (!http_started.ok()) {
      err << "weir serve: serve.http_port " << s.http_port << ": " << http_started.message()
          << "\n";
      (*server)->Stop();
      return kExitFailure;
    }
    http = std::move(*made);
    out << "weir serve: metrics on http://" << s.host << ":" << http->port() << "/metrics"
        << std::endl;
  }
  InstallSigpipeCounter();  // httplib::Server replaced it
  std::string addresses;
  for (const auto& address : (*server)->addresses()) {
    addresses += (addresses.empty() ? "" : ", ") + address;
  }
  out << "weir serve: listening on " << s.host << ":" << (*server)->port() << " (" << addresses
      << "; TLS required, SCRAM-SHA-256)" << std::endl;
  UsersFileWatch users_file(s.tls_dir + "/users");
  for (int tick = 0; !g_serve_stop.load(); ++tick) {
    status.Tick();
    if (tick % 10 == 0 || g_reload_users.load()) users_file.Poll(**server);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  (*server)->Stop();
  if (http) http->Stop();
  if (const uint64_t sigpipes = g_sigpipes.load(); sigpipes > 0) {
    spdlog::warn("serve: {} write(s) raised SIGPIPE (sent without MSG_NOSIGNAL to a closed peer)",
                 sigpipes);
  }
  out << "weir serve: stopped" << std::endl;
  return kExitOk;
}

}  // namespace weir::app
