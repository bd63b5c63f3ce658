#include "app/stop_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace weir::app {
namespace {

constexpr char kSignalled = 's';
constexpr char kQuit = 'q';

std::atomic<int> g_signal_fd{-1};

extern "C" void OnStopSignal(int) {
  const int saved = errno;
  const int fd = g_signal_fd.load();
  if (fd >= 0) {
    const char byte = kSignalled;
    // Non-blocking: with the pipe full, a stop is already pending.
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved;
}

}  // namespace

StopSignals::StopSignals(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}

Result<std::unique_ptr<StopSignals>> StopSignals::Install() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::IOError("cannot make the stop signal pipe: ", std::strerror(errno));
  }
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  std::unique_ptr<StopSignals> signals(new StopSignals(fds[0], fds[1]));
  g_signal_fd.store(fds[1]);
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signals->watcher_ = std::thread([s = signals.get()] { s->Watch(); });
  return signals;
}

StopSignals::~StopSignals() {
  g_signal_fd.store(-1);
  const char byte = kQuit;
  while (::write(write_fd_, &byte, 1) < 0 && errno == EINTR) {
  }
  watcher_.join();
  ::close(read_fd_);
  ::close(write_fd_);
}

void StopSignals::Watch() {
  while (true) {
    char byte = 0;
    const ssize_t n = ::read(read_fd_, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || byte == kQuit) return;
    if (!source_.stop_requested()) {
      spdlog::info("stop signal received: draining (retry waits end now)");
      source_.request_stop();
    }
  }
}

}  // namespace weir::app
