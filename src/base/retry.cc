#include "base/retry.h"

#include <condition_variable>
#include <mutex>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace weir {

bool WaitFor(std::chrono::milliseconds delay, const std::stop_token& stop) {
  if (delay.count() <= 0) return !stop.stop_requested();
  // A mutex of this wait alone: nobody else ever takes it, so waiting here blocks no one.
  std::mutex mutex;
  std::condition_variable_any woken;
  std::unique_lock lock(mutex);
  // The predicate is "stopped": the wait ends at the deadline or at a stop request, whichever
  // comes first (a spurious wake-up waits again).
  return !woken.wait_for(lock, stop, delay, [] { return false; }) && !stop.stop_requested();
}

Retrier::Retrier(BackoffPolicy policy, std::stop_token stop, bool log_retries,
                 std::function<void(const Status&)> on_retry)
    : backoff_(policy, std::random_device{}()),
      stop_(std::move(stop)),
      started_(std::chrono::steady_clock::now()),
      max_elapsed_(policy.max_elapsed),
      max_attempts_(policy.max_attempts),
      log_retries_(log_retries),
      on_retry_(std::move(on_retry)) {}

Status Retrier::Wait(const Status& last, std::string_view what) {
  if (stop_.stop_requested()) {
    return WithContext(last, fmt::format("{} (stopping: not retried)", what));
  }
  const auto delay = backoff_.Next();
  if (!delay) {
    return WithContext(last,
                       fmt::format("{} (retry budget of {} attempts spent)", what, max_attempts_));
  }
  if (max_elapsed_.count() > 0 &&
      std::chrono::steady_clock::now() + *delay - started_ > max_elapsed_) {
    return WithContext(
        last,
        fmt::format(
            "{} (gave up after {:.1f} s, the limit being {} s)", what,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(),
            max_elapsed_.count() / 1000.0));
  }
  if (log_retries_) spdlog::warn("{}: {}; retrying in {} ms", what, last.message(), delay->count());
  if (on_retry_) on_retry_(last);
  if (!WaitFor(*delay, stop_)) {
    return WithContext(last, fmt::format("{} (stopping: retry abandoned)", what));
  }
  return Status::OK();
}

}  // namespace weir
