// A lake table as the pipeline sees it: evolve its schema, partition rows, read the offset
// ledger, commit(files, ledger ranges) → CommitResult.
//
// The pipeline never sees SQL, Avro or HTTP: a format (DuckLake, Iceberg) implements Table and
// Catalog (lake/catalog.h). Commits are exactly-once through the offset ledger: each commit
// carries, per Kafka partition, the offset range its files cover, and lands only if the ledger
// still holds the range's start (docs/ARCHITECTURE.md, "The lake interface").
//
// Every result a caller must act on differently is a typed outcome (CommitStatus,
// EvolveStatus), never an error code to match; an error Status means the operation failed and
// is retriable or fatal by its ErrorClass.
//
// Threading: a Table is used by one thread at a time (a dataset's flush thread, or the poll
// thread's own ledger handle); each has its own catalog connection.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>

#include "base/status.h"
#include "files/parquet_file_writer.h"
#include "lake/inspection.h"
#include "lake/table_spec.h"

namespace weir::lake {

// The half-open offset range [start, end) of one Kafka partition covered by a commit.
// `start` is the ledger value the commit expects to find (the fence).
struct OffsetRange {
  std::string topic;
  int32_t partition = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// One partition value in the table's own text form (what Partition computes and NewFilePath
// and DataFile take back); nullopt is a null value.
using PartitionValue = std::optional<std::string>;

// The rows of a batch that share one partition tuple.
struct PartitionGroup {
  std::vector<PartitionValue> values;  // one per partition key
  std::vector<int64_t> rows;           // row indices into the batch, ascending
};

// A data file written under the table's location, with the partition values of its rows.
struct DataFile {
  std::string relative_path;  // under the table's data directory (NewFilePath)
  files::FileInfo info;
  std::vector<PartitionValue> partition_values;  // one per partition key
};

class Table;

// An upsert commit's deletes (docs/ARCHITECTURE.md, "Upsert datasets"): the commit's snapshot
// deletes every live row of the table whose key equals one of `keys`; rows of the commit's own
// files are not touched. Keys compare by value across integer widths, float widths, string
// kinds and timestamp units (lake/row_keys.h); a null key value equals a null.
struct KeyDeletes {
  std::vector<std::string> columns;          // the key columns, as the table names them
  std::shared_ptr<arrow::RecordBatch> keys;  // one row per key, a column per key column
};

struct CommitRequest {
  std::vector<DataFile> files;
  std::vector<OffsetRange> offsets;
  // Who commits, unique per commit (host, pid, commit id): recorded with the ledger (DuckLake)
  // or the snapshot summary (Iceberg), so an unknown outcome is resolved by reading it back.
  std::string writer;
  // Extra text stored with the snapshot for audit.
  std::string message;
  // Files of a companion table of the same lake (the dataset's rejects table), committed in
  // the same snapshot. Only for a table whose CommitsCompanion() is true.
  Table* companion = nullptr;
  std::vector<DataFile> companion_files;
  // An upsert's deletes, in the same snapshot; null: append only. Only for a table whose
  // DeletesByKey() is true.
  std::shared_ptr<const KeyDeletes> key_deletes;
};

// A rewrite (compaction): the live data files `remove` (paths as Inspect reports them) are
// replaced by `add`, holding the same rows, in one snapshot. The offset ledger is untouched.
struct RewriteRequest {
  std::vector<std::string> remove;
  // The position delete files applied while rewriting `remove` (LakeFile::deletes): they leave
  // the table with them. Every live delete file that applies to a removed file must be here, or
  // the rewrite is refused (kTableChanged): its deletes would be lost.
  std::vector<std::string> remove_deletes;
  // The equality delete files applied by value while rewriting `remove` (LakeFile::
  // equality_deletes; Iceberg only) and the rows of `remove` they left out. They stay in the
  // table while another live data file they apply to remains. As with position deletes, a live
  // equality delete file that applies to a removed file and is not here refuses the rewrite.
  std::vector<std::string> equality_deletes;
  int64_t equality_deleted_rows = 0;
  std::vector<DataFile> add;
  std::string message;  // stored with the snapshot for audit
};

// What became of one commit attempt.
enum class CommitStatus {
  kCommitted,         // landed now, in snapshot_id
  kAlreadyCommitted,  // an earlier attempt with the same writer id had landed, in snapshot_id
  kFenced,            // a range's ledger start did not match: nothing was written
  kConflict,          // lost a race to a concurrent commit: nothing was written; retry at once
                      // or after a short backoff (the table re-reads its head each attempt)
  kTableChanged,      // the table changed under the caller (dropped, a column gone): nothing was
                      // written; reload the table and write the files again
  kOutcomeUnknown,    // the link failed at the commit point: it may have landed; resolve with
                      // FindCommit before doing anything else with these files
};

std::string_view ToString(CommitStatus status);

struct CommitResult {
  CommitStatus status = CommitStatus::kCommitted;
  int64_t snapshot_id = -1;                // kCommitted, kAlreadyCommitted
  std::vector<OffsetRange> fenced_ranges;  // kFenced: the ranges whose ledger did not match
  std::string reason;                      // kConflict, kTableChanged, kOutcomeUnknown: why
  int64_t rows_deleted = 0;                // kCommitted with key_deletes: older rows deleted
  int64_t delete_files = 0;                // kCommitted with key_deletes: delete files written
  // kCommitted with key_deletes, by a format deleting by value (Iceberg's equality deletes):
  // the keys deleted; rows_deleted stays 0 (the rows they match are found by readers).
  int64_t keys_deleted = 0;
};

// What became of a schema change.
enum class EvolveStatus {
  kEvolved,       // the columns exist with the types asked for (already or now)
  kRefused,       // the catalog refused the statement for what it says (a name or type that
                  // comes from the data): nothing changed; bad data, not a catalog failure
  kTableChanged,  // the table is gone: reload it
};

struct EvolveResult {
  EvolveStatus status = EvolveStatus::kEvolved;
  std::string reason;  // kRefused, kTableChanged
};

// One schema change: columns to add, live columns to widen (int→bigint, float→double).
struct SchemaChange {
  std::vector<NewColumn> add;
  std::vector<NewColumn> promote;  // (live column name, wider type)
};

class Table {
 public:
  virtual ~Table() = default;

