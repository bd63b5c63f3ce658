// Turns one sealed flush of a dataset into Parquet files and one lake commit (rows, rejects
// and the offset ledger in the same snapshot), through the format-neutral lake::Catalog and
// lake::Table, deciding per commit outcome (lake/table.h). A format whose rejects table cannot
// share the rows' snapshot (Table::CommitsCompanion() false: Iceberg) gets the rejects the
// rejects table's own ledger lacks committed first, then the rows: exactly once for both
// (docs/ARCHITECTURE.md, "Rejects exactly once without a shared snapshot"). Per outcome:
//  - committed / already committed: done;
//  - fenced: another writer owns the offsets; the files are deleted, the outcome says fenced;
//  - conflict: retried after a short backoff (a lost race, not an outage);
//  - table changed: the files are deleted, the table reloaded and the flush written again;
//  - outcome unknown: resolved by reading the commit back (FindCommit) before anything else:
//    landed → done; not landed → committed again with the same files and writer id;
//  - retriable errors: retried with the standard backoff up to commit.max_attempts, each wait
//    cut short by the stop token (SIGTERM).
//
// Threading: one writer per dataset, called from that dataset's flush thread only; the stop
// token may be requested from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "base/retry.h"
#include "base/status.h"
#include "base/uuid.h"
#include "files/parquet_file_writer.h"
#include "files/rolling_parquet_writer.h"
#include "ingest/column_plan.h"
#include "ingest/encode_lanes.h"
#include "ingest/rejects.h"
#include "lake/catalog.h"
#include "lake/table.h"

namespace weir::ingest {

// The column every flush adds: the commit timestamp of its rows.
inline constexpr const char* kInsertedAt = "_inserted_at";

struct DatasetConfig {
  std::string name;
  std::string topic;
  std::string schema = "main";
  std::string table;
  // Transforms of _inserted_at, identity of data columns (and whatever else the format's
  // CheckSpec accepts).
  std::vector<lake::PartitionKey> partitioning;
  std::vector<lake::SortKey> sort_keys;
  bool rejects_enabled = true;
  int64_t rejects_payload_limit = 65536;
  files::FileConfig file;
  // Parquet bytes at which a file of a flush is finished and the next begun (flush.
  // target_file_size); 0: one file per partition tuple and flush.
  int64_t target_file_size = 128 << 20;
  // Lanes a streamed flush's parts are encoded on at once (flush.encode_lanes; encode_lanes.h):
  // each lane writes its own files, all committed together.
  int encode_lanes = 1;
  // Set: an upsert dataset keyed by these columns (ingest/upsert_rows.h): each flush keeps the
  // last row per key, and its commit deletes the table's older rows of its keys.
  std::vector<std::string> upsert_key;
  // Iceberg upserts (upsert.iceberg_deletes: deletion_vectors): deletion vectors on a format 3
  // table rather than equality delete files.
  bool upsert_deletion_vectors = false;
  // WAL mode (wal.bloom_sidecar): the uploader writes each file's bloom sidecar for
  // file.bloom_filter_columns (wal/bloom_sidecar.h).
  bool wal_bloom_sidecar = false;
  int commit_max_attempts = 10;
  // The waits between attempts (its max_attempts is commit_max_attempts); the standard 1 s
  // doubling to 30 s with 0-25 % jitter unless a test shortens it.
  BackoffPolicy backoff{};
};

// Everything one flush carries from the poll thread to the flush thread.
struct SealedFlush {
  std::shared_ptr<arrow::RecordBatch> batch;  // decoded rows (may be empty)
  std::vector<RejectRecord> rejects;
  std::vector<lake::OffsetRange> offsets;  // per partition: [ledger start, last offset + 1)
  int64_t bytes = 0;                       // held in memory until committed
  int64_t records = 0;                     // consumed records (rows + rejects)
  // A routed dataset's only (ingest/routed_writer.h): each row's Kafka partition and offset.
  std::vector<int32_t> row_partitions;
  std::vector<int64_t> row_offsets;
  // A streamed flush (flush.part_bytes) arrives as parts, then its last: a part carries rows
  // only (its ranges, rejects and records come with the last); `abort` (nothing else set)
  // abandons the parts written so far (the records are re-read from the ledger).
  bool part = false;
  bool abort = false;
};

struct FlushOutcome {
  bool fenced = false;
  bool already_committed = false;  // found landed by an earlier attempt (after an unknown outcome)
  int64_t snapshot_id = -1;
  int64_t rows = 0, rejects = 0, files = 0, bytes_written = 0;
  std::vector<int64_t> file_sizes;  // bytes of each data file committed (the status page)
  int64_t values_nulled = 0;        // values the live column type could not hold
  // Values of fields the table resolution dropped (refused_by_catalog) or wrote under another
  // spelling (case_variant), by reason; the decoder counts its own (decode::DecodeStats).
  std::map<std::string, int64_t> fields_dropped, fields_renamed;
  // Records written unsorted, by reason (field_missing, unsortable_type).
  std::map<std::string, int64_t> sort_skipped;
  int64_t orphaned_files = 0;
  int commit_attempts = 0, conflicts = 0;
  int unknown_outcomes = 0;  // commits whose outcome was unknown and was read back
  int reloads = 0;           // times the table changed and the flush was written again
  // A streamed flush that cannot be completed (a part failed to write, or the table changed
  // under it): its files are deleted and its records must be re-read from the ledger.
  bool replay = false;
  int64_t upsert_superseded = 0;  // upsert rows dropped for a later row of their key
  int64_t rows_deleted = 0;       // upsert: older rows of the flush's keys deleted
  int64_t delete_files = 0;       // upsert: delete files committed
  int64_t keys_deleted = 0;       // upsert by equality deletes (Iceberg): keys deleted
  std::chrono::milliseconds write_time{0}, commit_time{0};
};

class DatasetWriter {
 public:
  // `stop` ends every retry wait at once (the error of the attempt before is then returned).
  DatasetWriter(DatasetConfig config, lake::Catalog* catalog, std::stop_token stop = {});
  ~DatasetWriter();  // an open streamed flush is aborted (its files deleted)

