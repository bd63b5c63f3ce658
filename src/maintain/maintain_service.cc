#include "maintain/maintain_service.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "observe/exposition.h"

namespace weir::maintain {
namespace {

observe::Labels TableLabels(const std::string& dataset, const std::string& table) {
  return {{"dataset", dataset}, {"table", table}};
}

}  // namespace

void MaintainService::CountError(const std::string& dataset, const std::string& table,
                                 const std::string& stage) {
  observe::Labels labels = TableLabels(dataset, table);
  labels["stage"] = stage;
  registry_
      ->Counter("weir_maintain_errors_total",
                "Failures to open or inspect a table in `weir maintain --serve` (the lake "
                "metrics then keep their last values; weir_lake_up is 0).",
                labels)
      .Increment();
}

MaintainService::MaintainService(std::vector<ServedTable> tables, int64_t stats_interval_ms,
                                 observe::MetricsRegistry* registry, Discover discover)
    : stats_interval_ms_(stats_interval_ms), registry_(registry), discover_(std::move(discover)) {
  for (ServedTable& t : tables) Add(std::move(t));
  registry_->AddCollector([this](std::string& out) { Render(out); });
}

void MaintainService::Add(ServedTable table) {
  Published p;
  p.dataset = table.dataset;
  p.table = table.name;
  State s;
  s.due.resize(table.actions.size());
  s.served = std::move(table);
  states_.push_back(std::move(s));
  std::lock_guard lock(mutex_);
  published_.push_back(std::move(p));
}

void MaintainService::DiscoverTables(int64_t now_ms) {
  next_discovery_ms_ = now_ms + stats_interval_ms_;
  auto found = discover_();
  if (!found.ok()) {
    spdlog::warn("listing the tables to maintain failed: {}; trying again in {} ms",
                 found.status().message(), stats_interval_ms_);
    CountError("", "", "list");
    std::lock_guard lock(mutex_);
    discovery_error_ = found.status().message();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    discovery_error_.clear();
  }
  for (ServedTable& table : *found) {
    const bool served = std::any_of(states_.begin(), states_.end(),
                                    [&](const State& s) { return s.served.name == table.name; });
    if (served) continue;
    spdlog::info("maintaining table {}", table.name);
    Add(std::move(table));
  }
}

void MaintainService::Run(std::stop_token stop) {
  std::mutex wait_mutex;
  std::condition_variable_any wake;
  while (!stop.stop_requested()) {
    last_round_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count());
    if (discover_ && NowUnixMillis() >= next_discovery_ms_) DiscoverTables(NowUnixMillis());
    int64_t next = NowUnixMillis() + stats_interval_ms_;
    if (discover_) next = std::min(next, next_discovery_ms_);
    for (size_t i = 0; i < states_.size() && !stop.stop_requested(); ++i) {
      State& state = states_[i];
      if (NowUnixMillis() >= NextDue(state)) Round(state, i, NowUnixMillis());
      next = std::min(next, NextDue(state));
    }
    std::unique_lock lock(wait_mutex);
    const auto wait_ms = std::max<int64_t>(next - NowUnixMillis(), 10);
    wake.wait_for(lock, stop, std::chrono::milliseconds(wait_ms), [] { return false; });
  }
}

int64_t MaintainService::NextDue(const State& state) const {
  int64_t next = state.next_stats_ms;
  for (size_t a = 0; a < state.due.size(); ++a) {
    if (state.served.actions[a].interval_ms > 0) next = std::min(next, state.due[a].next_ms);
  }
  return next;
}

