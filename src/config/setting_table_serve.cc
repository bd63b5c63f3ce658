// The settings table's rows for `weir serve` (serve.*): see setting_table.cc for the rest.
#include "config/setting_rows.h"

namespace weir::config::table_rows {

// Designated initializers name only what differs from Setting's defaults.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> ServeRows() {
  using S = SettingType;
  return {
      // weir serve.
      {.name = "serve.host",
       .type = S::kString,
       .description = "Address the PostgreSQL endpoint (and serve.http_port) listens on: an IPv4 "
                      "or IPv6 address, or a host name resolved at start (every address it "
                      "stands for); `0.0.0.0` or `::` for every interface. One that does not "
                      "resolve or cannot be bound stops startup.",
       WEIR_SERVE_FIELD(host)},
      {.name = "serve.port",
       .type = S::kInt,
       .min = 0,
       .max = 65535,
       .description = "PostgreSQL protocol port; 0 picks a free one.",
       WEIR_SERVE_FIELD(port)},
      {.name = "serve.tls_dir",
       .type = S::kString,
       .description = "Directory of the TLS certificate and key (a self-signed pair is created "
                      "when missing) and of the `users` file (SCRAM verifiers, never passwords).",
       WEIR_SERVE_FIELD(tls_dir)},
      {.name = "serve.max_connections",
       .type = S::kInt,
       .min = 1,
       .max = 100000,
       .description = "Connections in total; more are answered with FATAL 53300.",
       WEIR_SERVE_FIELD(max_connections)},
      {.name = "serve.max_connections_per_ip",
       .type = S::kInt,
       .min = 1,
       .max = 100000,
       .description = "Connections per client address; more are answered with FATAL 53300.",
       WEIR_SERVE_FIELD(max_connections_per_ip)},
      {.name = "serve.max_failed_logins",
       .type = S::kInt,
       .min = 1,
       .max = 10000,
       .description = "Failed logins from one address within 60 s before it is banned.",
       WEIR_SERVE_FIELD(max_failed_logins)},
      {.name = "serve.ban_seconds",
       .type = S::kInt,
       .min = 1,
       .max = 604800,
       .description = "Seconds a banned address is refused (FATAL 28000).",
       WEIR_SERVE_FIELD(ban_seconds)},
      {.name = "serve.statement_timeout",
       .type = S::kDuration,
       .min = 0,
       .max = 7 * kDayMs,
       .description = "Default of each session's statement_timeout (SET changes it); a statement "
                      "running longer is cancelled with 57014. 0: none.",
       WEIR_SERVE_FIELD(statement_timeout)},
      {.name = "serve.idle_session_timeout",
       .type = S::kDuration,
       .min = 0,
       .max = 7 * kDayMs,
       .description = "A session idle longer is ended with FATAL 57P05. 0: never.",
       WEIR_SERVE_FIELD(idle_session_timeout)},
      {.name = "serve.shutdown_timeout",
       .type = S::kDuration,
       .min = 0,
       .max = 3600000,
       .description = "On SIGTERM, time running statements get before their sessions are ended "
                      "with 57P01.",
       WEIR_SERVE_FIELD(shutdown_timeout)},
      {.name = "serve.authentication_timeout",
       .type = S::kDuration,
       .min = 1000,
       .max = 600000,
       .description = "Time from accepting a connection to the end of its login (the TLS "
                      "handshake and every read and write before authentication, as "
                      "PostgreSQL's authentication_timeout); a connection not logged in by then "
                      "is closed.",
       WEIR_SERVE_FIELD(authentication_timeout)},
      {.name = "serve.send_timeout",
       .type = S::kDuration,
       .min = 0,
       .max = 7 * kDayMs,
       .description = "A session whose client takes none of its results for this long (the "
                      "socket's send buffer stays full) is ended. 0: never; SIGTERM still ends "
                      "it after serve.shutdown_timeout.",
       WEIR_SERVE_FIELD(send_timeout)},
      {.name = "serve.session_memory",
       .type = S::kBytes,
       .min = kMiB,
       .max = 1024 * kGiB,
       .description = "Buffered results (open portals and cursors) one session may hold; beyond "
                      "it the statement fails with 53200.",
       WEIR_SERVE_FIELD(session_memory_bytes)},
      {.name = "serve.memory_limit",
       .type = S::kString,
       .default_note = "DuckDB's (80% of RAM)",
       .description = "DuckDB's memory_limit of each of the server's two DuckDB databases "
                      "(write users' and read users'), in DuckDB's grammar: a number and a "
                      "unit (`4GB`, `1.5GiB`, `512MB`).",
       WEIR_SERVE_FIELD(memory_limit)},
      {.name = "serve.threads",
       .type = S::kInt,
       .min = 0,
       .max = 4096,
       .description = "DuckDB worker threads; 0: DuckDB's default (one per core).",
       WEIR_SERVE_FIELD(threads)},
      {.name = "serve.http_port",
       .type = S::kInt,
       .min = -1,
       .max = 65535,
       .description = "Port of /metrics, /healthz and /readyz on serve.host; -1 turns HTTP off, "
                      "0 picks a free port.",
       WEIR_SERVE_FIELD(http_port)},
      {.name = "serve.query_log",
       .type = S::kBool,
       .description = "One log line per statement (user, application, statement, rows, "
                      "SQLSTATE).",
       WEIR_SERVE_FIELD(query_log)},
      {.name = "serve.iceberg_timeout",
       .type = S::kDuration,
       .min = 1000,
       .max = 3600000,
       .description = "Iceberg (lake.format iceberg): the deadline of each HTTP request DuckDB's "
                      "iceberg extension makes (the REST catalog, object storage), in whole "
                      "seconds; DuckDB retries a failed request 3 times, so a dead or stalling "
                      "catalog stops startup, or fails a query, after about 4 times this.",
       WEIR_SERVE_FIELD(iceberg_timeout)},
      {.name = "serve.iceberg_locations",
       .type = S::kStringList,
       .default_note = "the warehouse roots of the tables found at startup",
       .description = "Iceberg (lake.format iceberg): the directories or object-store prefixes "
                      "(`s3://bucket/warehouse/`) under which sessions may read the tables' "
                      "files (serve's sandbox). Unset: for each table found at startup, the "
                      "`<root>` of a location `<root>/<namespace>/<table>` (or "
                      "`<root>/<namespace>.db/<table>`), else the table's location itself; a "
                      "table made later elsewhere is readable after a restart.",
       WEIR_SERVE_FIELD(iceberg_locations)},
  };
}
#pragma GCC diagnostic pop

}  // namespace weir::config::table_rows
