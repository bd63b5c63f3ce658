// The settings table's rows of WAL mode (issue 13, src/wal): see setting_table.cc for the rest.
#include "config/setting_rows.h"

namespace weir::config::table_rows {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> WalRows() {
  using S = SettingType;
  constexpr Scope kD = Scope::kDataset;
  return {
      {.name = "ingest.mode",
       .type = S::kEnum,
       .allowed = {"direct", "wal"},
       .description =
           "`direct`: each flush is written to the object store and committed to the lake. "
           "`wal`: records are written to a local Parquet write-ahead log (`wal.dir`) first, "
           "uploaded and committed in batches, so consumption continues while the object "
           "store or the catalog is down (docs/ARCHITECTURE.md, \"WAL mode\"); recovery runs "
           "at every start (`weir wal check` prints it). WAL mode reads Kafka only (not "
           "`--from`) and refuses routed datasets; rejected records land in the rejects table "
           "with the rows they travel with (docs/ARCHITECTURE.md, \"Rejects in WAL mode\").",
       WEIR_PROCESS_FIELD(ingest_mode)},
      {.name = "wal.dir",
       .type = S::kString,
       .description = "WAL mode: the directory of the write-ahead log, on a durable local "
                      "volume that belongs to one replica and outlives its restarts (never an "
                      "emptyDir: ready files not yet in the lake are the only copy of their "
                      "records); one subdirectory per dataset. `weir wal ls` and `weir wal "
                      "check` read it.",
       WEIR_PROCESS_FIELD(wal.dir)},
      {.name = "wal.max_file_size",
       .type = S::kBytes,
       .min = 1 * kMiB,
       .max = 16 * kGiB,
       .description = "WAL mode: a segment file reaching this size rotates (with every open "
                      "segment of its Kafka partition).",
       WEIR_PROCESS_FIELD(wal.max_file_size)},
      {.name = "wal.max_file_age",
       .type = S::kDuration,
       .min = 1000,
       .max = 24 * 3600 * 1000LL,
       .description = "WAL mode: a Kafka partition's segments rotate once the oldest is this "
                      "old (checked every 30 s, or every max_file_age when that is shorter).",
       WEIR_PROCESS_FIELD(wal.max_file_age)},
      {.name = "wal.max_open_segments_per_partition",
       .type = S::kInt,
       .min = 1,
       .max = 100000,
       .description = "WAL mode: open segments (one per table partition) of one Kafka "
                      "partition; a record needing one more rotates them all first.",
       WEIR_PROCESS_FIELD(wal.max_open_segments_per_partition)},
      {.name = "wal.disk_high_watermark_pct",
       .type = S::kInt,
       .min = 10,
       .max = 99,
       .description = "WAL mode: at this percentage of the WAL volume used (measured every "
                      "5 s) every consumer pauses; 5 points below it they resume. The records "
                      "wait in Kafka.",
       WEIR_PROCESS_FIELD(wal.disk_high_watermark_pct)},
      {.name = "wal.commit_interval",
       .type = S::kDuration,
       .min = 1000,
       .max = 3600 * 1000LL,
       .description = "WAL mode: every interval (plus or minus a per-process jitter of up to "
                      "10 %) each dataset's uploaded files are committed in one lake commit.",
       WEIR_PROCESS_FIELD(wal.commit_interval)},
      {.name = "wal.bloom_sidecar",
       .scope = kD,
       .type = S::kBool,
       .description = "WAL mode: the uploader also writes, after each uploaded data file "
                      "`wal-<uuid>.parquet`, a bloom-filter sidecar `wal-<uuid>.bloom` next to "
                      "it: the file's Parquet split-block filters of every row group and "
                      "`bloom_filter_columns` column, readable without opening the data file "
                      "(docs/WAL_BLOOM_SIDECAR.md). Never read by recovery or the committer. "
                      "Needs `ingest.mode: wal` and a non-empty `bloom_filter_columns` "
                      "(refused at startup otherwise).",
       WEIR_DATASET_FIELD(wal_bloom_sidecar)},
  };
}
#pragma GCC diagnostic pop

}  // namespace weir::config::table_rows
