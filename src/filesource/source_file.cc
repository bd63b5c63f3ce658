#include "filesource/source_file.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "base/scoped_fd.h"

namespace weir::filesource {
namespace {

Status FileError(const std::string& name, const std::string& what) {
  return ClassifiedError(ErrorClass::kFatal, "file", "unreadable",
                         fmt::format("--from {}: {}", name, what));
}

struct DigestDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

Compression CompressionOf(const unsigned char* head, size_t n) {
  if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) return Compression::kGzip;
  if (n >= 4 && head[0] == 0x28 && head[1] == 0xb5 && head[2] == 0x2f && head[3] == 0xfd) {
    return Compression::kZstd;
  }
  return Compression::kNone;
}

// Reads `fd` to its end, hashing it (and copying it to `copy` when valid).
Status Digest(int fd, const std::string& name, int copy, SourceFile* file) {
  std::unique_ptr<EVP_MD_CTX, DigestDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return Status::UnknownError("SHA-256 unavailable");
  }
  std::vector<unsigned char> buffer(1 << 20);
  unsigned char head[4];
  size_t head_bytes = 0;
  int64_t size = 0;
  while (true) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FileError(name, std::string("read: ") + std::strerror(errno));
    if (n == 0) break;
    for (ssize_t i = 0; i < n && head_bytes < sizeof(head); ++i) head[head_bytes++] = buffer[i];
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n));
    size += n;
    for (ssize_t done = 0; copy >= 0 && done < n;) {
      const ssize_t w = write(copy, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return FileError(name, std::string("spooling: ") + std::strerror(errno));
      done += w;
    }
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  file->sha256.clear();
  for (unsigned int i = 0; i < length; ++i) file->sha256 += fmt::format("{:02x}", digest[i]);
  file->size = size;
  file->compression = CompressionOf(head, head_bytes);
  return Status::OK();
}

}  // namespace

std::string_view ToString(Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "none";
}

Result<SourceFile> IdentifyFile(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return FileError(path, std::strerror(errno));
  SourceFile file;
  file.path = path;
  file.name = path;
  WEIR_RETURN_NOT_OK(Digest(fd.get(), path, -1, &file));
  return file;
}

Result<SpooledStdin> SpooledStdin::Make(int fd, const std::string& directory) {
  std::string path = directory + "/weir-stdin-XXXXXX";
  ScopedFd copy(mkstemp(path.data()));
  if (!copy.valid()) {
    return FileError(
        "-", fmt::format("cannot make a spool file under {}: {}", directory, std::strerror(errno)));
  }
  SourceFile file;
  file.path = path;
  file.name = "stdin";
  SpooledStdin spooled(file);  // deletes the spool on every path out
  WEIR_RETURN_NOT_OK(Digest(fd, "-", copy.get(), &spooled.file_));
  if (copy.Close() != 0) return FileError("-", std::string("spooling: ") + std::strerror(errno));
  spooled.file_.path = path;
  spooled.file_.name = "stdin";
  return spooled;
}

SpooledStdin::SpooledStdin(SpooledStdin&& other) noexcept : file_(std::move(other.file_)) {
  other.file_.path.clear();
}

SpooledStdin::~SpooledStdin() {
  if (!file_.path.empty()) unlink(file_.path.c_str());
}

}  // namespace weir::filesource
