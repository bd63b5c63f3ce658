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
  int statement_timeout_ms = 0;       // default statement_timeout (0: none)
  int idle_session_timeout_s = 3600;  // sessions idle longer are ended (57P05; 0: never)
  int shutdown_timeout_s = 30;        // grace for running statements on SIGTERM
  int session_memory_mb = 256;        // buffered results (open portals, cursors) per session
  std::string memory_limit;           // DuckDB's memory_limit for the process ("": DuckDB's)
  int threads = 0;                    // DuckDB worker threads (0: DuckDB's default)
  int http_port = -1;                 // /metrics /healthz /readyz (-1: off, 0: any port)
  bool query_log = true;              // one log line per statement
  std::string add_user;               // add (or replace) this user in the users file and exit
  std::string role = "write";         // the added user's role: read or write
};

// Serves until SIGTERM/SIGINT; returns the process exit code.
int RunServe(const ServeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
