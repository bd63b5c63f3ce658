#include "app/serve_command.h"

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <thread>

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "lake/duckdb_engine.h"
#include "observe/http_server.h"
#include "observe/metrics_registry.h"
#include "serve/auth/base64.h"
#include "serve/auth/scram.h"
#include "serve/auth/tls.h"
#include "serve/engine.h"
#include "serve/server.h"

namespace weir::app {
namespace {

std::atomic<bool> g_serve_stop{false};
extern "C" void OnServeStop(int) { g_serve_stop.store(true); }

constexpr const char* kAdminUser = "weir";

struct User {
  serve::auth::ScramVerifier verifier;
  std::string role = "write";
};

std::string NewPassword() {
  unsigned char bytes[18];
  RAND_bytes(bytes, sizeof bytes);
  std::string password =
      serve::auth::Base64Encode(std::string_view(reinterpret_cast<char*>(bytes), 18));
  for (char& c : password) {
    if (c == '/' || c == '+') c = 'x';
  }
  return password;
}

// Users come from `<tls_dir>/users`: one "name SCRAM-SHA-256$... [read|write]" line each, never
// a password. On the first run the admin user is created with $WEIR_SERVE_PASSWORD, or with a
// generated password printed once.
Result<std::map<std::string, User>> LoadUsers(const std::string& dir, std::ostream& out) {
  const std::string path = dir + "/users";
  std::map<std::string, User> users;
  if (!std::filesystem::exists(path)) {
    std::string password;
    if (const char* given = std::getenv("WEIR_SERVE_PASSWORD"); given != nullptr && *given) {
      password = given;
    } else {
      password = NewPassword();
      out << "weir serve: created user \"" << kAdminUser << "\" with password " << password
          << " (shown once; stored only as a SCRAM verifier in " << path << ")\n";
    }
    WEIR_ASSIGN_OR_RAISE(auto verifier, serve::auth::MakeVerifier(password));
    std::ofstream file(path);
    file << kAdminUser << " " << serve::auth::ToString(verifier) << " write\n";
    file.close();
    ::chmod(path.c_str(), 0600);
  }
  std::ifstream file(path);
  std::string line;
  int number = 0;
  while (std::getline(file, line)) {
    ++number;
    std::istringstream fields(line);
    std::string name, text, role = "write";
    if (!(fields >> name >> text)) continue;
    fields >> role;
    if (role != "read" && role != "write") {
      return Status::Invalid(
          fmt::format("{}, line {}: role of user {} must be read or write, "
                      "not \"{}\"",
                      path, number, name, role));
    }
    auto verifier = serve::auth::ParseVerifier(text);
    if (!verifier.ok()) return WithContext(verifier.status(), path + ", user " + name);
    users[name] = User{*verifier, role};
  }
  return users;
}

// `weir serve --add-user NAME --role R`: writes the user's verifier (replacing an older line).
Status AddUser(const ServeArgs& args, std::ostream& out) {
  WEIR_RETURN_NOT_OK(LoadUsers(args.tls_dir, out).status());
  std::string password;
  if (const char* given = std::getenv("WEIR_SERVE_NEW_PASSWORD"); given != nullptr && *given) {
    password = given;
  } else {
    password = NewPassword();
    out << "weir serve: user \"" << args.add_user << "\" gets password " << password
        << " (shown once)\n";
  }
  WEIR_ASSIGN_OR_RAISE(auto verifier, serve::auth::MakeVerifier(password));
  const std::string path = args.tls_dir + "/users";
  std::vector<std::string> lines;
  {
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
      std::istringstream fields(line);
      std::string name;
      fields >> name;
      if (name != args.add_user && !name.empty()) lines.push_back(line);
    }
  }
  lines.push_back(args.add_user + " " + serve::auth::ToString(verifier) + " " + args.role);
  std::ofstream file(path, std::ios::trunc);
  for (const auto& line : lines) file << line << "\n";
  file.close();
  ::chmod(path.c_str(), 0600);
  out << "weir serve: user \"" << args.add_user << "\" (" << args.role << ") saved in " << path
      << "\n";
  return Status::OK();
}

}  // namespace

