// The metric families of `weir serve`, registered once per server and shared by its sessions.
//
// Threading: the series are lock-free; any session thread updates them.
#pragma once

#include "observe/metrics_registry.h"
#include "observe/status_model.h"

namespace weir::serve {

struct ServeMetrics {
  explicit ServeMetrics(observe::MetricsRegistry& registry);

  observe::Gauge& sessions;                // open sessions
  observe::Counter& connections;           // accepted connections
  observe::Counter& queries_ok;            // statements that succeeded
  observe::Counter& queries_error;         // statements that failed
  observe::Counter& queries_cancelled;     // 57014: cancel requests and statement timeouts
  observe::Histogram& query_seconds;       // statement durations
  observe::Counter& auth_failures;         // failed logins
  observe::Counter& bans;                  // addresses banned after failed logins
  observe::Counter& refused;               // connections refused by caps or bans
  observe::Counter& bytes_sent;            // bytes written to clients
  observe::Counter& rows_sent;             // rows sent (DataRow and COPY rows)
  observe::Counter& idle_timeouts;         // sessions ended by the idle-session timeout
  observe::Counter& accept_errors;         // accept() failures (out of descriptors or memory)
  observe::ServeStatus* status = nullptr;  // /status: sessions, statements (optional)
};

}  // namespace weir::serve
