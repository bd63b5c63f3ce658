#include "base/backoff.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, DoublesFromOneSecondUpToTheCapWithAtMostQuarterJitter) {
  Backoff backoff(BackoffPolicy{}, /*seed=*/42);
  const int64_t bases[] = {1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000};
  for (const int64_t base : bases) {
    const auto delay = backoff.Next();
    ASSERT_TRUE(delay.has_value());
    EXPECT_GE(delay->count(), base);
    EXPECT_LE(delay->count(), base + base / 4);
  }
  EXPECT_EQ(backoff.attempts(), 10);
  EXPECT_FALSE(backoff.Next().has_value()) << "the budget of 10 attempts is spent";
}

TEST(BackoffTest, RetryAfterIsAFloor) {
  Backoff backoff(BackoffPolicy{}, 7);
  EXPECT_EQ(backoff.Next(milliseconds(45000)), milliseconds(45000));
  const auto second = backoff.Next(milliseconds(10));
  ASSERT_TRUE(second.has_value());
  EXPECT_GE(second->count(), 2000) << "a smaller Retry-After does not shorten the delay";
}

TEST(BackoffTest, SameSeedSameDelaysAndResetStartsOver) {
  Backoff a(BackoffPolicy{}, 3);
  Backoff b(BackoffPolicy{}, 3);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.Next(), b.Next());
  a.Reset();
  const auto first = a.Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_LE(first->count(), 1250);
}

TEST(BackoffTest, ZeroMaxAttemptsIsUnbounded) {
  BackoffPolicy policy;
  policy.max_attempts = 0;
  Backoff backoff(policy, 1);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(backoff.Next().has_value());
}

}  // namespace
}  // namespace weir
