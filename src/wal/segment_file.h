// One WAL segment's file behind a small interface, so the Parquet writer under it can be
// swapped (e.g. for files::ParquetFileWriter once it streams as issue 12 describes) without
// touching the rotation, the uploader or recovery:
//
//   Create(path, schema) / Append(batch) / Close() (footer, fsync) / Discard() (delete).
//
// Rows leave memory as they arrive: a row group is closed (its pages written to the file
// descriptor) every `row_group_rows` rows or `row_group_bytes` Arrow bytes (when the next rows
// come, so no file ends in an empty group), so what a segment holds in memory is one row group.
// Nothing is durable before Close: a crash before it leaves an active_* file that recovery deletes
// (its offsets were never committed).
//
// Threading: a file belongs to one thread (the poll thread); not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "base/status.h"
#include "files/parquet_file_writer.h"

namespace weir::wal {

struct SegmentFileOptions {
  files::FileConfig file;  // codec, level; row_group_rows
  // Close the open row group once the Arrow bytes appended to it reach this (> 0).
  int64_t row_group_bytes = 1 << 20;
  // Stored in the Parquet footer's key-value metadata (dataset, partition values, ...).
  std::map<std::string, std::string> metadata;
};

class SegmentFile {
 public:
  virtual ~SegmentFile() = default;
  // Appends rows whose schema is the one the file was created with.
  virtual Status Append(const arrow::RecordBatch& batch) = 0;
  virtual int64_t rows() const = 0;
  // Bytes in the file plus an estimate of the open row group's.
  virtual int64_t EstimatedSize() const = 0;
  // Writes the footer, closes the file and fsyncs it (not its directory: the rotation syncs
  // the directory once for all the files it renames).
  virtual Status Close() = 0;
  // Abandons the file and deletes it.
  virtual Status Discard() = 0;
  virtual const std::string& path() const = 0;
};

// How the rotation makes files; tests pass one that fails on purpose.
using SegmentFileFactory = std::function<Result<std::unique_ptr<SegmentFile>>(
    const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
    const SegmentFileOptions& options)>;

// A segment written with parquet::arrow::FileWriter to a local file.
Result<std::unique_ptr<SegmentFile>> CreateParquetSegment(
    const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
    const SegmentFileOptions& options);

// fsync(2) of a file or directory by path; the error names the path.
Status SyncPath(const std::string& path);
// rename(2), then fsync of the directory holding `to`, so the new name survives a crash.
Status RenameDurably(const std::string& from, const std::string& to);

}  // namespace weir::wal
