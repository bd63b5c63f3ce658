#include "app/stop_signals.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "base/retry.h"

namespace weir::app {
namespace {

using std::chrono::milliseconds;

TEST(StopSignalsTest, SigtermRequestsTheStopAndEndsAWaitOnItsToken) {
  auto signals = StopSignals::Install();
  ASSERT_TRUE(signals.ok()) << signals.status().ToString();
  const std::stop_token token = (*signals)->token();
  EXPECT_FALSE(token.stop_requested());
  std::thread sender([] {
    std::this_thread::sleep_for(milliseconds(50));
    ::raise(SIGTERM);
  });
  const auto started = std::chrono::steady_clock::now();
  // A 30 s backoff, as the writer would wait: the signal must end it.
  EXPECT_FALSE(WaitFor(std::chrono::seconds(30), token));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  sender.join();
  EXPECT_TRUE(token.stop_requested());
  // A second signal is harmless.
  ::raise(SIGINT);
  signals->reset();
}

}  // namespace
}  // namespace weir::app
