#include "base/log_rate_limiter.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

using std::chrono::seconds;

TEST(LogRateLimiterTest, LetsOneLinePerKeyThroughPerIntervalAndCountsTheRest) {
  LogRateLimiter limiter(seconds(60));
  const auto t0 = std::chrono::steady_clock::time_point() + seconds(1000);
  EXPECT_EQ(limiter.Admit("a", t0), 0);
  EXPECT_EQ(limiter.Admit("a", t0 + seconds(1)), std::nullopt);
  EXPECT_EQ(limiter.Admit("a", t0 + seconds(59)), std::nullopt);
  EXPECT_EQ(limiter.Admit("b", t0 + seconds(2)), 0) << "keys are independent";
  EXPECT_EQ(limiter.Admit("a", t0 + seconds(60)), 2);
  EXPECT_EQ(limiter.Admit("a", t0 + seconds(61)), std::nullopt);
  EXPECT_EQ(limiter.Admit("a", t0 + seconds(200)), 1);
}

TEST(LogRateLimiterTest, ForgetsQuietKeysWhenFullSoMemoryStaysBounded) {
  LogRateLimiter limiter(seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point() + seconds(1000);
  EXPECT_EQ(limiter.Admit("held", t0), 0);
  EXPECT_EQ(limiter.Admit("held", t0 + seconds(1)), std::nullopt);
  for (size_t i = 0; i + 1 < LogRateLimiter::kMaxKeys; ++i) {
    EXPECT_EQ(limiter.Admit("key" + std::to_string(i), t0), 0);
  }
  // Full: the quiet keys whose interval passed go, the one holding a count stays.
  EXPECT_EQ(limiter.Admit("new", t0 + seconds(20)), 0);
  EXPECT_EQ(limiter.Admit("key0", t0 + seconds(21)), 0) << "forgotten, so let through";
  EXPECT_EQ(limiter.Admit("held", t0 + seconds(22)), 1) << "its count survived";
}

}  // namespace
}  // namespace weir
