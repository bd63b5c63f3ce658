#include "base/log_rate_limiter.h"

namespace weir {

bool LogRateLimiter::Allow(std::string_view key, std::chrono::steady_clock::time_point now,
                           int64_t* suppressed) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    entries_.emplace(std::string(key), Entry{now, 0});
    *suppressed = 0;
    return true;
  }
  if (now - it->second.last < interval_) {
    ++it->second.suppressed;
    return false;
  }
  *suppressed = it->second.suppressed;
  it->second = Entry{now, 0};
  return true;
}

}  // namespace weir
