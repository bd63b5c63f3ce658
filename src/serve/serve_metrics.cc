#include "serve/serve_metrics.h"

namespace weir::serve {

ServeMetrics::ServeMetrics(observe::MetricsRegistry& registry)
    : sessions(registry.Gauge("weir_serve_sessions", "Open sessions of weir serve.", {})),
      connections(registry.Counter("weir_serve_connections_total",
                                   "Connections accepted by weir serve.", {})),
      queries_ok(registry.Counter("weir_serve_queries_total",
                                  "Statements run by weir serve, by outcome.", {{"status", "ok"}})),
      queries_error(registry.Counter("weir_serve_queries_total",
                                     "Statements run by weir serve, by outcome.",
                                     {{"status", "error"}})),
      queries_cancelled(registry.Counter("weir_serve_queries_total",
                                         "Statements run by weir serve, by outcome.",
                                         {{"status", "cancelled"}})),
      query_seconds(registry.Histogram("weir_serve_query_duration_seconds",
                                       "Duration of statements run by weir serve.", {})),
      auth_failures(
          registry.Counter("weir_serve_auth_failures_total", "Failed logins to weir serve.", {})),
      bans(registry.Counter("weir_serve_bans_total",
                            "Client addresses banned after repeated failed logins.", {})),
      refused(registry.Counter("weir_serve_connections_refused_total",
                               "Connections refused by a ban or a connection cap.", {})),
      bytes_sent(registry.Counter("weir_serve_bytes_sent_total",
                                  "Bytes weir serve wrote to its clients.", {})),
      rows_sent(registry.Counter("weir_serve_rows_sent_total",
                                 "Rows weir serve sent to its clients.", {})),
      idle_timeouts(registry.Counter("weir_serve_idle_timeouts_total",
                                     "Sessions ended by the idle-session timeout.", {})),
      accept_errors(registry.Counter(
          "weir_serve_accept_errors_total",
          "Failed accept() calls (EMFILE, ENFILE, ENOBUFS, ENOMEM, ...), each followed by a "
          "backoff.",
          {})) {}

}  // namespace weir::serve
