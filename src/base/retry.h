// The one retry loop: a backoff policy, a stop token and an interruptible wait.
//
// Every wait between attempts is a condition-variable wait on the stop token, so a stop
// request (SIGTERM, wired in src/app) ends it at once instead of after up to 30 s of sleep. The
// wait holds no lock of the caller: call Retry (or Retrier::Wait) with no mutex held; the only
// mutex involved is the helper's own, private to the wait.
//
// Threading: a Retrier belongs to one retry sequence on one thread; the stop token may be
// requested from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

#include "base/backoff.h"
#include "base/status.h"

namespace weir {

// Waits `delay` unless `stop` is requested first; true when the whole delay passed. Holds no
// lock of the caller. A token that can never be stopped (std::stop_token{}) makes it a sleep.
bool WaitFor(std::chrono::milliseconds delay, const std::stop_token& stop);

// The waits of one retry sequence under a policy.
class Retrier {
 public:
  // `log_retries`: a warning per retry (off for expected, frequent retries such as lost races).
  // `on_retry`: told each failure that is retried (a status page's "last error"), before the
  // wait.
  Retrier(BackoffPolicy policy, std::stop_token stop, bool log_retries = true,
          std::function<void(const Status&)> on_retry = {});

  // Called after the attempt that failed with `last` (retriable): waits the next delay and
  // returns OK for another attempt. Returns `last`, with `what` and why, when the budget is
  // spent or a stop was requested (before or during the wait).
  Status Wait(const Status& last, std::string_view what);

  // Attempts waited for so far.
  int retries() const { return backoff_.attempts(); }
  const std::stop_token& stop() const { return stop_; }

 private:
  Backoff backoff_;
  std::stop_token stop_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::milliseconds max_elapsed_;
  int max_attempts_;
  bool log_retries_;
  std::function<void(const Status&)> on_retry_;
};

namespace retry_internal {
inline const Status& StatusOf(const Status& status) { return status; }
template <typename T>
const Status& StatusOf(const Result<T>& result) {
  return result.status();
}
}  // namespace retry_internal

// Runs `op` (returning Status or Result<T>) until it succeeds or fails other than retriably,
// waiting between attempts with `retrier` (whose budget a caller may share between several
// steps of one sequence); a spent budget or a stop request returns the last error, with `what`
// as context.
template <typename Op>
auto Retry(Retrier& retrier, std::string_view what, Op&& op) -> decltype(op()) {
  while (true) {
    auto result = op();
    const Status& status = retry_internal::StatusOf(result);
    if (status.ok() || ClassOf(status) != ErrorClass::kRetriable) return result;
    Status waited = retrier.Wait(status, what);
    if (!waited.ok()) return waited;
  }
}

// The same, under a fresh budget of `policy`.
template <typename Op>
auto Retry(const BackoffPolicy& policy, const std::stop_token& stop, std::string_view what, Op&& op)
    -> decltype(op()) {
  Retrier retrier(policy, stop);
  return Retry(retrier, what, std::forward<Op>(op));
}

}  // namespace weir
