#include <gtest/gtest.h>

#include "ingest/record_source.h"

namespace weir::ingest {
namespace {

Status Retriable() {
  return ClassifiedError(ErrorClass::kRetriable, "kafka", "client_wedged", "no broker answers");
}

TEST(SourceRetryTest, AFatalFailureEndsTheRunAsItIs) {
  SourceRetry retry;
  const Status fatal = ClassifiedError(ErrorClass::kFatal, "librdkafka", "_AUTHENTICATION",
                                       "SASL authentication failed");
  const auto delay = retry.Failed(fatal);
  ASSERT_FALSE(delay.ok());
  EXPECT_EQ(delay.status().message(), fatal.message());
  EXPECT_EQ(ClassOf(delay.status()), ErrorClass::kFatal);
}

TEST(SourceRetryTest, RetriableFailuresWaitLongerEachTimeUntilTheBudgetIsSpent) {
  SourceRetry retry;
  std::chrono::milliseconds previous{0};
  int waits = 0;
  for (;; ++waits) {
    const auto delay = retry.Failed(Retriable());
    if (!delay.ok()) {
      EXPECT_NE(delay.status().message().find("retry budget spent"), std::string::npos)
          << delay.status().ToString();
      EXPECT_NE(delay.status().message().find("no broker answers"), std::string::npos);
      break;
    }
    EXPECT_GE(*delay, std::chrono::milliseconds(1000));
    if (waits < 3) {
      EXPECT_GT(*delay, previous);  // below the cap: each wait grows
    }
    previous = *delay;
    ASSERT_LT(waits, 100);
  }
  EXPECT_EQ(waits, BackoffPolicy{}.max_attempts);
}

TEST(SourceRetryTest, RecordsDeliveredRenewTheBudget) {
  SourceRetry retry;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < BackoffPolicy{}.max_attempts - 1; ++i) {
      ASSERT_TRUE(retry.Failed(Retriable()).ok()) << "round " << round << " failure " << i;
    }
    retry.Delivered();
  }
  const auto first = retry.Failed(Retriable());
  ASSERT_TRUE(first.ok());
  EXPECT_LT(*first, std::chrono::milliseconds(2000));  // the first wait again (1 s + jitter)
}

}  // namespace
}  // namespace weir::ingest
