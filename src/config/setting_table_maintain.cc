// The settings table's rows of `weir maintain` (issue 16): the policies of a dataset's tables
// (compaction target and tiers, snapshot expiry, the orphan sweep, and how often
// `weir maintain --serve` runs each) and the --serve process's own port and refresh interval.
// See setting_table.cc for the rest.
#include "config/setting_rows.h"

namespace weir::config::table_rows {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> MaintainRows() {
  using S = SettingType;
  constexpr Scope kD = Scope::kDataset;
  constexpr int64_t kWeekMs = 7 * kDayMs;
  return {
      {.name = "maintain.http_port",
       .type = S::kInt,
       .min = 0,
       .max = 65535,
       .description = "`weir maintain --serve`: port of its /metrics (the lake metrics), "
                      "/healthz and /readyz; 0 picks a free port (logged). Not `http.port`, so "
                      "that it runs beside `weir ingest` on the same configuration.",
       WEIR_PROCESS_FIELD(maintain_http_port)},
      {.name = "maintain.stats_interval",
       .type = S::kDuration,
       .min = 1000,
       .max = kDayMs,
       .description = "`weir maintain --serve`: how often every table is inspected again for "
                      "the lake metrics (one catalog read and one listing of its directory).",
       WEIR_PROCESS_FIELD(maintain_stats_interval)},
      {.name = "maintain.target_file_size",
       .scope = kD,
       .type = S::kBytes,
       .min = 1 * kMiB,
       .max = 64 * kGiB,
       .description = "Compaction writes data files of this size (the last of a partition "
                      "smaller); the default of `weir maintain compact --target-size`. The "
                      "tiers follow it unless set.",
       WEIR_DATASET_FIELD(maintain.target_file_size)},
      {.name = "maintain.tiers.small",
       .scope = kD,
       .type = S::kBytes,
       .min = 0,
       .max = 64 * kGiB,
       .description = "Compaction tiers: data files below this are small and merged on every "
                      "compaction pass (`maintain.compact.interval`). Below "
                      "`maintain.tiers.large`. Unset: an eighth of "
                      "`maintain.target_file_size`.",
       WEIR_DATASET_FIELD(maintain.small_file_size)},
      {.name = "maintain.tiers.large",
       .scope = kD,
       .type = S::kBytes,
       .min = 1,
       .max = 64 * kGiB,
       .description = "Compaction tiers: data files of at least this size are large and never "
                      "rewritten; those between `maintain.tiers.small` and this are medium, "
                      "merged every `maintain.compact.medium_interval`. At most "
                      "`maintain.target_file_size`. Unset: half of "
                      "`maintain.target_file_size`.",
       WEIR_DATASET_FIELD(maintain.large_file_size)},
      {.name = "maintain.compact.interval",
       .scope = kD,
       .type = S::kDuration,
       .min = 0,
       .max = kWeekMs,
       .description = "`weir maintain --serve`: how often the files below "
                      "`maintain.tiers.small` are compacted (into files of "
                      "`maintain.target_file_size`, per partition, in `sort_by` order); 0 turns "
                      "compaction off, medium files included.",
       WEIR_DATASET_FIELD(maintain.compact_interval)},
      {.name = "maintain.compact.medium_interval",
       .scope = kD,
       .type = S::kDuration,
       .min = 0,
       .max = 4 * kWeekMs,
       .description = "`weir maintain --serve`: how often medium files (below "
                      "`maintain.tiers.large`) are compacted too, once a partition has two; 0 "
                      "never.",
       WEIR_DATASET_FIELD(maintain.compact_medium_interval)},
      {.name = "maintain.expire.older_than",
       .scope = kD,
       .type = S::kDuration,
       .min = 0,
       .max = 3650 * kDayMs,
       .description = "Snapshot expiry removes snapshots committed longer ago than this "
                      "(never a protected one: the current snapshot, a branch or tag head, the "
                      "way to the offset ledger). Also the default of `weir maintain expire "
                      "--older-than`.",
       WEIR_DATASET_FIELD(maintain.expire_older_than)},
      {.name = "maintain.expire.retain_last",
       .scope = kD,
       .type = S::kInt,
       .min = 1,
       .max = 1000000,
       .description = "Snapshot expiry always keeps this many newest snapshots. Also the "
                      "default of `weir maintain expire --retain-last`.",
       WEIR_DATASET_FIELD(maintain.expire_retain_last)},
      {.name = "maintain.expire.queue_window",
       .scope = kD,
       .type = S::kDuration,
       .min = 0,
       .max = 3650 * kDayMs,
       .description = "DuckLake: files DuckLake queued for deletion longer ago than this are "
                      "deleted after an expiry (a reader of an older snapshot may still open a "
                      "younger one). Also the default of `weir maintain expire "
                      "--queue-window`.",
       WEIR_DATASET_FIELD(maintain.expire_queue_window)},
      {.name = "maintain.expire.interval",
       .scope = kD,
       .type = S::kDuration,
       .min = 0,
       .max = kWeekMs,
       .description = "`weir maintain --serve`: how often snapshots are expired; 0 off.",
       WEIR_DATASET_FIELD(maintain.expire_interval)},
      {.name = "maintain.orphans.older_than",
       .scope = kD,
       .type = S::kDuration,
       .min = 60000,
       .max = 3650 * kDayMs,
       .description = "The orphan sweep deletes only objects last modified longer ago than "
                      "this: a younger one may be a flush that has not committed yet. Also the "
                      "default of `weir maintain orphans --older-than`.",
       WEIR_DATASET_FIELD(maintain.orphans_older_than)},
      {.name = "maintain.orphans.interval",
       .scope = kD,
       .type = S::kDuration,
       .min = 0,
       .max = kWeekMs,
       .description = "`weir maintain --serve`: how often orphans are swept; 0 off.",
       WEIR_DATASET_FIELD(maintain.orphans_interval)},
  };
}
#pragma GCC diagnostic pop

}  // namespace weir::config::table_rows
