// Retry delays: exponential backoff with a cap, additive jitter and a server-given floor.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

namespace weir {

struct BackoffPolicy {
  std::chrono::milliseconds initial{1000};  // first delay
  double multiplier = 2.0;                  // growth per attempt
  std::chrono::milliseconds cap{30000};     // largest delay before jitter
  double max_jitter = 0.25;                 // each delay grows by a uniform 0..max_jitter share
  int max_attempts = 10;                    // retry budget; 0 means unbounded
  // A deadline from the first attempt: no wait starts that would end past it (0: none).
  std::chrono::milliseconds max_elapsed{0};
};

// The delays of one retry sequence. Not thread-safe: one per operation being retried.
class Backoff {
 public:
  Backoff(BackoffPolicy policy, uint64_t seed);

  // The delay before the next attempt, or nullopt when the budget is spent. A server's
  // Retry-After, when given, is a floor for this delay.
  std::optional<std::chrono::milliseconds> Next(
      std::optional<std::chrono::milliseconds> retry_after = std::nullopt);

  int attempts() const { return attempts_; }
  void Reset() { attempts_ = 0; }

 private:
  BackoffPolicy policy_;
  std::mt19937_64 random_;
  int attempts_ = 0;
};

}  // namespace weir
