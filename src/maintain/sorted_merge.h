// The streaming k-way merge compaction runs on: Parquet data files of one partition, each
// already sorted by the dataset's sort keys (ingest sorts every flush), read a batch at a time
// and merged into one sorted stream of batches of the table's current columns.
//
// Memory: every input holds one decoded batch of at most `batch_rows` rows (and its footer),
// and the merge keeps what it has gathered for the next output batch (`batch_rows` rows) — never
// a whole file, let alone a partition. One thread; Arrow's reader runs without its thread pool.
//
// Columns are matched by Parquet field id (the table's column ids); a column an input lacks
// (written before the column existed, or by a flush that had no value for it) is null there,
// and a column some input holds narrower (int before a promotion to bigint) is cast to the
// widest type among the inputs. Rows at an input's deleted positions are dropped. With no sort
// keys, or a key no input holds, the inputs are concatenated in the order given.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>

#include "base/status.h"
#include "lake/table_spec.h"

namespace weir::maintain {

struct MergeInput {
  std::string path;  // in `fs`
  // Row positions of the file (0-based, ascending, distinct) that are deleted: the merge skips
  // them (the position deletes a rewrite applies).
  std::vector<int64_t> deleted;
};

struct MergeOptions {
  std::vector<lake::SortKey> sort_keys;
  int64_t batch_rows = 4096;
};

class SortedMerge {
 public:
  // Opens every input (footers only) and derives the output schema from `columns` (the table's,
  // in table order) and the inputs' Parquet schemas: the table columns at least one input
  // holds, with field ids.
  static Result<std::unique_ptr<SortedMerge>> Open(std::shared_ptr<arrow::fs::FileSystem> fs,
                                                   const std::vector<MergeInput>& inputs,
                                                   const std::vector<lake::Column>& columns,
                                                   const MergeOptions& options);
  ~SortedMerge();

  const std::shared_ptr<arrow::Schema>& schema() const;
  // Whether the output is ordered by the sort keys (false: no keys, or one no input holds).
  bool sorted() const;
  // The next batch of the merged stream, nullptr at the end.
  Result<std::shared_ptr<arrow::RecordBatch>> Next();
  int64_t rows_read() const;     // rows read from the inputs, deleted ones included
  int64_t rows_deleted() const;  // of those, the rows skipped as deleted

 private:
  struct State;
  explicit SortedMerge(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace weir::maintain
