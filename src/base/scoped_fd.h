// One owned file descriptor (a socket, a file, an eventfd), closed when destroyed: every
// descriptor weir opens is held in one, so no error path leaks or closes one twice.
//
// Threading: as the descriptor; a ScopedFd itself is not synchronised.
#pragma once

namespace weir {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives the descriptor up without closing it (-1 left behind).
  int Release();
  // Closes the descriptor now, if any; close's own result is ignored.
  void Reset();
  // Closes the descriptor now and returns close's result (0, or -1 with errno set), for
  // writers that must know whether their data reached the file.
  int Close();

 private:
  int fd_ = -1;
};

}  // namespace weir
