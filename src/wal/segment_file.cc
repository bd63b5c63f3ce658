#include "wal/segment_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <arrow/io/file.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/writer.h>

#include "base/scoped_fd.h"

namespace weir::wal {
namespace {

Status ErrnoError(const std::string& what, const std::string& path) {
  return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(errno),
                         what + " " + path + ": " + std::strerror(errno));
}

// Arrow bytes of a batch (its buffers, as referenced: a slice counts whole).
int64_t BatchBytes(const arrow::RecordBatch& batch) {
  int64_t bytes = 0;
  for (const auto& column : batch.columns()) bytes += arrow::util::TotalBufferSize(*column);
  return bytes;
}

class ParquetSegment final : public SegmentFile {
 public:
  ParquetSegment(std::string path, std::shared_ptr<arrow::io::FileOutputStream> sink,
                 std::unique_ptr<parquet::arrow::FileWriter> writer, SegmentFileOptions options)
      : path_(std::move(path)),
        sink_(std::move(sink)),
        writer_(std::move(writer)),
        options_(std::move(options)) {}
  ~ParquetSegment() override {
    if (!done_) (void)Discard();
  }

  Status Append(const arrow::RecordBatch& batch) override {
    if (done_) return Status::Invalid("segment ", path_, " is closed");
    if (batch.num_rows() == 0) return Status::OK();
    int64_t offset = 0;
    while (offset < batch.num_rows()) {
      // Never let one group exceed row_group_rows.
      if (open_full_) {
        // Closed only when more rows come, so the file never ends with an empty group.
        WEIR_RETURN_NOT_OK(writer_->NewBufferedRowGroup());  // the group's pages go to the file
        open_rows_ = 0;
        open_bytes_ = 0;
        open_full_ = false;
      }
      const int64_t room = options_.file.row_group_rows - open_rows_;
      const int64_t take = std::min(room, batch.num_rows() - offset);
      const auto part = batch.Slice(offset, take);
      WEIR_RETURN_NOT_OK(writer_->WriteRecordBatch(*part));
      open_rows_ += take;
      open_bytes_ += BatchBytes(batch) * take / batch.num_rows();
      rows_ += take;
      offset += take;
      open_full_ =
          open_rows_ >= options_.file.row_group_rows || open_bytes_ >= options_.row_group_bytes;
    }
    return Status::OK();
  }

  int64_t rows() const override { return rows_; }

  int64_t EstimatedSize() const override {
    const auto written = sink_->Tell();
    return (written.ok() ? *written : 0) + open_bytes_ / 2;
  }

  Status Close() override {
    if (done_) return Status::Invalid("segment ", path_, " is closed");
    done_ = true;
    Status closed = writer_->Close();
    if (closed.ok()) closed = sink_->Close();
    if (!closed.ok()) {
      (void)sink_->Close();
      std::remove(path_.c_str());
      return WithContext(closed, "WAL segment " + path_);
    }
    return SyncPath(path_);
  }

  Status Discard() override {
    if (!done_) {
      // The writer is finished while its sink is open: a parquet FileWriter destroyed open
      // closes itself, writing its buffered pages and footer into whatever its sink is, which
      // after the sink's Close is a closed stream (the lost, refused and shutdown paths drop
      // open segments).
      (void)writer_->Close();
      writer_.reset();
      (void)sink_->Close();
    }
    done_ = true;
    if (std::remove(path_.c_str()) != 0 && errno != ENOENT) return ErrnoError("delete", path_);
    return Status::OK();
  }

  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  std::shared_ptr<arrow::io::FileOutputStream> sink_;
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  SegmentFileOptions options_;
  int64_t rows_ = 0, open_rows_ = 0, open_bytes_ = 0;
  bool open_full_ = false;
  bool done_ = false;
};

}  // namespace

Result<std::unique_ptr<SegmentFile>> CreateParquetSegment(
    const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
    const SegmentFileOptions& options) {
  if (options.file.row_group_rows <= 0 || options.row_group_bytes <= 0) {
    return Status::Invalid("WAL row groups need positive row and byte bounds");
  }
  WEIR_ASSIGN_OR_RAISE(auto sink, arrow::io::FileOutputStream::Open(path));
  auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  auto opened = parquet::arrow::FileWriter::Open(*schema, arrow::default_memory_pool(), sink,
                                                 files::MakeWriterProperties(options.file, *schema),
                                                 arrow_properties);
  if (!opened.ok()) {
    (void)sink->Close();
    std::remove(path.c_str());
    return WithContext(opened.status(), "WAL segment " + path);
  }
  std::unique_ptr<parquet::arrow::FileWriter> writer = std::move(*opened);
  if (!options.metadata.empty()) {
    auto metadata = std::make_shared<arrow::KeyValueMetadata>();
    for (const auto& [key, value] : options.metadata) metadata->Append(key, value);
    WEIR_RETURN_NOT_OK(writer->AddKeyValueMetadata(metadata));
  }
  return std::make_unique<ParquetSegment>(path, std::move(sink), std::move(writer), options);
}

Status SyncPath(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoError("open", path);
  if (::fsync(fd.get()) != 0) return ErrnoError("fsync", path);
  return Status::OK();
}

Status RenameDurably(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) return ErrnoError("rename " + from + " to", to);
  const std::string dir = std::filesystem::path(to).parent_path().string();
  return SyncPath(dir.empty() ? "." : dir);
}

}  // namespace weir::wal
