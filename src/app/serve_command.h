// `weir serve`: the PostgreSQL wire endpoint over the lake.
#pragma once

#include <ostream>
#include <string>

namespace weir::app {

struct ServeArgs {
  std::string catalog_sqlite = "weir-lake/catalog.sqlite";
  std::string catalog_postgres;  // a libpq connection string; wins over catalog_sqlite
  std::string host = "127.0.0.1";
  int port = 5432;
  std::string tls_dir = "weir-lake/serve-tls";  // certificate, key and the users file
  int max_connections = 100;
  int max_connections_per_ip = 20;
  int max_failed_logins = 5;
  int ban_seconds = 300;
};

// Serves until SIGTERM/SIGINT; returns the process exit code.
int RunServe(const ServeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
