// The maintenance policies of one table and the actions `weir maintain --serve` runs for them
// on a schedule. An action is a name, an interval and a function of the table and its fresh
// inspection, so the scheduler (maintain_service.h) knows none of them: compaction's two tiers,
// expiry and the orphan sweep are here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "lake/table.h"
#include "maintain/compaction.h"
#include "maintain/lake_report.h"

namespace weir::maintain {

// A dataset's maintain.* settings (config/settings.h), built in one place by the app.
struct TablePolicy {
  int64_t target_file_size = 0;
  int64_t small_file_size = 0;      // below: merged every compact_interval_ms
  int64_t large_file_size = 0;      // at or above: never rewritten
  int64_t compact_interval_ms = 0;  // 0: off
  int64_t compact_medium_interval_ms = 0;
  int64_t expire_older_than_ms = 0;
  int64_t expire_retain_last = 1;
  int64_t expire_queue_window_ms = 0;
  int64_t expire_interval_ms = 0;
  int64_t orphans_older_than_ms = 0;
  int64_t orphans_interval_ms = 0;
};

// What one run of an action did, for the log and the counters.
struct ActionOutcome {
  std::string summary;   // one line: "expired 3 snapshot(s)"
  bool changed = false;  // the table changed: inspect it again before the metrics
  int64_t snapshots_expired = 0;
  int64_t objects_deleted = 0;
  int64_t bytes_deleted = 0;
  // Compaction: what its rewrites replaced and wrote.
  std::optional<CompactionReport> compaction = std::nullopt;
};

struct ActionContext {
  lake::Table& table;
  const lake::TableInspection& inspection;  // read just before the action
  const TableReport& report;                // of that inspection, with the orphan listing
  const TablePolicy& policy;
  int64_t now_ms = 0;
};

struct PolicyAction {
  std::string name;         // "expire", "orphans", "compact": the `action` label
  int64_t interval_ms = 0;  // 0: never run
  // One run. An error is logged and counted, and the action runs again at the next round; a
  // NotImplemented error means the build lacks it (logged once, counted as unavailable).
  std::function<Result<ActionOutcome>(const ActionContext&)> run;
};

// Snapshot expiry by age and count (SnapshotsToExpire, then the format's ExpireSnapshots).
PolicyAction ExpireAction(const TablePolicy& policy);
// Deleting orphans older than the window (SweepOrphans).
PolicyAction OrphanAction(const TablePolicy& policy);
// Compaction's tiers (maintain/compaction.h) on their schedules: kSmall ("compact", every
// compact_interval_ms) merges only the files below small_file_size; kMedium
// ("compact_medium", every compact_medium_interval_ms) merges the medium ones too, whenever a
// partition has two of them; compact_interval_ms 0 turns both off. Large files are never
// rewritten. `base` carries what the policy
// does not (the dataset's Parquet settings and sort keys); the target and the tiers are the
// policy's.
enum class CompactionTier { kSmall, kMedium };
CompactionOptions TierOptions(const TablePolicy& policy, CompactionOptions base,
                              CompactionTier tier);
PolicyAction CompactAction(const TablePolicy& policy, const CompactionOptions& base,
                           CompactionTier tier);

// The actions of a table, in the order a round runs them: compaction first (it makes the
// snapshots and the replaced files that expiry and the sweep then release), expiry, orphans.
std::vector<PolicyAction> StandardActions(const TablePolicy& policy,
                                          const CompactionOptions& compaction);

}  // namespace weir::maintain
