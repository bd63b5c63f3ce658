#include "maintain/policy.h"

#include <limits>

#include <fmt/format.h>

namespace weir::maintain {

PolicyAction ExpireAction(const TablePolicy& policy) {
  return {"expire", policy.expire_interval_ms, [](const ActionContext& c) -> Result<ActionOutcome> {
            const std::vector<int64_t> ids =
                SnapshotsToExpire(c.inspection,
                                  {.older_than_ms = c.policy.expire_older_than_ms,
                                   .retain_last = c.policy.expire_retain_last},
                                  c.now_ms);
            // Also with no snapshot to expire: DuckLake then deletes what its queue has held
            // longer than the window.
            WEIR_ASSIGN_OR_RAISE(auto expired,
                                 c.table.ExpireSnapshots(ids, c.policy.expire_queue_window_ms));
            ActionOutcome out;
            out.snapshots_expired = expired.expired;
            out.objects_deleted = static_cast<int64_t>(expired.deleted.size());
            out.changed = expired.expired > 0 || !expired.deleted.empty();
            out.summary = fmt::format("expired {} snapshot(s), deleted {} object(s)",
                                      expired.expired, expired.deleted.size());
            return out;
          }};
}

PolicyAction OrphanAction(const TablePolicy& policy) {
  return {"orphans", policy.orphans_interval_ms,
          [](const ActionContext& c) -> Result<ActionOutcome> {
            WEIR_ASSIGN_OR_RAISE(auto swept,
                                 SweepOrphans(c.inspection, c.report, c.now_ms,
                                              c.policy.orphans_older_than_ms, /*dry_run=*/false));
            ActionOutcome out;
            out.objects_deleted = swept.deleted;
            out.bytes_deleted = swept.deleted_bytes;
            out.changed = swept.deleted > 0;
            out.summary = fmt::format("deleted {} orphan(s) ({} bytes); kept {} younger",
                                      swept.deleted, swept.deleted_bytes, swept.kept_young);
            return out;
          }};
}

CompactionOptions TierOptions(const TablePolicy& policy, CompactionOptions base,
                              CompactionTier tier) {
  if (policy.target_file_size > 0) base.target_file_bytes = policy.target_file_size;
  if (policy.small_file_size > 0) base.small_file_bytes = policy.small_file_size;
  if (policy.large_file_size > 0) base.large_file_bytes = policy.large_file_size;
  base.min_small_files = 2;
  // The small pass never takes a medium file; the medium pass, rare by its interval, takes
  // any two of a partition.
  base.min_medium_files = tier == CompactionTier::kSmall ? std::numeric_limits<int64_t>::max() : 2;
  base.dry_run = false;
  return base;
}

PolicyAction CompactAction(const TablePolicy& policy, const CompactionOptions& base,
                           CompactionTier tier) {
  const bool small = tier == CompactionTier::kSmall;
  // compact_interval_ms 0 turns compaction off, both tiers.
  const int64_t interval = policy.compact_interval_ms <= 0 ? 0
                           : small                         ? policy.compact_interval_ms
                                                           : policy.compact_medium_interval_ms;
  return {
      small ? "compact" : "compact_medium", interval,
      [options = TierOptions(policy, base, tier)](const ActionContext& c) -> Result<ActionOutcome> {
        WEIR_ASSIGN_OR_RAISE(CompactionReport report, Compact(c.table, c.inspection, options));
        ActionOutcome out;
        out.changed = report.runs_committed > 0;
        out.summary = fmt::format(
            "merged {} file(s) ({} bytes) into {} ({} bytes) in {} of {} run(s); {} given "
            "up, {} conflict(s) retried, {} file(s) not rewritable",
            report.files_in, report.bytes_in, report.files_out, report.bytes_out,
            report.runs_committed, report.runs_planned, report.runs_given_up,
            report.conflicts_retried, report.files_not_rewritable);
        out.compaction = std::move(report);
        return out;
      }};
}

std::vector<PolicyAction> StandardActions(const TablePolicy& policy,
                                          const CompactionOptions& compaction) {
  return {CompactAction(policy, compaction, CompactionTier::kSmall),
          CompactAction(policy, compaction, CompactionTier::kMedium), ExpireAction(policy),
          OrphanAction(policy)};
}

}  // namespace weir::maintain
