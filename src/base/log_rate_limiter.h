// Lets at most one log line per key through per interval, so a record stream that repeats one
// problem a million times logs it once a minute with a count, not a million times.
//
// Threading: thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace weir {

class LogRateLimiter {
 public:
  explicit LogRateLimiter(std::chrono::steady_clock::duration interval) : interval_(interval) {}

  // True when a line for `key` may be written at `now`; then `*suppressed` is the number of
  // lines held back for that key since the last one let through.
  bool Allow(std::string_view key, std::chrono::steady_clock::time_point now, int64_t* suppressed);

 private:
  struct Entry {
    std::chrono::steady_clock::time_point last;
    int64_t suppressed = 0;
  };
  const std::chrono::steady_clock::duration interval_;
  std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;  // GUARDED_BY(mutex_)
};

}  // namespace weir
