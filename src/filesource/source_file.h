// A file of newline-delimited JSON given to `weir ingest --from`: its identity (the content's
// SHA-256, read once before anything is ingested), its compression (told by magic bytes, never
// by the name) and the ledger topic that identity gives it (`file:<sha256 hex>`, partition 0).
// Standard input is spooled to a temporary file first, then identified like any file, so
// piping the same bytes again resumes instead of landing them twice.
//
// Threading: plain functions; a SpooledStdin is owned by one thread.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace weir::filesource {

enum class Compression { kNone, kGzip, kZstd };
std::string_view ToString(Compression compression);

struct SourceFile {
  std::string path;    // what is opened
  std::string name;    // what logs and rejects say: the path given, or "stdin"
  int64_t size = 0;    // bytes on disk (compressed, when compressed)
  std::string sha256;  // hex, of the bytes on disk
  Compression compression = Compression::kNone;

  // The offset ledger's topic for this file (partition 0): its content decides, not its path.
  std::string LedgerTopic() const { return "file:" + sha256; }
};

// Reads `path` once: size, SHA-256, compression. A missing or unreadable file is a fatal
// error naming it.
Result<SourceFile> IdentifyFile(const std::string& path);

// Standard input copied to a file under `directory`, deleted again when this is destroyed.
class SpooledStdin {
 public:
  // Copies `fd` to its end into a new file under `directory` and identifies it (name
  // "stdin").
  static Result<SpooledStdin> Make(int fd, const std::string& directory);
  SpooledStdin(SpooledStdin&& other) noexcept;
  SpooledStdin& operator=(SpooledStdin&&) = delete;
  SpooledStdin(const SpooledStdin&) = delete;
  ~SpooledStdin();

  const SourceFile& file() const { return file_; }

 private:
  explicit SpooledStdin(SourceFile file) : file_(std::move(file)) {}
  SourceFile file_;
};

}  // namespace weir::filesource