int RunServe(const ServeArgs& args, std::ostream& out, std::ostream& err) {
  struct sigaction action = {};
  action.sa_handler = OnServeStop;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  std::error_code ec;
  std::filesystem::create_directories(args.tls_dir, ec);
  const std::string cert = args.tls_dir + "/server.crt", key = args.tls_dir + "/server.key";
  if (auto made = serve::auth::EnsureSelfSignedCertificate(cert, key, "weir"); !made.ok()) {
    err << "weir serve: " << made.message() << "\n";
    return kExitFailure;
  }
  if (!args.add_user.empty()) {
    Status added = AddUser(args, out);
    if (!added.ok()) err << "weir serve: " << added.message() << "\n";
    return added.ok() ? kExitOk : kExitFailure;
  }
  auto users = LoadUsers(args.tls_dir, out);
  if (!users.ok()) {
    err << "weir serve: " << users.status().message() << "\n";
    return kExitFailure;
  }
  serve::LakeAttachment lake;
  lake.catalog = args.catalog_postgres.empty() ? "sqlite:" + args.catalog_sqlite
                                               : "postgres:" + args.catalog_postgres;
  lake.extension_directory = lake::DefaultExtensionDirectory();
  lake.memory_limit = args.memory_limit;
  lake.threads = args.threads;
  auto engine = serve::Engine::Open(lake);
  if (!engine.ok()) {
    err << "weir serve: " << engine.status().message() << "\n";
    return kExitFailure;
  }
  serve::ServerOptions options;
  options.host = args.host;
  options.port = args.port;
  options.cert_path = cert;
  options.key_path = key;
  for (const auto& [name, user] : *users) {
    options.users[name] = user.verifier;
    options.roles[name] = user.role;
  }
  options.statement_timeout = std::chrono::milliseconds(args.statement_timeout_ms);
  options.idle_session_timeout = std::chrono::seconds(args.idle_session_timeout_s);
  options.shutdown_timeout = std::chrono::seconds(args.shutdown_timeout_s);
  options.session_memory_limit = static_cast<size_t>(args.session_memory_mb) << 20;
  options.query_log = args.query_log;
  observe::MetricsRegistry registry;
  options.registry = &registry;
  options.max_connections = args.max_connections;
  options.max_connections_per_ip = args.max_connections_per_ip;
  options.max_failed_logins = args.max_failed_logins;
  options.ban_duration = std::chrono::seconds(args.ban_seconds);
  auto server = serve::Server::Make(options, engine->get());
  if (!server.ok() || !(*server)->Start().ok()) {
    err << "weir serve: cannot start on " << args.host << ":" << args.port << "\n";
    return kExitFailure;
  }
  std::unique_ptr<observe::HttpServer> http;
  if (args.http_port >= 0) {
    observe::HttpServerOptions http_options;
    http_options.host = args.host;
    http_options.port = args.http_port;
    http_options.registry = &registry;
    http_options.health = [] { return observe::ProbeResult{true, "serving"}; };
    http_options.readiness = [] {
      return g_serve_stop.load() ? observe::ProbeResult{false, "stopping"}
                                 : observe::ProbeResult{true, "accepting connections"};
    };
    auto made = observe::HttpServer::Make(http_options);
    Status started = made.ok() ? (*made)->Start() : made.status();
    if (!started.ok()) {
      err << "weir serve: --http-port: " << started.message() << "\n";
      return kExitFailure;
    }
    http = std::move(*made);
    out << "weir serve: metrics on http://" << args.host << ":" << http->port() << "/metrics"
        << std::endl;
  }
  out << "weir serve: listening on " << args.host << ":" << (*server)->port()
      << " (TLS required, SCRAM-SHA-256)" << std::endl;
  while (!g_serve_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*server)->Stop();
  if (http) http->Stop();
  out << "weir serve: stopped" << std::endl;
  return kExitOk;
}

}  // namespace weir::app
