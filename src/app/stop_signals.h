// SIGTERM and SIGINT as a std::stop_token: the handler only writes a byte to a pipe
// (async-signal-safe); a watcher thread reads it and requests the stop, which wakes every wait
// on the token (retry backoffs, the poll loop) at once.
//
// Threading: one instance per process, made by the main thread before other threads start
// waiting on its token; the token may be read from any thread.
#pragma once

#include <memory>
#include <stop_token>
#include <thread>

#include "base/status.h"

namespace weir::app {

class StopSignals {
 public:
  // Installs the handlers and starts the watcher.
  static Result<std::unique_ptr<StopSignals>> Install();
  // Stops the watcher; the handlers stay (a late signal then only writes to a closed pipe).
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  std::stop_token token() const { return source_.get_token(); }

 private:
  StopSignals(int read_fd, int write_fd);
  void Watch();

  int read_fd_, write_fd_;
  std::stop_source source_;
  std::thread watcher_;
};

}  // namespace weir::app
