// A lake table as the pipeline sees it: open or create, evolve, commit(files, ledger).
//
// The pipeline never sees SQL, Avro or HTTP: a format (DuckLake today, Iceberg later)
// implements Table. Commits are exactly-once through the offset ledger: each commit carries,
// per Kafka partition, the offset range its files cover, and succeeds only if the ledger still
// holds the range's start (see docs/ARCHITECTURE.md, "Offset ledger").
//
// Threading: a Table is used by one committer thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>

#include "base/status.h"
#include "files/parquet_file_writer.h"

namespace weir::lake {

// Column types weir writes (the JSON kinds plus the per-flush commit timestamp).
// kOther is a live column of a type weir does not write (created by another writer): weir
// leaves it null in its files.
enum class ColumnType { kBoolean, kBigint, kDouble, kVarchar, kTimestampTz, kOther };

std::string_view ToString(ColumnType type);

struct Column {
  int64_t id = 0;  // the table's column id, written as the Parquet field id
  std::string name;
  ColumnType type = ColumnType::kVarchar;
};

// One partition key: a transform ("identity", "year", "month", "day", "hour") of a column.
struct PartitionKey {
  std::string column;
  std::string transform;
  bool operator==(const PartitionKey&) const = default;
};

std::string ToString(const PartitionKey& key);

// The half-open offset range [start, end) of one Kafka partition covered by a commit.
// `start` is the ledger value the commit expects to find (the fence).
struct OffsetRange {
  std::string topic;
  int32_t partition = 0;
  int64_t start = 0;
  int64_t end = 0;
};

// A data file written under the table's location, with the partition values of its rows.
struct DataFile {
  std::string relative_path;  // under the table's data location
  files::FileInfo info;
  std::vector<std::optional<std::string>> partition_values;  // one per partition key
};

class Table;

struct CommitRequest {
  std::vector<DataFile> files;
  std::vector<OffsetRange> offsets;
  // Who commits, unique per commit (host, pid, commit id): recorded with the ledger, so a
  // retry after an unknown outcome recognises its own earlier success.
  std::string writer;
  // Extra text stored with the snapshot for audit.
  std::string message;
  // Files of a companion table of the same lake (the dataset's rejects table), committed in
  // the same snapshot.
  Table* companion = nullptr;
  std::vector<DataFile> companion_files;
};

struct CommitResult {
  int64_t snapshot_id = -1;  // -1 when fenced
  bool fenced = false;
  bool already_committed = false;          // an earlier attempt with the same writer id had landed
  std::vector<OffsetRange> fenced_ranges;  // the ranges whose ledger did not match
  int conflicts = 0;                       // concurrent commits retried past
};

class Table {
 public:
  virtual ~Table() = default;

  virtual const std::string& name() const = 0;
  // The live columns, in table order.
  virtual const std::vector<Column>& columns() const = 0;
  virtual const std::vector<PartitionKey>& partitioning() const = 0;

  // Adds the columns the table lacks (one schema change), before data that uses them commits.
  virtual Status AddColumns(const std::vector<std::pair<std::string, ColumnType>>& columns) = 0;

  // The next offset of every partition of `topic` in the ledger (absent: never committed).
  virtual Result<std::map<int32_t, int64_t>> ReadLedger(const std::string& topic) = 0;

  // Where data files go: the file system and the table's directory in it.
  virtual std::shared_ptr<arrow::fs::FileSystem> filesystem() const = 0;
  virtual std::string DataDirectory() const = 0;
  // The relative path of a new data file with the given partition values.
  virtual std::string NewFilePath(
      const std::vector<std::optional<std::string>>& partition_values) = 0;

  // Appends the files in one snapshot and advances the ledger, atomically. A range whose ledger
  // start does not match fences the whole commit (nothing is written; the result says so).
  virtual Result<CommitResult> Commit(const CommitRequest& request) = 0;
};

}  // namespace weir::lake