  // "schema.table".
  virtual const std::string& name() const = 0;
  // The live columns, in table order (refreshed by every Evolve).
  virtual const std::vector<Column>& columns() const = 0;
  virtual const std::vector<PartitionKey>& partitioning() const = 0;

  // Applies `change` in one schema change, before data that needs it commits. A promotion the
  // format does not allow is refused (kRefused).
  virtual Result<EvolveResult> Evolve(const SchemaChange& change) = 0;

  // Splits `rows` (a batch with the table's column names, `_inserted_at` included) by the
  // partition tuple of each row under the table's partitioning, with the format's transform
  // semantics. One group holding every row when the table is unpartitioned.
  virtual Result<std::vector<PartitionGroup>> Partition(const arrow::RecordBatch& rows) const = 0;

  // The next offset of every partition of `topic` in the ledger (absent: never committed).
  virtual Result<std::map<int32_t, int64_t>> ReadLedger(const std::string& topic) = 0;

  // Where data files go: the file system and the table's directory in it.
  virtual std::shared_ptr<arrow::fs::FileSystem> filesystem() const = 0;
  virtual std::string DataDirectory() const = 0;
  // The relative path of a new data file with the given partition values.
  virtual std::string NewFilePath(const std::vector<PartitionValue>& partition_values) = 0;

  // One attempt to append the files in one snapshot and advance the ledger, atomically. An
  // error Status means nothing landed (retriable: the caller backs off and retries; fatal:
  // stop); every other result is a CommitStatus. The table does not retry by itself.
  virtual Result<CommitResult> Commit(const CommitRequest& request) = 0;

  // Whether CommitRequest::companion files land in the same snapshot as the request's own
  // (DuckLake: one catalog transaction). When false (Iceberg: snapshots are per table) the
  // caller commits the companion table on its own, with its own ledger, before the rows
  // (docs/ARCHITECTURE.md, "Rejects exactly once without a shared snapshot").
  virtual bool CommitsCompanion() const { return false; }

  // Whether Commit takes CommitRequest::key_deletes (DuckLake: positional delete files in the
  // commit's snapshot; Iceberg: equality delete files in it). An upsert dataset refuses a table
  // without it.
  virtual bool DeletesByKey() const { return false; }

  // Reads back whether the commit of `request` (by its writer id, and its files) landed: the
  // snapshot it landed in, or nullopt when it did not. Used after kOutcomeUnknown.
  virtual Result<std::optional<int64_t>> FindCommit(const CommitRequest& request) = 0;

  // One attempt to commit a rewrite (lake/table.h RewriteRequest) as its own snapshot: DuckLake
  // ends the removed files at the new snapshot and begins the added ones there; Iceberg commits a
  // `replace` snapshot (removed files as DELETED manifest entries, added ones ADDED) without
  // weir's ledger keys, which the ledger lookup passes over. kConflict: a concurrent commit won
  // the race (retry: each attempt re-reads the head); kTableChanged: a file to remove is no
  // longer live, or no longer rewritable (someone else compacted or deleted): give the rewrite
  // up. Nothing was written on either. A format without it answers NotImplemented.
  virtual Result<CommitResult> Rewrite(const RewriteRequest& request);

  // What `weir maintain` needs to know of the table (lake/inspection.h), read fresh from the
  // catalog; changes nothing. A format without it answers NotImplemented.
  virtual Result<TableInspection> Inspect();

  // The row positions (ascending) a deletion vector of Inspect's (PositionDeletes with a
  // vector_offset) deletes. A format without vectors answers NotImplemented.
  virtual Result<std::vector<int64_t>> ReadDeletionVector(const PositionDeletes& deletes);

  // Removes the snapshots `ids` (none of Inspect's protected_snapshots: those are refused) in
  // one catalog change that conflicts cleanly with concurrent commits (retried), and deletes or
  // queues what no kept snapshot references any more; a queued file is deleted once it has
  // been queued longer than `queue_window_ms`. Never touches the offset ledger.
  virtual Result<ExpireResult> ExpireSnapshots(const std::vector<int64_t>& ids,
                                               int64_t queue_window_ms);

  // The repair of catalog entries whose objects are missing or damaged: one new snapshot that
  // removes the current snapshot's data files `paths` (Inspect's paths) from the table, as a
  // delete would, retried on a conflicting concurrent commit. Older snapshots keep them (time
  // travel is history; expiry releases them), their objects are not touched, and the offset
  // ledger is not: the rows they held are gone, not replayed. Refuses, changing nothing, a
  // path that is not a live data file of the table. `reason` is recorded with the snapshot.
  virtual Result<DropFilesResult> DropDataFiles(const std::vector<std::string>& paths,
                                                const std::string& reason);
};

}  // namespace weir::lake