  // Writes and commits `flush`. Retriable failures are retried with backoff up to the budget;
  // an error return means the budget is spent, a stop was requested, or the failure is
  // permanent. A fenced commit deletes its files and says so in the outcome.
  Result<FlushOutcome> Write(const SealedFlush& flush);

  // The table spec of the dataset (the format's CheckSpec judges it at startup).
  static lake::TableSpec Spec(const DatasetConfig& config,
                              std::vector<lake::NewColumn> columns = {});

  // The dataset's offset ledger of `topic` as of now (partition → next offset), read through
  // `table`, which is opened on first use and kept; none while the table does not exist yet
  // (every partition then starts afresh).
  static Result<std::map<int32_t, int64_t>> ReadLedger(lake::Catalog& catalog,
                                                       const DatasetConfig& config,
                                                       std::unique_ptr<lake::Table>& table,
                                                       const std::string& topic);

  const DatasetConfig& config() const { return config_; }
  // Told each failure of a flush's step that is retried (before the wait): the status page's
  // "last error". Set before the first flush.
  void SetRetryObserver(std::function<void(const Status&)> observer) {
    on_retry_ = std::move(observer);
  }

  // The streamed flush (dataset_writer_stream.cc): the parts of one flush are written as they
  // come, into one open files::RollingParquetWriter per partition tuple (row groups leave for
  // the store as they fill, files rotate at target_file_size); FinishStream writes the last
  // part, finishes every file and commits them all with the flush's ledger ranges and rejects,
  // in one commit, deciding per outcome as Write does. Nothing is referenced before that
  // commit. A part that cannot be written (a retriable failure, or the table changed under the
  // flush) makes the flush a replay: its files are deleted and FinishStream says `replay` (the
  // earlier parts are gone, so the records must be read again from the ledger). An error
  // return is final (fatal, or the retry budget spent).
  //
  // With flush.encode_lanes above 1 a part is encoded on an encode lane while WritePart returns
  // (its failure then makes a later WritePart or FinishStream fail, as if it were its own).
  // `released`, when given, is called once nothing holds the part's memory any more: after its
  // encoding (on the lane's thread, with the time the encoding took there; zero when it ran on
  // the caller's thread, with one lane), or before WritePart returns when it is not encoded.
  using Released = std::function<void(std::chrono::steady_clock::duration encoding)>;
  Status WritePart(std::shared_ptr<arrow::RecordBatch> part, Released released = {});
  Result<FlushOutcome> FinishStream(const SealedFlush& last);
  // Deletes the open flush's files (finished or not); the next part starts a new flush.
  void AbortStream();
  bool streaming() const { return stream_ != nullptr; }

