#include "base/log_rate_limiter.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

using std::chrono::seconds;

TEST(LogRateLimiterTest, LetsOneLinePerKeyThroughPerIntervalAndCountsTheRest) {
  LogRateLimiter limiter(seconds(60));
  const auto t0 = std::chrono::steady_clock::time_point() + seconds(1000);
  int64_t suppressed = -1;
  EXPECT_TRUE(limiter.Allow("a", t0, &suppressed));
  EXPECT_EQ(suppressed, 0);
  EXPECT_FALSE(limiter.Allow("a", t0 + seconds(1), &suppressed));
  EXPECT_FALSE(limiter.Allow("a", t0 + seconds(59), &suppressed));
  EXPECT_TRUE(limiter.Allow("b", t0 + seconds(2), &suppressed)) << "keys are independent";
  EXPECT_EQ(suppressed, 0);
  EXPECT_TRUE(limiter.Allow("a", t0 + seconds(60), &suppressed));
  EXPECT_EQ(suppressed, 2);
  EXPECT_FALSE(limiter.Allow("a", t0 + seconds(61), &suppressed));
  EXPECT_TRUE(limiter.Allow("a", t0 + seconds(200), &suppressed));
  EXPECT_EQ(suppressed, 1);
}

}  // namespace
}  // namespace weir
