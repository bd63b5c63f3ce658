#include "base/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

namespace weir {
namespace {

constexpr auto kPollStep = std::chrono::milliseconds(2);

std::mutex& RegistryMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, std::weak_ptr<WriterLock>>& Registry() {
  static auto* registry = new std::map<std::string, std::weak_ptr<WriterLock>>();
  return *registry;
}

// Tries `attempt` (true: done) with pauses growing from 100 µs to kPollStep, until it is done,
// fails, or `give_up` says to stop.
Status PollUntil(const std::function<Result<bool>()>& attempt,
                 const std::function<Status()>& give_up) {
  std::chrono::microseconds step(100);
  while (true) {
    WEIR_ASSIGN_OR_RAISE(const bool done, attempt());
    if (done) return Status::OK();
    WEIR_RETURN_NOT_OK(give_up());
    std::this_thread::sleep_for(step);
    step = std::min<std::chrono::microseconds>(step * 2, kPollStep);
  }
}

// Takes (F_WRLCK) or releases (F_UNLCK) the turnstile: an open-file-description lock on the
// first byte of the lock file. These locks and flock(2) do not see each other on Linux, so one
// file carries both; like flock, the lock belongs to the open file, not to the thread.
Result<bool> TryTurnstile(int fd, short type, const std::string& path) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = 0;
  range.l_len = 1;
  if (::fcntl(fd, F_OFD_SETLK, &range) == 0) return true;
  if (errno == EAGAIN || errno == EACCES || errno == EINTR) return false;
  return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(errno),
                         "cannot lock the turnstile of " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<std::shared_ptr<WriterLock>> WriterLock::ForPath(const std::string& lock_path) {
  std::lock_guard guard(RegistryMutex());
  auto& registry = Registry();
  if (auto it = registry.find(lock_path); it != registry.end()) {
    if (auto lock = it->second.lock()) return lock;
  }
  ScopedFd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return ClassifiedError(
        ErrorClass::kFatal, "errno", std::to_string(errno),
        "cannot open the writer lock file " + lock_path + ": " + std::strerror(errno));
  }
  std::shared_ptr<WriterLock> lock(new WriterLock(lock_path, std::move(fd)));
  registry[lock_path] = lock;
  return lock;
}

std::shared_ptr<WriterLock> WriterLock::InProcess(const std::string& name) {
  return std::shared_ptr<WriterLock>(new WriterLock(name, ScopedFd()));
}

WriterLock::~WriterLock() = default;

Result<WriterLock::Hold> WriterLock::Acquire(std::chrono::milliseconds timeout,
                                             const std::function<bool()>& cancelled) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto give_up = [&]() -> Status {
    if (cancelled && cancelled()) {
      return ClassifiedError(ErrorClass::kRetriable, "writer_lock", "lock_cancelled",
                             "cancelled while waiting for the writer lock " + path_);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return ClassifiedError(ErrorClass::kRetriable, "writer_lock", "lock_timeout",
                             "the writer lock " + path_ + " was not free within " +
                                 std::to_string(timeout.count()) + " ms (another writer holds it)");
    }
    return Status::OK();
  };
  while (!mutex_.try_lock_for(kPollStep)) WEIR_RETURN_NOT_OK(give_up());
  Hold hold(this);  // releases the mutex on any return below
  if (!fd_.valid()) return hold;
  // The turnstile first, then the lock: a process that just released the lock and wants it
  // again queues behind the one already waiting (which holds the turnstile), so two busy
  // writers alternate instead of one re-taking the lock in the microseconds the other's poll
  // misses.
  WEIR_RETURN_NOT_OK(PollUntil([&] { return TryTurnstile(fd_.get(), F_WRLCK, path_); }, give_up));
  const Status locked = PollUntil(
      [&]() -> Result<bool> {
        if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) return true;
        if (errno == EWOULDBLOCK || errno == EINTR) return false;
        return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(errno),
                               "cannot lock " + path_ + ": " + std::strerror(errno));
      },
      give_up);
  (void)TryTurnstile(fd_.get(), F_UNLCK, path_);
  WEIR_RETURN_NOT_OK(locked);
  return hold;
}

WriterLock::Hold::Hold(Hold&& other) noexcept : lock_(other.lock_) { other.lock_ = nullptr; }

WriterLock::Hold& WriterLock::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    Release();
    lock_ = other.lock_;
    other.lock_ = nullptr;
  }
  return *this;
}

WriterLock::Hold::~Hold() { Release(); }

void WriterLock::Hold::Release() {
  if (lock_ == nullptr) return;
  if (lock_->fd_.valid())
    ::flock(lock_->fd_.get(), LOCK_UN);  // a no-op when only the mutex was taken
  lock_->mutex_.unlock();
  lock_ = nullptr;
}

}  // namespace weir
