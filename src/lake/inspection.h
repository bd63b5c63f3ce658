// What `weir maintain` reads of a table: the files its current snapshot is made of, the
// snapshots it keeps, and every object a kept snapshot (or the catalog) still references, in
// the terms of the table's file system. Read-only: inspecting changes nothing.
//
// Both formats fill it from their own catalog (DuckLake: ducklake_data_file and friends;
// Iceberg: the metadata's snapshots, manifest lists and manifests), so the maintenance code
// that counts, checks and sweeps (src/maintain) is written once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>

namespace weir::lake {

enum class LakeFileKind { kData, kDeletes };

// A position delete file (Parquet: `file_path`, `pos`) that applies to a data file and that a
// rewrite of that data file applies: the deleted rows are not written again, and the delete
// file leaves the table with the data file (Table::Rewrite's `remove_deletes`).
struct PositionDeletes {
  std::string path;  // the delete file, in the table's file system
  // The `file_path` value of this data file's rows in it; empty: every row of it applies (a
  // DuckLake delete file belongs to one data file).
  std::string data_file_path;
  // A deletion vector (Iceberg v3): the blob at [vector_offset, vector_offset + vector_length)
  // of the Puffin file `path`, read by Table::ReadDeletionVector; -1: a Parquet delete file.
  // Other vectors of the same Puffin file (other data files') stay in the table.
  int64_t vector_offset = -1;
  int64_t vector_length = 0;
};

// An equality delete file (Iceberg) that applies to a data file, which a rewrite of that data
// file applies by value: the rows of the data file whose columns `field_ids` equal one of the
// delete file's rows (a null equals a null) are not written again. The delete file stays in
// the table while a live data file it applies to remains; the rewrite snapshot drops it once
// none does (Table::Rewrite's `equality_deletes`).
struct EqualityDeletes {
  std::string path;  // the delete file, in the table's file system
  std::vector<int> field_ids;
};

// One file of the current snapshot.
struct LakeFile {
  std::string path;  // the table file system's path
  LakeFileKind kind = LakeFileKind::kData;
  int64_t size_bytes = 0;    // as the catalog records it
  int64_t record_count = 0;  // rows (data files) or deleted rows (delete files)
  // The file's partition values in the table's text form (lake::PartitionValue), one per key
  // of the table's current partitioning.
  std::vector<std::optional<std::string>> partition_values;
  // Whether Table::Rewrite may replace this data file: false when deletes apply to it that a
  // rewrite cannot apply (DuckLake: deletes inlined into the catalog; Iceberg: deletion vectors,
  // position delete files that name other data files too), when it was
  // written under another partitioning than the current one, or when it maps its columns
  // otherwise than by the table's field ids (a file registered from outside).
  bool rewritable = false;
  // Data files: the position delete files a rewrite applies (and drops with it), and how many
  // rows of this file they delete by the catalog's count.
  std::vector<PositionDeletes> deletes;
  int64_t deleted_rows = 0;
  // Why a data file is not rewritable, when that is deletes (empty otherwise).
  std::string not_rewritable_reason;
  // Data files: the equality delete files a rewrite applies by value (their deleted rows are
  // known only once the rows are read: not in deleted_rows).
  std::vector<EqualityDeletes> equality_deletes;
};

// One snapshot the catalog keeps. DuckLake's snapshots belong to the whole catalog, not to
// one table; Iceberg's to the table.
struct LakeSnapshot {
  int64_t id = 0;
  int64_t timestamp_ms = 0;  // when it was committed, ms since the epoch (UTC)
  bool weir_commit = false;  // written by weir's ingest (it carries the offset ledger)
};

struct TableInspection {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  // The table's own directory in `fs`: every object of the table lies under it, and no other
  // table's. Empty when the table has no directory of its own (a DuckLake table whose files
  // lie directly under the catalog's data path), which makes an orphan sweep impossible.
  std::string root;
  std::vector<LakeFile> live;              // the current snapshot's files
  std::vector<LakeSnapshot> snapshots;     // every snapshot kept, oldest first
  std::optional<int64_t> ledger_snapshot;  // the newest snapshot carrying weir's ledger
  // Snapshots an expiry must keep whatever its policy: the current one, every branch and tag
  // head, and (Iceberg, whose ledger lives in snapshot summaries) every snapshot of main's
  // ancestry from the current one back to the ledger's, so that the walk that reads the ledger
  // still reaches it.
  std::set<int64_t> protected_snapshots;
  // The fs paths of every object any kept snapshot, the catalog's deletion queue or the
  // table's metadata references (data and delete files; Iceberg's metadata files, manifest
  // lists and manifests). An object under `root` that is not in here is an orphan.
  std::set<std::string> referenced;
};

// What an expiry did.
struct ExpireResult {
  int64_t expired = 0;  // snapshots removed
  // Objects deleted by the format's own rules: Iceberg deletes what only the removed snapshots
  // referenced at once, as its own expiry does (no reader of a kept snapshot opens them);
  // DuckLake hands such files to its deletion queue, whose entries older than the window
  // ducklake_cleanup_old_files deletes (not listed here: `weir maintain` compares the
  // references before and after).
  std::vector<std::string> deleted;
};

// What a repair that drops data file entries did (`weir maintain fsck --repair`).
struct DropFilesResult {
  int64_t snapshot_id = -1;  // the snapshot that dropped them
  int64_t files = 0;
  int64_t rows = 0;   // the rows those files held: gone from the table from that snapshot on
  int64_t bytes = 0;  // as the catalog recorded them
};

}  // namespace weir::lake
