#include "base/retry.h"

#include <atomic>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace weir {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

Status Transient() { return ClassifiedError(ErrorClass::kRetriable, "test", "busy", "busy"); }

BackoffPolicy Quick(int max_attempts) {
  return BackoffPolicy{.initial = milliseconds(1),
                       .multiplier = 1.0,
                       .cap = milliseconds(1),
                       .max_jitter = 0.0,
                       .max_attempts = max_attempts};
}

TEST(RetryTest, AStopRequestEndsAThirtySecondBackoffWithinMilliseconds) {
  std::stop_source stop;
  int calls = 0;
  const auto started = SteadyClock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    stop.request_stop();
  });
  const BackoffPolicy long_waits{.initial = std::chrono::seconds(30), .max_attempts = 5};
  const Status status = Retry(long_waits, stop.get_token(), "test op", [&] {
    ++calls;
    return Transient();
  });
  const auto waited = SteadyClock::now() - started;
  stopper.join();
  EXPECT_EQ(calls, 1) << "no attempt after the stop";
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(ClassOf(status), ErrorClass::kRetriable) << "the last error is returned as it was";
  EXPECT_NE(status.message().find("stopping: retry abandoned"), std::string::npos)
      << status.message();
  // The stop came after 50 ms; a sleep would have lasted 30 s.
  EXPECT_LT(waited, milliseconds(5000));
}

TEST(RetryTest, AStopRequestedBeforeStillLetsTheFirstAttemptRunButNoRetry) {
  std::stop_source stop;
  stop.request_stop();
  int calls = 0;
  const Status status = Retry(BackoffPolicy{}, stop.get_token(), "drain commit", [&] {
    ++calls;
    return Transient();
  });
  EXPECT_EQ(calls, 1);
  EXPECT_NE(status.message().find("stopping: not retried"), std::string::npos) << status.message();
}

TEST(RetryTest, NoLockOfTheCallerIsHeldWhileWaiting) {
  // The operation takes the caller's mutex for its attempt only; while Retry waits, another
  // thread can take it (a sleep under the lock, as the old commit loop did, would block it).
  std::mutex caller_mutex;
  std::stop_source stop;
  std::atomic<bool> attempted{false};
  std::atomic<bool> taken_during_wait{false};
  std::thread other([&] {
    while (!attempted.load()) std::this_thread::yield();
    std::this_thread::sleep_for(milliseconds(20));  // Retry is in its 30 s wait by now
    std::unique_lock lock(caller_mutex, std::try_to_lock);
    taken_during_wait.store(lock.owns_lock());
    stop.request_stop();
  });
  const BackoffPolicy long_waits{.initial = std::chrono::seconds(30), .max_attempts = 3};
  const Status status = Retry(long_waits, stop.get_token(), "locked op", [&] {
    std::lock_guard lock(caller_mutex);
    attempted.store(true);
    return Transient();
  });
  other.join();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(taken_during_wait.load());
}

TEST(RetryTest, RetriesRetriableFailuresUntilSuccess) {
  int calls = 0;
  const Result<int> result = Retry(Quick(5), std::stop_token{}, "flaky", [&]() -> Result<int> {
    if (++calls < 3) return Transient();
    return 42;
  });
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(*result, 42);
  EXPECT_EQ(calls, 3);
}

TEST(RetryTest, FatalAndBadDataErrorsAreNotRetried) {
  int calls = 0;
  const Status fatal = Retry(Quick(5), std::stop_token{}, "fatal", [&] {
    ++calls;
    return ClassifiedError(ErrorClass::kFatal, "test", "denied", "denied");
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(fatal.message(), "denied");
  const Status bad = Retry(Quick(5), std::stop_token{}, "bad", [&] {
    ++calls;
    return ClassifiedError(ErrorClass::kBadData, "test", "refused", "refused");
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(ClassOf(bad), ErrorClass::kBadData);
}

TEST(RetryTest, ASpentBudgetReturnsTheLastErrorNamingTheBudget) {
  int calls = 0;
  const Status status = Retry(Quick(2), std::stop_token{}, "catalog", [&] {
    ++calls;
    return Transient();
  });
  EXPECT_EQ(calls, 3) << "the first attempt and two retries";
  EXPECT_EQ(status.message(), "catalog (retry budget of 2 attempts spent): busy");
}

TEST(RetryTest, ADeadlineEndsTheRetriesBeforeTheAttemptsDo) {
  BackoffPolicy policy{.initial = milliseconds(40),
                       .multiplier = 1.0,
                       .cap = milliseconds(40),
                       .max_jitter = 0.0,
                       .max_attempts = 1000,
                       .max_elapsed = milliseconds(200)};
  int calls = 0;
  const auto started = SteadyClock::now();
  const Status status = Retry(policy, std::stop_token{}, "catalog", [&] {
    ++calls;
    return Transient();
  });
  EXPECT_LT(SteadyClock::now() - started, milliseconds(200));
  EXPECT_GE(calls, 2);
  EXPECT_LE(calls, 5) << "no wait starts that would end past the deadline";
  EXPECT_NE(status.message().find("catalog (gave up after "), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("the limit being 0.2 s): busy"), std::string::npos)
      << status.message();
}

TEST(RetryTest, WaitForReturnsTrueWhenTheDelayPassesAndFalseWhenStopped) {
  EXPECT_TRUE(WaitFor(milliseconds(5), std::stop_token{}));
  std::stop_source stop;
  stop.request_stop();
  const auto started = SteadyClock::now();
  EXPECT_FALSE(WaitFor(std::chrono::hours(1), stop.get_token()));
  EXPECT_LT(SteadyClock::now() - started, milliseconds(5000));
}

}  // namespace
}  // namespace weir
