// The lines of one source file, decompressed (gzip — concatenated members too — or zstd, as the
// magic bytes said), each with the uncompressed byte offset of its first byte: that offset is
// the line's ledger offset. Reading resumes at a ledger value `next` (the offset of the last
// committed line + 1, as the pipeline moves the ledger): the reader goes to byte `next - 1`
// (a seek when uncompressed; compressed files are decompressed from the start and the prefix
// discarded) and skips the rest of that committed line. Empty lines carry no record.
// A line longer than `max_line_bytes` is cut there (the decoder rejects it as too large) and
// the rest of it is skipped, so no line costs more memory than that.
//
// Threading: one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "filesource/source_file.h"

namespace weir::filesource {

// Uncompressed bytes of a file, in order.
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Up to `capacity` bytes into `out`; 0 at the end.
  virtual Result<size_t> Read(char* out, size_t capacity) = 0;
  // Bytes of the file on disk consumed so far (for progress).
  virtual int64_t disk_position() const = 0;
  // Skips `bytes` uncompressed bytes (a seek where the stream can).
  virtual Status Skip(int64_t bytes);
};

Result<std::unique_ptr<ByteStream>> OpenStream(const SourceFile& file);

struct Line {
  int64_t offset = 0;     // uncompressed byte offset of its first byte
  std::string_view text;  // without the newline; valid until the next call
  bool cut = false;       // longer than max_line_bytes: only its start is here
};

class LineReader {
 public:
  static Result<std::unique_ptr<LineReader>> Open(const SourceFile& file, int64_t resume_at,
                                                  size_t max_line_bytes);
  // The next non-empty line; false at the end of the file.
  Result<bool> Next(Line* line);
  int64_t disk_position() const { return stream_->disk_position(); }

 private:
  LineReader(std::unique_ptr<ByteStream> stream, std::string name, int64_t position,
             size_t max_line_bytes);
  // More bytes into the buffer; false at the end.
  Result<bool> Fill();
  // Discards up to and including the next newline.
  Status SkipLine();

  std::unique_ptr<ByteStream> stream_;
  std::string name_;
  std::string buffer_;
  size_t begin_ = 0, end_ = 0;  // unread bytes: buffer_[begin_, end_)
  int64_t position_;            // uncompressed offset of buffer_[begin_]
  size_t max_line_bytes_;
  bool eof_ = false;
  std::string cut_line_;  // the start of a cut line, kept while its rest is skipped
};

}  // namespace weir::filesource
