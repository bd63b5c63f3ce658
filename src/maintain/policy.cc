#include "maintain/policy.h"

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

PolicyAction CompactAction(const TablePolicy& policy) {
  return {"compact", policy.compact_interval_ms, [](const ActionContext&) -> Result<ActionOutcome> {
            return Status::NotImplemented("compaction not available in this build");
          }};
}

std::vector<PolicyAction> StandardActions(const TablePolicy& policy) {
  return {CompactAction(policy), ExpireAction(policy), OrphanAction(policy)};
}

}  // namespace weir::maintain
