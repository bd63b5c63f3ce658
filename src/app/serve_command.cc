#include "app/serve_command.h"

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "lake/duckdb_engine.h"
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

// Users come from `<tls_dir>/users` (one "name SCRAM-SHA-256$..." line each; never a
// password). On the first run the admin user is created with $WEIR_SERVE_PASSWORD, or with a
// generated password printed once.
Result<std::map<std::string, serve::auth::ScramVerifier>> LoadUsers(const std::string& dir,
                                                                    std::ostream& out) {
  const std::string path = dir + "/users";
  std::map<std::string, serve::auth::ScramVerifier> users;
  if (!std::filesystem::exists(path)) {
    std::string password;
    if (const char* given = std::getenv("WEIR_SERVE_PASSWORD"); given != nullptr && *given) {
      password = given;
    } else {
      unsigned char bytes[18];
      RAND_bytes(bytes, sizeof bytes);
      password = serve::auth::Base64Encode(std::string_view(reinterpret_cast<char*>(bytes), 18));
      for (char& c : password) {
        if (c == '/' || c == '+') c = 'x';
      }
      out << "weir serve: created user \"" << kAdminUser << "\" with password " << password
          << " (shown once; stored only as a SCRAM verifier in " << path << ")\n";
    }
    WEIR_ASSIGN_OR_RAISE(auto verifier, serve::auth::MakeVerifier(password));
    std::ofstream file(path);
    file << kAdminUser << " " << serve::auth::ToString(verifier) << "\n";
    file.close();
    ::chmod(path.c_str(), 0600);
  }
  std::ifstream file(path);
  std::string name, text;
  while (file >> name >> text) {
    auto verifier = serve::auth::ParseVerifier(text);
    if (!verifier.ok()) return WithContext(verifier.status(), path + ", user " + name);
    users[name] = *verifier;
  }
  return users;
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
  auto users = LoadUsers(args.tls_dir, out);
  if (!users.ok()) {
    err << "weir serve: " << users.status().message() << "\n";
    return kExitFailure;
  }
  serve::LakeAttachment lake;
  lake.catalog = args.catalog_postgres.empty() ? "sqlite:" + args.catalog_sqlite
                                               : "postgres:" + args.catalog_postgres;
  lake.extension_directory = lake::DefaultExtensionDirectory();
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
  options.users = *users;
  options.max_connections = args.max_connections;
  options.max_connections_per_ip = args.max_connections_per_ip;
  options.max_failed_logins = args.max_failed_logins;
  options.ban_duration = std::chrono::seconds(args.ban_seconds);
  auto server = serve::Server::Make(options, engine->get());
  if (!server.ok() || !(*server)->Start().ok()) {
    err << "weir serve: cannot start on " << args.host << ":" << args.port << "\n";
    return kExitFailure;
  }
  out << "weir serve: listening on " << args.host << ":" << (*server)->port()
      << " (TLS required, SCRAM-SHA-256)" << std::endl;
  while (!g_serve_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*server)->Stop();
  out << "weir serve: stopped" << std::endl;
  return kExitOk;
}

}  // namespace weir::app
