// Parquet data files behind a narrow interface: Create(schema) / Append(batch) / Finish(),
// streamed: a row group is closed (its compressed pages leave for the sink) every
// `row_group_rows` rows or, when `row_group_bytes` is set, once its estimated Parquet size
// reaches that, so the memory a writer holds is one open row group, not the file. The sink is
// the file system's output stream: a local file, an S3 multipart upload or Azure blocks
// (arrow::fs). Abort abandons the file (the upload is aborted, a local file deleted).
//
// Threading: a writer belongs to one flush task at a time; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <parquet/properties.h>

#include "base/status.h"

namespace weir::files {

enum class Codec { kZstd, kSnappy, kLz4, kGzip, kNone };

struct FileConfig {
  Codec codec = Codec::kZstd;
  int compression_level = 3;
  int64_t row_group_rows = 122880;  // a reader-friendly row group, DuckDB's default size
  // Also close a row group once its estimated Parquet (compressed) bytes reach this; 0: by
  // rows only. The estimate is the open group's Arrow bytes times the file's compression ratio
  // so far (or the hint given to Create before its first group closed).
  int64_t row_group_bytes = 0;
  // Top-level columns that get a Parquet-native split-block bloom filter per row group (the
  // dataset's `bloom_filter_columns`); fpp 0.05, sized to the row group and folded.
  std::vector<std::string> bloom_filter_columns;
};

// The one place Parquet writer properties are derived from configuration. `schema`: the file's
// columns; a bloom filter column it lacks, or whose type Parquet cannot filter (boolean,
// nested), gets none.
std::shared_ptr<parquet::WriterProperties> MakeWriterProperties(const FileConfig& config,
                                                                const arrow::Schema& schema);

// Statistics of one column over the whole file, as a catalog records them.
struct ColumnStats {
  int field_id = -1;  // the table's column id
  std::string name;
  int64_t null_count = 0;
  int64_t value_count = 0;         // rows, nulls included
  std::optional<std::string> min;  // text form (a uuid canonical); absent when all null
  std::optional<std::string> max;
  int64_t compressed_bytes = 0;
};

struct FileInfo {
  std::string path;
  int64_t size_bytes = 0;
  int64_t rows = 0;
  int64_t footer_bytes = 0;          // the serialized footer metadata (DuckLake's footer_size)
  std::vector<ColumnStats> columns;  // in schema order
};

// `schema` fields must carry their table column id as a field id (see WithFieldIds), so that
// readers map file columns to table columns by id, not by name.
class ParquetFileWriter {
 public:
  // `ratio_hint`: Parquet bytes per Arrow byte expected (another file's ratio()); 0: unknown.
  static Result<std::unique_ptr<ParquetFileWriter>> Create(
      std::shared_ptr<arrow::fs::FileSystem> fs, std::string path,
      std::shared_ptr<arrow::Schema> schema, const FileConfig& config, double ratio_hint = 0);
  // A writer neither finished nor aborted is aborted.
  ~ParquetFileWriter();

  // Appends a batch whose schema equals the one given to Create (field metadata aside).
  Status Append(const arrow::RecordBatch& batch);
  // Closes the file (footer written, upload completed) and returns what a catalog needs to
  // know about it.
  Result<FileInfo> Finish();
  // Abandons the file: the upload is aborted (S3 multipart) or left uncommitted (Azure
  // blocks), a local file is deleted. Nothing references it.
  Status Abort();

  const std::string& path() const;
  int64_t rows() const;
  // Bytes in the sink (closed row groups) plus the open row group's estimated Parquet bytes.
  int64_t EstimatedSize() const;
  // Parquet bytes per Arrow byte: measured over the closed row groups, else the hint (0 when
  // neither is known).
  double ratio() const;
  // Arrow bytes held in the open row group (estimated from the batches appended to it).
  int64_t open_arrow_bytes() const;

 private:
  struct State;
  explicit ParquetFileWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// `schema` with field ids set ("PARQUET:field_id" metadata) from `ids`, one per field.
Result<std::shared_ptr<arrow::Schema>> WithFieldIds(const arrow::Schema& schema,
                                                    const std::vector<int>& ids);

// The field id a field read from Parquet carries ("PARQUET:field_id"), if any.
std::optional<int> FieldIdOf(const arrow::Field& field);

}  // namespace weir::files
