// `weir maintain --serve`: a long-running loop that inspects every table it is given (and, with a
// Discover function, every table that function finds, asked again each stats interval: the
// tables of a lake that ingest keeps adding to) on an interval, publishes the lake metrics (files,
// a file-size histogram, rows, bytes, snapshots, the oldest snapshot's age, orphans) for /metrics,
// and runs each table's policy actions (policy.h) when they are due.
//
// It never stops on a failure of the lake: a table that cannot be opened or inspected, or an
// action that fails, is logged and counted (`weir_maintain_errors_total`,
// `weir_maintain_runs_total{outcome="error"}`), its `weir_lake_up` gauge drops to 0 while its
// other gauges keep their last values (`weir_lake_report_age_seconds` says how old), its handle
// is dropped and the next round opens it again (with a fresh catalog connection). A Discover
// that fails is logged and counted the same way (stage "list", no table) and asked again the next
// stats interval; until it answers, /readyz says why. Only Stop ends it.
//
// Threading: Run() on one thread (the app's main thread) until the token is stopped; it is
// the only thread that touches the tables. The HTTP server's threads call the collector
// (added to the registry by the constructor) and Ready(), which read a snapshot of the
// reports behind a short lock. The registry must outlive the service.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "lake/catalog.h"
#include "lake/table.h"
#include "maintain/lake_report.h"
#include "maintain/policy.h"
#include "observe/metrics_registry.h"

namespace weir::maintain {

// A table handle with what keeps it valid (its catalog), destroyed table first.
struct OpenedTable {
  std::shared_ptr<lake::Catalog> catalog;
  std::unique_ptr<lake::Table> table;  // nullptr: the table does not exist (yet)
};

struct ServedTable {
  std::string dataset;
  std::string name;  // schema.table
  TablePolicy policy;
  std::vector<PolicyAction> actions;
  // Opens the table; `reconnect` after a failure: through a new catalog connection.
  std::function<Result<OpenedTable>(bool reconnect)> open;
};

// Finds the tables to serve. Tables it names that are not served yet are added (by name); ones
// it no longer names stay (opening them finds them missing).
using Discover = std::function<Result<std::vector<ServedTable>>()>;

class MaintainService {
 public:
  MaintainService(std::vector<ServedTable> tables, int64_t stats_interval_ms,
                  observe::MetricsRegistry* registry, Discover discover = nullptr);
  MaintainService(const MaintainService&) = delete;
  MaintainService& operator=(const MaintainService&) = delete;

  // Rounds until `stop` is requested (a round in progress finishes its current step).
  void Run(std::stop_token stop);

  // Every table's last inspection succeeded (for /readyz), with the first failure's words.
  std::pair<bool, std::string> Ready() const;
  // When the loop last went round (steady clock, for /healthz).
  std::chrono::steady_clock::time_point last_round() const;

 private:
  struct Due {
    int64_t next_ms = 0;
    bool unavailable_logged = false;
  };
  struct State {
    ServedTable served;
    OpenedTable opened;
    bool failed = false;  // the last attempt failed: reconnect on the next
    int64_t next_stats_ms = 0;
    std::vector<Due> due;  // one per action
  };
  // What the collector renders, per table (guarded by mutex_).
  struct Published {
    std::string dataset, table;
    bool up = false;
    bool exists = false;
    std::string error;
    std::optional<TableReport> report;  // the last good one
    int64_t inspected_at_ms = 0;
  };

  void Round(State& state, size_t index, int64_t now_ms);
  // Asks discover_ and adds the tables not served yet.
  void DiscoverTables(int64_t now_ms);
  void Add(ServedTable table);
  void Fail(State& state, size_t index, const std::string& stage, const Status& status);
  // weir_maintain_errors_total{dataset,table,stage} + 1 (a listing's: no dataset or table).
  void CountError(const std::string& dataset, const std::string& table, const std::string& stage);
  void Publish(size_t index, const TableReport& report, int64_t now_ms);
  // The compaction counters of one run of a compaction action.
  void PublishCompaction(const observe::Labels& labels, const CompactionReport& report);
  void Render(std::string& out) const;
  int64_t NextDue(const State& state) const;

  std::vector<State> states_;
  const int64_t stats_interval_ms_;
  observe::MetricsRegistry* registry_;
  Discover discover_;
  int64_t next_discovery_ms_ = 0;
  mutable std::mutex mutex_;
  std::vector<Published> published_;  // guarded by mutex_
  std::string discovery_error_;       // guarded by mutex_; the last Discover's failure
  std::atomic<int64_t> last_round_ns_{0};
};

}  // namespace weir::maintain