  // The table's offset ledger of `topic` (empty while the table does not exist): what a
  // routed dataset plans its tables' commits with (ingest/routed_writer.h).
  Result<std::map<int32_t, int64_t>> ReadLedger(const std::string& topic);

 private:
  struct WrittenFiles {
    std::vector<lake::DataFile> data, rejects;
    std::shared_ptr<lake::KeyDeletes> key_deletes;  // an upsert flush's keys
    int64_t rows = 0;                               // rows in the data files
  };
  // The open streamed flush (dataset_writer_stream.cc).
  struct Stream {
    struct Tuple {
      std::vector<lake::PartitionValue> values;
      std::unique_ptr<files::RollingParquetWriter> writer;
      std::vector<std::string> relative_paths;  // of the writer's files, in order
    };
    // One encode lane's files: only its jobs touch them while it runs one (encode_lanes.h).
    struct Lane {
      std::vector<std::unique_ptr<Tuple>> open;  // stable: each path maker holds its Tuple
      std::vector<lake::DataFile> finished;      // files of tuples whose writer was closed
    };
    int64_t inserted_at_us = 0;
    std::string writer_id;
    FlushOutcome outcome;  // the counters of the parts written so far
    std::vector<Lane> lanes;
    int64_t rows = 0;  // of the parts handed to the lanes
    Status failed;     // a part could not be written: the flush is given up (replayed)
  };
  // kReady, or the table changed under the writer and must be reloaded.
  enum class Prepared { kReady, kTableChanged };
  // What became of committing one set of written files.
  enum class Landing { kLanded, kFenced, kRewrite };