void MaintainService::Round(State& state, size_t index, int64_t now_ms) {
  const ServedTable& t = state.served;
  // Whatever happens, the table is looked at again after one stats interval.
  state.next_stats_ms = now_ms + stats_interval_ms_;
  if (state.opened.table == nullptr) {
    auto opened = t.open(state.failed);
    if (!opened.ok()) return Fail(state, index, "open", opened.status());
    state.opened = std::move(*opened);
    if (state.opened.table == nullptr) {
      state.failed = false;
      std::lock_guard lock(mutex_);
      published_[index].up = true;
      published_[index].exists = false;
      published_[index].error.clear();
      return;
    }
  }
  lake::Table& table = *state.opened.table;
  auto inspection = table.Inspect();
  if (!inspection.ok()) return Fail(state, index, "inspect", inspection.status());
  const ReportOptions options{.now_ms = now_ms, .list_objects = true, .check_files = false};
  auto report = BuildReport(*inspection, options);
  if (!report.ok()) return Fail(state, index, "inspect", report.status());
  report->dataset = t.dataset;
  report->table = t.name;
  state.failed = false;
  Publish(index, *report, now_ms);

  for (size_t a = 0; a < t.actions.size(); ++a) {
    const PolicyAction& action = t.actions[a];
    Due& due = state.due[a];
    if (action.interval_ms <= 0 || now_ms < due.next_ms) continue;
    const observe::Labels labels = TableLabels(t.dataset, t.name);
    auto counted = [&](const char* outcome) {
      observe::Labels l = labels;
      l["action"] = action.name;
      l["outcome"] = outcome;
      registry_
          ->Counter("weir_maintain_runs_total",
                    "Policy runs of `weir maintain --serve` by table, action and outcome "
                    "(ok, error, unavailable: not part of this build).",
                    l)
          .Increment();
    };
    const ActionContext context{table, *inspection, *report, t.policy, now_ms};
    auto outcome = action.run(context);
    if (!outcome.ok()) {
      if (outcome.status().IsNotImplemented()) {
        due.next_ms = now_ms + action.interval_ms;
        counted("unavailable");
        if (!due.unavailable_logged) {
          spdlog::info("table {}: {}: {} (the policy is skipped)", t.name, action.name,
                       outcome.status().message());
          due.unavailable_logged = true;
        }
        continue;
      }
      // Tried again at the next round, not a whole interval later.
      due.next_ms = now_ms + std::min(action.interval_ms, stats_interval_ms_);
      counted("error");
      spdlog::warn("table {}: {} failed: {}; trying again in {} ms", t.name, action.name,
                   outcome.status().message(), due.next_ms - now_ms);
      // The failure may be the catalog's: the handle is opened again next round.
      state.opened = OpenedTable{};
      state.failed = true;
      return;
    }
    due.next_ms = now_ms + action.interval_ms;
    counted("ok");
    if (outcome->snapshots_expired > 0) {
      registry_
          ->Counter("weir_maintain_snapshots_expired_total",
                    "Snapshots `weir maintain --serve` expired, by table.", labels)
          .Increment(static_cast<double>(outcome->snapshots_expired));
    }
    observe::Labels with_action = labels;
    with_action["action"] = action.name;
    registry_
        ->Counter("weir_maintain_objects_deleted_total",
                  "Objects `weir maintain --serve` deleted, by table and action.", with_action)
        .Increment(static_cast<double>(outcome->objects_deleted));
    registry_
        ->Counter("weir_maintain_bytes_deleted_total",
                  "Bytes of the orphans `weir maintain --serve` deleted, by table and action.",
                  with_action)
        .Increment(static_cast<double>(outcome->bytes_deleted));
    if (outcome->compaction) PublishCompaction(with_action, *outcome->compaction);
    spdlog::info("table {}: {}: {}", t.name, action.name, outcome->summary);
    if (outcome->changed) {
      // The metrics show the table as the action left it.
      auto after = table.Inspect();
      auto fresh = after.ok() ? BuildReport(*after, options) : Result<TableReport>(after.status());
      if (!fresh.ok()) return Fail(state, index, "inspect", fresh.status());
      fresh->dataset = t.dataset;
      fresh->table = t.name;
      Publish(index, *fresh, now_ms);
      *inspection = std::move(*after);
      *report = std::move(*fresh);
    }
  }
}

void MaintainService::PublishCompaction(const observe::Labels& labels,
                                        const CompactionReport& report) {
  const auto add = [&](const char* name, const char* help, int64_t value) {
    registry_->Counter(name, help, labels).Increment(static_cast<double>(value));
  };
  add("weir_maintain_compaction_runs_total",
      "Compaction runs (one rewrite snapshot each) `weir maintain --serve` committed, by table "
      "and tier (action compact: small files; compact_medium: medium ones too).",
      report.runs_committed);
  add("weir_maintain_compaction_runs_given_up_total",
      "Compaction runs given up because their inputs were no longer live (another compaction, "
      "an expiry, DuckDB's own merge) or their commit kept losing to concurrent commits.",
      report.runs_given_up);
  add("weir_maintain_compaction_conflicts_total",
      "Compaction commits that lost to a concurrent commit and were retried.",
      report.conflicts_retried);
  add("weir_maintain_compaction_files_replaced_total",
      "Data files compaction replaced (the inputs of committed runs).", report.files_replaced);
  add("weir_maintain_compaction_bytes_replaced_total",
      "Bytes of the data files compaction replaced.", report.bytes_replaced);
  add("weir_maintain_compaction_files_written_total", "Data files compaction wrote and committed.",
      report.files_out);
  add("weir_maintain_compaction_bytes_written_total",
      "Bytes of the data files compaction wrote and committed.", report.bytes_out);
}

