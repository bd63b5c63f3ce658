#include "base/log_rate_limiter.h"

namespace weir {

std::optional<int64_t> LogRateLimiter::Admit(std::string_view key,
                                             std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto found = entries_.find(std::string(key));
  if (found == entries_.end()) {
    if (entries_.size() >= kMaxKeys) {
      std::erase_if(entries_, [&](const auto& entry) {
        return now - entry.second.let_through >= interval_ && entry.second.suppressed == 0;
      });
      if (entries_.size() >= kMaxKeys) entries_.clear();
    }
    entries_.emplace(std::string(key), Entry{now, 0});
    return 0;
  }
  Entry& entry = found->second;
  if (now - entry.let_through < interval_) {
    ++entry.suppressed;
    return std::nullopt;
  }
  const int64_t suppressed = entry.suppressed;
  entry = Entry{now, 0};
  return suppressed;
}

}  // namespace weir
