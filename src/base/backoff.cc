#include "base/backoff.h"

#include <algorithm>
#include <cmath>

namespace weir {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed) : policy_(policy), random_(seed) {}

std::optional<std::chrono::milliseconds> Backoff::Next(
    std::optional<std::chrono::milliseconds> retry_after) {
  if (policy_.max_attempts > 0 && attempts_ >= policy_.max_attempts) return std::nullopt;
  const double base_ms = std::min(static_cast<double>(policy_.initial.count()) *
                                      std::pow(policy_.multiplier, static_cast<double>(attempts_)),
                                  static_cast<double>(policy_.cap.count()));
  ++attempts_;
  std::uniform_real_distribution<double> jitter(0.0, policy_.max_jitter);
  auto delay = std::chrono::milliseconds(std::llround(base_ms * (1.0 + jitter(random_))));
  if (retry_after && *retry_after > delay) delay = *retry_after;
  return delay;
}

}  // namespace weir
