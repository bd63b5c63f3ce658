// A sequence of Parquet files of one schema, each rotated at `target_file_bytes` of Parquet:
// rows stream in through Append, row groups close as they fill (ParquetFileWriter), and a file
// is finished (footer written, upload completed) as soon as its estimated size reaches the
// target, so file size is independent of how many rows a caller holds or when it commits. The
// last file is finished by Finish. Used by the ingest flush (one per partition tuple) and meant
// for WAL segments (issue 13).
//
// Row groups are bounded to an eighth of the target (or FileConfig::row_group_bytes if
// smaller), so a file ends within a fraction of a row group of the target.
//
// Threading: one owner at a time; not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "base/status.h"
#include "files/parquet_file_writer.h"

namespace weir::files {

// The estimated Parquet bytes at which a rolling writer closes a row group: an eighth of
// `target_file_bytes` (when set), or `config.row_group_bytes` if that is smaller; 0: by rows
// only.
int64_t RowGroupBytes(const FileConfig& config, int64_t target_file_bytes);

class RollingParquetWriter {
 public:
  // The path (in `fs`) of the next file; called once per file opened.
  using PathMaker = std::function<std::string()>;

  // `target_file_bytes` <= 0: one file, never rotated.
  RollingParquetWriter(std::shared_ptr<arrow::fs::FileSystem> fs,
                       std::shared_ptr<arrow::Schema> schema, FileConfig config,
                       int64_t target_file_bytes, PathMaker next_path);
  // Whatever is still open is aborted.
  ~RollingParquetWriter();

  // Appends rows whose schema equals the one given (field metadata aside), rotating files at
  // the target.
  Status Append(const arrow::RecordBatch& batch);
  // Finishes the open file; returns every file finished, in order.
  Result<std::vector<FileInfo>> Finish();
  // Aborts the open file (finished ones stay: their paths are in finished()).
  void Abort();

  // Also finishes a file once it holds `rows` rows (0: by bytes only).
  void set_max_file_rows(int64_t rows) { max_file_rows_ = rows; }
  // The rows the writer is going to be given in all. Once the first file has reached the byte
  // target (which measures the rows a file of the target holds), the rest are split evenly over
  // as many files as they need, instead of leaving a small remainder last: every file then holds
  // at least about half the target. Compaction knows its run's rows beforehand and uses it.
  void set_total_rows(int64_t rows) { total_rows_ = rows; }

  const std::vector<FileInfo>& finished() const { return finished_; }
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  // Bytes written or estimated for the open file.
  int64_t open_bytes() const { return open_ ? open_->EstimatedSize() : 0; }

 private:
  Status FinishOpen();

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::shared_ptr<arrow::Schema> schema_;
  FileConfig config_;
  int64_t target_;
  PathMaker next_path_;
  std::unique_ptr<ParquetFileWriter> open_;
  double ratio_ = 0;  // of the last file finished: the next file's hint
  int64_t max_file_rows_ = 0;
  int64_t open_rows_ = 0;     // rows appended to the open file
  int64_t total_rows_ = 0;    // set_total_rows
  int64_t written_rows_ = 0;  // in finished files
  std::vector<FileInfo> finished_;
};

}  // namespace weir::files
