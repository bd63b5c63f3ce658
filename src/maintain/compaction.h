// Compaction: the small files of a table merged into files of a target size, per partition,
// rows in the dataset's sort order, committed as one rewrite per merge run through
// lake::Table::Rewrite (DuckLake: files ended and begun in one snapshot; Iceberg: a `replace`
// snapshot). Format-neutral, like the rest of `weir maintain`: the plan is made from
// Table::Inspect, the rows stream through SortedMerge into the rolling Parquet writer ingest
// uses, so it is called alike from `weir maintain compact` and from a scheduled policy.
//
// Tiers, by a live data file's size: small (below `small_file_bytes`, default target / 8) are
// merged whenever a partition has `min_small_files` of them; medium (up to `large_file_bytes`,
// default target / 2) only once a partition has `min_medium_files` of them, which is rare;
// large never. Position delete files and Iceberg's deletion vectors are applied while
// rewriting (the deleted rows are not written; the delete files, or the vectors, leave the
// table in the same snapshot), and so are Iceberg's equality delete files, by value
// (maintain/equality_deletes.h; each leaves the table with the last live data file it applies
// to); files other deletes apply to (DuckLake's inlined deletes, Iceberg's partition-scoped
// position deletes), or written under an older partitioning, are left alone
// (lake/inspection.h `rewritable`).
//
// Safe while ingest runs: ingest only adds files, a rewrite only replaces files it read, and the
// offset ledger is never touched. A rewrite that loses the race to a commit is retried (the
// table re-reads its head); one whose inputs are gone (another compaction, an expiry, DuckDB's
// merge) is given up and its new files deleted. Nothing is ever half-committed.
//
// Memory: per merge run, every input holds one decoded batch (inputs up to 4 MiB are read whole,
// so no descriptor stays open per small file), plus one open output row group; a run's inputs
// are capped by `max_merge_inputs` and by `memory_budget_bytes` (summing the whole-read inputs
// and a batch allowance per streamed one). One thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "files/parquet_file_writer.h"
#include "lake/table.h"

namespace weir::maintain {

struct CompactionOptions {
  int64_t target_file_bytes = int64_t{128} << 20;
  int64_t small_file_bytes = 0;  // 0: target / 8
  int64_t large_file_bytes = 0;  // 0: target / 2
  int64_t min_small_files = 2;
  int64_t min_medium_files = 8;
  int64_t max_merge_inputs = 1000;
  int64_t memory_budget_bytes = int64_t{256} << 20;
  int64_t batch_rows = 4096;
  std::vector<lake::SortKey> sort_keys;
  files::FileConfig file;
  int max_attempts = 20;  // commit attempts of one run lost to concurrent commits
  bool dry_run = false;   // plan only
};

// One merge run: files of one partition rewritten together.
struct CompactionRun {
  std::vector<std::optional<std::string>> partition_values;
  std::vector<lake::LakeFile> inputs;
  int64_t input_bytes = 0;
  int64_t input_rows = 0;
  int64_t deleted_rows = 0;  // of input_rows, deleted by the inputs' position delete files
  int64_t delete_files = 0;  // those delete files, dropped with the inputs
  bool medium = false;       // medium files are among the inputs
};

std::vector<CompactionRun> PlanCompaction(const lake::TableInspection& inspection,
                                          const CompactionOptions& options);

struct CompactionReport {
  int64_t runs_planned = 0;
  int64_t runs_committed = 0;
  int64_t runs_given_up = 0;  // inputs no longer live: someone else rewrote or removed them
  int64_t conflicts_retried = 0;
  int64_t files_in = 0, bytes_in = 0, rows = 0;  // of the planned runs (rows: those written)
  int64_t deleted_rows = 0;  // rows of the planned runs' inputs their delete files delete
  // Of the committed runs: the deleted rows left out, and the position delete files that left
  // the table (equality delete files leave it once no live data file they apply to remains:
  // the snapshot's removed-equality-delete-files).
  int64_t deletes_applied = 0, delete_files_dropped = 0;
  // Of deletes_applied, the rows left out by equality delete files (Iceberg upsert tables).
  int64_t equality_deletes_applied = 0;
  // Live data files left alone because deletes apply to them that a rewrite cannot apply (or
  // another partitioning, or columns not mapped by field id): `lake::LakeFile::rewritable`
  // false. Position delete files are applied: their rows are left out of the new files.
  int64_t files_not_rewritable = 0;
  int64_t files_replaced = 0, bytes_replaced = 0;  // the inputs of the committed runs
  int64_t files_out = 0, bytes_out = 0;            // what the committed runs wrote
  bool sorted = true;                              // every run's output is in sort-key order
  double seconds = 0;
  std::vector<int64_t> snapshots;  // committed rewrite snapshots
  std::vector<std::string> notes;  // why runs were given up
};

// Plans and (unless dry_run) carries out the compaction of `table`.
Result<CompactionReport> Compact(lake::Table& table, const CompactionOptions& options);
// The same on an inspection of `table` read just before (a scheduled pass has one).
Result<CompactionReport> Compact(lake::Table& table, const lake::TableInspection& inspection,
                                 const CompactionOptions& options);

nlohmann::json CompactionToJson(const CompactionReport& report, bool dry_run);

}  // namespace weir::maintain