void MaintainService::Fail(State& state, size_t index, const std::string& stage,
                           const Status& status) {
  const ServedTable& t = state.served;
  spdlog::warn("table {} (dataset {}): {} failed: {}; trying again in {} ms", t.name, t.dataset,
               stage, status.message(), stats_interval_ms_);
  CountError(t.dataset, t.name, stage);
  state.opened = OpenedTable{};
  state.failed = true;
  std::lock_guard lock(mutex_);
  published_[index].up = false;
  published_[index].error = fmt::format("{}: {}", stage, status.message());
}

void MaintainService::Publish(size_t index, const TableReport& report, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  Published& p = published_[index];
  p.up = true;
  p.exists = true;
  p.error.clear();
  p.report = report;
  p.inspected_at_ms = now_ms;
}

std::pair<bool, std::string> MaintainService::Ready() const {
  std::lock_guard lock(mutex_);
  if (!discovery_error_.empty()) return {false, "listing the tables: " + discovery_error_};
  for (const Published& p : published_) {
    if (!p.up) {
      return {false, p.error.empty() ? p.table + ": not inspected yet" : p.table + ": " + p.error};
    }
  }
  return {true, ""};
}

std::chrono::steady_clock::time_point MaintainService::last_round() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_round_ns_.load()));
}

void MaintainService::Render(std::string& out) const {
  using observe::GaugeSample;
  std::vector<GaugeSample> up, data_files, delete_files, rows, bytes, by_size, snapshots,
      oldest_age, orphan_files, orphan_bytes, report_age;
  const int64_t now = NowUnixMillis();
  {
    std::lock_guard lock(mutex_);
    for (const Published& p : published_) {
      const observe::Labels labels = TableLabels(p.dataset, p.table);
      up.push_back({labels, p.up ? 1.0 : 0.0});
      if (!p.report) continue;
      const TableReport& r = *p.report;
      const auto d = [](int64_t v) { return static_cast<double>(v); };
      data_files.push_back({labels, d(r.data_files)});
      delete_files.push_back({labels, d(r.delete_files)});
      rows.push_back({labels, d(r.rows)});
      bytes.push_back({labels, d(r.bytes)});
      int64_t cumulative = 0;
      for (size_t i = 0; i < kSizeBuckets; ++i) {
        cumulative += r.size_histogram[i];
        observe::Labels bucket = labels;
        bucket["le"] = i < kSizeBucketUpperBounds.size() ? std::to_string(kSizeBucketUpperBounds[i])
                                                         : std::string("+Inf");
        by_size.push_back({std::move(bucket), d(cumulative)});
      }
      snapshots.push_back({labels, d(r.snapshots)});
      if (r.oldest_snapshot_age_ms) {
        // Aged to the scrape: the oldest snapshot's commit time is fixed.
        oldest_age.push_back(
            {labels, d(*r.oldest_snapshot_age_ms + now - p.inspected_at_ms) / 1e3});
      }
      if (r.listed) {
        int64_t orphaned = 0;
        for (const Orphan& o : r.orphans) orphaned += o.size_bytes;
        orphan_files.push_back({labels, d(static_cast<int64_t>(r.orphans.size()))});
        orphan_bytes.push_back({labels, d(orphaned)});
      }
      report_age.push_back({labels, d(now - p.inspected_at_ms) / 1e3});
    }
  }
  observe::AppendGauge(out, "weir_lake_up",
                       "1 when the table's last inspection succeeded, 0 while the lake fails "
                       "(the other weir_lake_* gauges then keep their last values).",
                       up);
  const auto family = [&](const char* name, const char* help,
                          const std::vector<GaugeSample>& samples) {
    if (!samples.empty()) observe::AppendGauge(out, name, help, samples);
  };
  family("weir_lake_data_files", "Data files of the table's current snapshot.", data_files);
  family("weir_lake_delete_files", "Delete files of the table's current snapshot.", delete_files);
  family("weir_lake_rows", "Rows in the current snapshot's data files (deletes not subtracted).",
         rows);
  family("weir_lake_bytes", "Bytes of the current snapshot's files, as the catalog records them.",
         bytes);
  family("weir_lake_data_files_by_size",
         "Data files of the current snapshot of at most `le` bytes (cumulative, as a "
         "histogram's buckets).",
         by_size);
  family("weir_lake_snapshots", "Snapshots the catalog keeps (DuckLake: the catalog's).",
         snapshots);
  family("weir_lake_oldest_snapshot_age_seconds", "Age of the oldest snapshot kept.", oldest_age);
  family("weir_lake_orphan_files",
         "Objects under the table's directory that no kept snapshot references (any age).",
         orphan_files);
  family("weir_lake_orphan_bytes", "Bytes of those orphans.", orphan_bytes);
  family("weir_lake_report_age_seconds", "Time since the table's last successful inspection.",
         report_age);
}

}  // namespace weir::maintain
