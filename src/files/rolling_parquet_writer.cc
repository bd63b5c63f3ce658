#include "files/rolling_parquet_writer.h"

#include <algorithm>
#include <cmath>

#include <arrow/util/byte_size.h>

namespace weir::files {

int64_t RowGroupBytes(const FileConfig& config, int64_t target_file_bytes) {
  if (target_file_bytes <= 0) return config.row_group_bytes;
  const int64_t bound = std::max<int64_t>(target_file_bytes / 8, 1);
  return config.row_group_bytes > 0 ? std::min(config.row_group_bytes, bound) : bound;
}

RollingParquetWriter::RollingParquetWriter(std::shared_ptr<arrow::fs::FileSystem> fs,
                                           std::shared_ptr<arrow::Schema> schema, FileConfig config,
                                           int64_t target_file_bytes, PathMaker next_path)
    : fs_(std::move(fs)),
      schema_(std::move(schema)),
      config_(config),
      target_(target_file_bytes),
      next_path_(std::move(next_path)) {
  config_.row_group_bytes = RowGroupBytes(config_, target_);
}

RollingParquetWriter::~RollingParquetWriter() { Abort(); }

Status RollingParquetWriter::FinishOpen() {
  ratio_ = open_->ratio();
  auto info = open_->Finish();
  open_.reset();
  const int64_t rows = open_rows_;
  open_rows_ = 0;
  WEIR_RETURN_NOT_OK(info.status());
  written_rows_ += rows;
  if (total_rows_ > 0 && max_file_rows_ == 0 && finished_.empty() && rows > 0) {
    // The first file holds what the target holds: the rest go evenly into as many files.
    const int64_t rest = total_rows_ - written_rows_;
    if (rest > 0) {
      const int64_t files = (rest + rows - 1) / rows;
      max_file_rows_ = (rest + files - 1) / files;
    }
  }
  finished_.push_back(std::move(*info));
  return Status::OK();
}

Status RollingParquetWriter::Append(const arrow::RecordBatch& batch) {
  const int64_t n = batch.num_rows();
  if (n == 0) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(const int64_t arrow_bytes, arrow::util::ReferencedBufferSize(batch));
  const double row_bytes = std::max(1.0, static_cast<double>(arrow_bytes) / static_cast<double>(n));
  int64_t offset = 0;
  while (offset < n) {
    if (!open_) {
      WEIR_ASSIGN_OR_RAISE(open_,
                           ParquetFileWriter::Create(fs_, next_path_(), schema_, config_, ratio_));
    }
    int64_t take = n - offset;
    if (target_ > 0) {
      // The rows that fit in what is left of the target, at the file's ratio (while unknown,
      // at most one row group's worth, after which the ratio is measured).
      const double ratio = open_->ratio() > 0 ? open_->ratio() : 1.0;
      const double left = static_cast<double>(open_->ratio() > 0 ? target_ - open_->EstimatedSize()
                                                                 : config_.row_group_bytes);
      take = std::min(
          take, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(left / (row_bytes * ratio)))));
    }
    if (max_file_rows_ > 0) take = std::min(take, max_file_rows_ - open_rows_);
    if (take == n) {
      WEIR_RETURN_NOT_OK(open_->Append(batch));
    } else {
      WEIR_RETURN_NOT_OK(open_->Append(*batch.Slice(offset, take)));
    }
    offset += take;
    open_rows_ += take;
    if ((target_ > 0 && open_->EstimatedSize() >= target_) ||
        (max_file_rows_ > 0 && open_rows_ >= max_file_rows_)) {
      WEIR_RETURN_NOT_OK(FinishOpen());
    }
  }
  return Status::OK();
}

Result<std::vector<FileInfo>> RollingParquetWriter::Finish() {
  if (open_) WEIR_RETURN_NOT_OK(FinishOpen());
  return finished_;
}

void RollingParquetWriter::Abort() {
  if (open_) {
    (void)open_->Abort();
    open_.reset();
    open_rows_ = 0;
  }
}

}  // namespace weir::files