  // Opens (or creates) the tables and evolves the schema the flush needs; leaves plan_ set for
  // `batch`. A column the catalog refuses is left out and remembered in refused_.
  Result<Prepared> EnsureTables(const arrow::RecordBatch& batch, bool need_rejects,
                                FlushOutcome& outcome);
  Status CreateTable(const ColumnPlan& plan);
  Result<Prepared> AddColumns(const std::vector<ColumnPlan::NewColumn>& columns);
  // Widens live columns the batch's values need wider (int→bigint, float→double).
  Result<Prepared> PromoteColumns(const arrow::RecordBatch& batch);
  // The flush's data files, and a rejects file of `rejects` (none when it is empty).
  Result<WrittenFiles> WriteFiles(const SealedFlush& flush,
                                  const std::vector<RejectRecord>& rejects, int64_t inserted_at_us,
                                  const std::vector<bool>& tombstones, FlushOutcome& outcome);
  // `batch`'s values resolved onto the live columns (plan_), cast to their types, with
  // `_inserted_at`, field ids set, sorted by the sort keys.
  Result<std::shared_ptr<arrow::RecordBatch>> LiveRows(const arrow::RecordBatch& batch,
                                                       int64_t inserted_at_us,
                                                       FlushOutcome& outcome);
  // LiveRows' two steps: the resolved, cast rows in arrival order, and their pre-write sort
  // (an upsert flush drops its tombstones between the two).
  Result<std::shared_ptr<arrow::RecordBatch>> ResolvedRows(const arrow::RecordBatch& batch,
                                                           int64_t inserted_at_us,
                                                           FlushOutcome& outcome);
  Result<std::shared_ptr<arrow::RecordBatch>> SortedRows(std::shared_ptr<arrow::RecordBatch> rows,
                                                         FlushOutcome& outcome);
  Status OpenRejectsTable();
  // A streamed part prepared (tables, live rows, partition split) and handed to an encode lane,
  // which appends it to that lane's open tuple writers (AppendToLane).
  Status AppendPart(std::shared_ptr<arrow::RecordBatch> part, Released released);
  using TupleRows = std::vector<
      std::pair<std::vector<lake::PartitionValue>, std::shared_ptr<arrow::RecordBatch>>>;
  // The part's live rows split by partition tuple (on the flush thread).
  Result<TupleRows> PrepareTuples(const arrow::RecordBatch& part, Stream& s);
  // On the lane's thread: the tuples' rows appended to the lane's open files (one per tuple,
  // rotating at target_file_size; a schema the open file lacks starts a new one).
  Status AppendToLane(Stream::Lane& lane, const TupleRows& tuples);
  // The streamed flush's outcome when it is given up: files deleted, `replay` after a backoff
  // (or the error once the consecutive replays exceed commit.max_attempts).
  Result<FlushOutcome> Replay(const Status& why);
  Result<lake::DataFile> WriteRejectsFile(const std::vector<RejectRecord>& rejects,
                                          FlushOutcome& outcome);
  // Commits `request` to `table` until it lands, is fenced, or must be written again;
  // `maybe_landed` is true while an unknown outcome has not been resolved (the files must then
  // be kept).
  Result<Landing> CommitFiles(lake::Table& table, const lake::CommitRequest& request,
                              Retrier& retrier, FlushOutcome& outcome, bool& maybe_landed);
  // For a table that does not commit its companion: commits the rejects of `flush` that the
  // rejects table's ledger lacks, in the rejects table's own snapshot, before the rows.
  // kLanded when they are in (or none was missing); kFenced when the offsets below the flush
  // are not accounted for (an earlier flush has not landed) or other writers keep committing
  // them; kRewrite when a table changed.
  Result<Landing> CommitRejectsFirst(const SealedFlush& flush, const std::string& writer,
                                     Retrier& retrier, FlushOutcome& outcome);
  void DeleteFiles(const WrittenFiles& files);
  void ReloadTables();

  DatasetConfig config_;
  lake::Catalog* catalog_;
  std::stop_token stop_;
  BackoffPolicy retrier_policy_;                 // config_.backoff with commit_max_attempts
  std::function<void(const Status&)> on_retry_;  // told each retried failure of a flush
  std::unique_ptr<lake::Table> table_;
  std::unique_ptr<lake::Table> rejects_table_;
  ColumnPlan plan_;                     // of the flush being written, against table_'s columns
  std::set<std::string> refused_;       // folded names the catalog refused to add
  std::set<std::string> unpromotable_;  // live columns the catalog refused to widen
  std::set<std::string> sort_warned_;   // reason/keys of the sort skips warned about
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<EncodeLanes> lanes_;  // declared after stream_: destroyed (drained) first
  // Held by the lanes' calls of table_->NewFilePath and by the flush thread's EnsureTables
  // while a flush streams (which may change the table those paths are made from).
  std::mutex table_mutex_;
  int replays_ = 0;  // consecutive streamed flushes given up
  UuidV7Generator commit_ids_;
  std::string writer_prefix_;  // host/pid
};

}  // namespace weir::ingest
