#include "filesource/line_reader.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/scoped_fd.h"

namespace weir::filesource {
namespace {

constexpr size_t kChunk = 1 << 20;

Status StreamError(const std::string& name, const std::string& what) {
  return ClassifiedError(ErrorClass::kFatal, "file", "unreadable",
                         fmt::format("--from {}: {}", name, what));
}

// The file's bytes as they are on disk.
class DiskReader {
 public:
  DiskReader(ScopedFd fd, std::string name) : fd_(std::move(fd)), name_(std::move(name)) {}
  Result<size_t> Read(char* out, size_t capacity) {
    while (true) {
      const ssize_t n = read(fd_.get(), out, capacity);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return StreamError(name_, std::string("read: ") + std::strerror(errno));
      position_ += n;
      return static_cast<size_t>(n);
    }
  }
  Status Seek(int64_t offset) {
    if (lseek(fd_.get(), offset, SEEK_SET) < 0) {
      return StreamError(name_, std::string("seek: ") + std::strerror(errno));
    }
    position_ = offset;
    return Status::OK();
  }
  int64_t position() const { return position_; }
  const std::string& name() const { return name_; }

 private:
  ScopedFd fd_;
  std::string name_;
  int64_t position_ = 0;
};

class PlainStream final : public ByteStream {
 public:
  explicit PlainStream(DiskReader disk) : disk_(std::move(disk)) {}
  Result<size_t> Read(char* out, size_t capacity) override { return disk_.Read(out, capacity); }
  int64_t disk_position() const override { return disk_.position(); }
  Status Skip(int64_t bytes) override { return disk_.Seek(disk_.position() + bytes); }

 private:
  DiskReader disk_;
};

class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(DiskReader disk) : disk_(std::move(disk)), input_(kChunk) {
    std::memset(&z_, 0, sizeof(z_));
  }
  ~GzipStream() override {
    if (initialised_) inflateEnd(&z_);
  }
  Status Init() {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) return StreamError(disk_.name(), "zlib init");
    initialised_ = true;
    return Status::OK();
  }
  Result<size_t> Read(char* out, size_t capacity) override {
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(capacity);
    while (z_.avail_out == capacity) {
      if (z_.avail_in == 0) {
        WEIR_ASSIGN_OR_RAISE(const size_t n, disk_.Read(input_.data(), input_.size()));
        if (n == 0) {
          if (in_member_) return StreamError(disk_.name(), "gzip data ends inside a member");
          return size_t{0};
        }
        z_.next_in = reinterpret_cast<Bytef*>(input_.data());
        z_.avail_in = static_cast<uInt>(n);
      }
      in_member_ = true;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;  // a next member may follow (concatenated gzip)
        if (inflateReset(&z_) != Z_OK) return StreamError(disk_.name(), "zlib reset");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return StreamError(disk_.name(), fmt::format("corrupt gzip data ({})",
                                                     z_.msg != nullptr ? z_.msg : "zlib error"));
      }
    }
    return capacity - z_.avail_out;
  }
  int64_t disk_position() const override {
    return disk_.position() - static_cast<int64_t>(z_.avail_in);
  }

 private:
  DiskReader disk_;
  std::vector<char> input_;
  z_stream z_;
  bool initialised_ = false;
  bool in_member_ = false;
};

struct ZstdDeleter {
  void operator()(ZSTD_DStream* stream) const { ZSTD_freeDStream(stream); }
};

class ZstdStream final : public ByteStream {
 public:
  explicit ZstdStream(DiskReader disk)
      : disk_(std::move(disk)), stream_(ZSTD_createDStream()), input_(kChunk) {}
  Result<size_t> Read(char* out, size_t capacity) override {
    if (!stream_) return StreamError(disk_.name(), "zstd init");
    ZSTD_outBuffer output{out, capacity, 0};
    while (output.pos == 0) {
      if (in_.pos == in_.size) {
        WEIR_ASSIGN_OR_RAISE(const size_t n, disk_.Read(input_.data(), input_.size()));
        if (n == 0) {
          if (in_frame_) return StreamError(disk_.name(), "zstd data ends inside a frame");
          return size_t{0};
        }
        in_ = ZSTD_inBuffer{input_.data(), n, 0};
      }
      const size_t rc = ZSTD_decompressStream(stream_.get(), &output, &in_);
      if (ZSTD_isError(rc)) {
        return StreamError(disk_.name(),
                           fmt::format("corrupt zstd data ({})", ZSTD_getErrorName(rc)));
      }
      in_frame_ = rc != 0;
    }
    return output.pos;
  }
  int64_t disk_position() const override {
    return disk_.position() - static_cast<int64_t>(in_.size - in_.pos);
  }

 private:
  DiskReader disk_;
  std::unique_ptr<ZSTD_DStream, ZstdDeleter> stream_;
  std::vector<char> input_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  bool in_frame_ = false;
};

}  // namespace

