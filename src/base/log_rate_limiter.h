// Lets at most one log line per key through per interval, so a record stream or a client that
// repeats one problem a million times logs it once per interval with a count, not a million
// times. Memory is bounded: past kMaxKeys keys, those whose interval passed are forgotten.
//
// Threading: thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace weir {

class LogRateLimiter {
 public:
  static constexpr size_t kMaxKeys = 4096;

  explicit LogRateLimiter(std::chrono::steady_clock::duration interval) : interval_(interval) {}

  // nullopt: hold the line for `key` back. Otherwise the line may be written at `now`, and the
  // value is how many lines of that key were held back since the last one let through.
  std::optional<int64_t> Admit(std::string_view key, std::chrono::steady_clock::time_point now);

 private:
  struct Entry {
    std::chrono::steady_clock::time_point let_through;
    int64_t suppressed = 0;
  };
  const std::chrono::steady_clock::duration interval_;
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;  // guarded by mutex_
};

}  // namespace weir
