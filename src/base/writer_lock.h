// An exclusive lock for the writers of one file-backed resource (a SQLite catalog), held across
// the threads of this process and across processes: a mutex per lock file inside the process,
// flock(2) on the lock file between processes. weir's ingest and serve take it around every
// write to a SQLite catalog, so their commits queue instead of colliding inside SQLite.
// Processes take turns: a waiter first holds a turnstile (a lock on the file's first byte), so
// a process that releases the lock and asks again at once queues behind it instead of starving
// it.
//
// Threading: thread-safe. A Hold is released by the thread that took it (on destruction).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/scoped_fd.h"
#include "base/status.h"

namespace weir {

class WriterLock {
 public:
  // The lock of `lock_path` (created if missing), one instance per path in the process.
  static Result<std::shared_ptr<WriterLock>> ForPath(const std::string& lock_path);
  // A lock of this process's threads only (no lock file), named `name` in its errors.
  static std::shared_ptr<WriterLock> InProcess(const std::string& name);
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // Holds the lock while it lives.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept;
    Hold& operator=(Hold&& other) noexcept;
    ~Hold();
    bool held() const { return lock_ != nullptr; }

   private:
    friend class WriterLock;
    explicit Hold(WriterLock* lock) : lock_(lock) {}
    void Release();
    WriterLock* lock_ = nullptr;
  };

  // Waits for the lock until `timeout` has passed or `cancelled()` returns true (checked every
  // few milliseconds). Errors: retriable "lock_timeout" when the time ran out, retriable
  // "lock_cancelled" when cancelled, fatal when the lock file cannot be locked at all.
  Result<Hold> Acquire(std::chrono::milliseconds timeout,
                       const std::function<bool()>& cancelled = {});

  const std::string& path() const { return path_; }

 private:
  WriterLock(std::string path, ScopedFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  std::string path_;
  ScopedFd fd_;             // none: in-process only
  std::timed_mutex mutex_;  // the threads of this process; then flock for other processes
};

}  // namespace weir
