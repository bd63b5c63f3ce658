#include "base/scoped_fd.h"

#include <unistd.h>

#include <utility>

namespace weir {

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

int ScopedFd::Release() { return std::exchange(fd_, -1); }

void ScopedFd::Reset() { (void)Close(); }

int ScopedFd::Close() {
  if (fd_ < 0) return 0;
  return ::close(std::exchange(fd_, -1));
}

}  // namespace weir