Status ByteStream::Skip(int64_t bytes) {
  std::vector<char> scratch(kChunk);
  while (bytes > 0) {
    WEIR_ASSIGN_OR_RAISE(const size_t n,
                         Read(scratch.data(), std::min<size_t>(scratch.size(), bytes)));
    if (n == 0) return Status::OK();  // shorter than the ledger says: nothing left to read
    bytes -= static_cast<int64_t>(n);
  }
  return Status::OK();
}

Result<std::unique_ptr<ByteStream>> OpenStream(const SourceFile& file) {
  ScopedFd fd(open(file.path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return StreamError(file.name, std::strerror(errno));
  DiskReader disk(std::move(fd), file.name);
  switch (file.compression) {
    case Compression::kGzip: {
      auto gzip = std::make_unique<GzipStream>(std::move(disk));
      WEIR_RETURN_NOT_OK(gzip->Init());
      return std::unique_ptr<ByteStream>(std::move(gzip));
    }
    case Compression::kZstd:
      return std::unique_ptr<ByteStream>(std::make_unique<ZstdStream>(std::move(disk)));
    case Compression::kNone:
      break;
  }
  return std::unique_ptr<ByteStream>(std::make_unique<PlainStream>(std::move(disk)));
}

LineReader::LineReader(std::unique_ptr<ByteStream> stream, std::string name, int64_t position,
                       size_t max_line_bytes)
    : stream_(std::move(stream)),
      name_(std::move(name)),
      position_(position),
      max_line_bytes_(max_line_bytes) {}

Result<std::unique_ptr<LineReader>> LineReader::Open(const SourceFile& file, int64_t resume_at,
                                                     size_t max_line_bytes) {
  WEIR_ASSIGN_OR_RAISE(auto stream, OpenStream(file));
  const int64_t start = resume_at > 0 ? resume_at - 1 : 0;
  if (start > 0) WEIR_RETURN_NOT_OK(stream->Skip(start));
  std::unique_ptr<LineReader> reader(
      new LineReader(std::move(stream), file.name, start, std::max<size_t>(max_line_bytes, 1)));
  // The ledger points just past the start of the last committed line: skip the rest of it.
  if (resume_at > 0) WEIR_RETURN_NOT_OK(reader->SkipLine());
  return reader;
}

Result<bool> LineReader::Fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    buffer_.erase(0, begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < end_ + kChunk) buffer_.resize(end_ + kChunk);
  WEIR_ASSIGN_OR_RAISE(const size_t n, stream_->Read(buffer_.data() + end_, kChunk));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  return true;
}

Status LineReader::SkipLine() {
  while (true) {
    const char* data = buffer_.data() + begin_;
    const void* newline = std::memchr(data, '\n', end_ - begin_);
    if (newline != nullptr) {
      const size_t n = static_cast<const char*>(newline) - data + 1;
      begin_ += n;
      position_ += static_cast<int64_t>(n);
      return Status::OK();
    }
    position_ += static_cast<int64_t>(end_ - begin_);
    begin_ = end_;
    WEIR_ASSIGN_OR_RAISE(const bool more, Fill());
    if (!more) return Status::OK();
  }
}

Result<bool> LineReader::Next(Line* line) {
  size_t scanned = 0;  // bytes after begin_ known to hold no newline
  while (true) {
    const char* data = buffer_.data() + begin_;
    const size_t available = end_ - begin_;
    const size_t limit = std::min(available, max_line_bytes_ + 1);
    const void* newline =
        scanned < limit ? std::memchr(data + scanned, '\n', limit - scanned) : nullptr;
    if (newline != nullptr || limit > max_line_bytes_ || (eof_ && available > 0)) {
      size_t length = newline != nullptr ? static_cast<const char*>(newline) - data : limit;
      const bool cut = newline == nullptr && limit > max_line_bytes_;
      if (cut) length = max_line_bytes_ + 1;  // one byte over the limit: rejected as too large
      line->offset = position_;
      line->cut = cut;
      const size_t consumed = newline != nullptr ? length + 1 : length;
      begin_ += consumed;
      position_ += static_cast<int64_t>(consumed);
      std::string_view text(data, length);
      if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
      if (cut) {
        // Keep the cut start readable past the skip: move it to the front of the buffer.
        cut_line_.assign(text);
        WEIR_RETURN_NOT_OK(SkipLine());
        line->text = cut_line_;
        return true;
      }
      if (text.find_first_not_of(" \t\r") == std::string_view::npos) {
        scanned = 0;
        continue;  // an empty line: no record
      }
      line->text = text;
      return true;
    }
    if (eof_ && available == 0) return false;
    scanned = available;
    WEIR_ASSIGN_OR_RAISE(const bool more, Fill());
    (void)more;
  }
}

}  // namespace weir::filesource
