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
};

// Serves until SIGTERM/SIGINT; returns the process exit code.
int RunServe(const ServeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
