// EncodeLanes (issue 12, flush.encode_lanes): jobs of different lanes run at once, a part goes
// to the lowest idle lane, errors are kept until Drain, and one lane runs its jobs on the
// caller's thread.
#include "ingest/encode_lanes.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "assert_status.h"

namespace weir::ingest {
namespace {

using namespace std::chrono_literals;

TEST(EncodeLanesTest, OneLaneRunsEachJobOnTheCallersThreadAtOnce) {
  EncodeLanes lanes(1);
  EXPECT_EQ(lanes.size(), 1u);
  std::thread::id ran_on;
  const size_t lane = lanes.Acquire();
  EXPECT_EQ(lane, 0u);
  lanes.Run(lane, [&] {
    ran_on = std::this_thread::get_id();
    return Status::OK();
  });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_FALSE(lanes.Failed());
  ASSERT_OK(lanes.Drain());
}

TEST(EncodeLanesTest, TwoLanesRunTheirJobsAtTheSameTime) {
  EncodeLanes lanes(2);
  // Each job waits until the other has started: they can only both finish if they overlap.
  std::promise<void> first_started, second_started;
  auto first_seen = second_started.get_future();
  auto second_seen = first_started.get_future();
  std::atomic<int> overlapped{0};
  const size_t a = lanes.Acquire();
  lanes.Run(a, [&] {
    first_started.set_value();
    if (first_seen.wait_for(30s) == std::future_status::ready) ++overlapped;
    return Status::OK();
  });
  const size_t b = lanes.Acquire();
  EXPECT_NE(a, b) << "lane " << a << " is busy: the next part goes to the other";
  lanes.Run(b, [&] {
    second_started.set_value();
    if (second_seen.wait_for(30s) == std::future_status::ready) ++overlapped;
    return Status::OK();
  });
  ASSERT_OK(lanes.Drain());
  EXPECT_EQ(overlapped.load(), 2);
}

TEST(EncodeLanesTest, TheLowestIdleLaneTakesTheNextPart) {
  EncodeLanes lanes(3);
  for (int i = 0; i < 5; ++i) {
    // Each job ends before the next is handed out (Drain): lane 0 takes them all.
    const size_t lane = lanes.Acquire();
    EXPECT_EQ(lane, 0u);
    lanes.Run(lane, [] { return Status::OK(); });
    ASSERT_OK(lanes.Drain());
  }
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto blocked = [released] {
    released.wait();
    return Status::OK();
  };
  EXPECT_EQ(lanes.Acquire(), 0u);
  lanes.Run(0, blocked);
  EXPECT_EQ(lanes.Acquire(), 1u);
  lanes.Run(1, blocked);
  EXPECT_EQ(lanes.Acquire(), 2u);
  lanes.Run(2, blocked);
  // Every lane busy: Acquire waits until one is idle again.
  auto next = std::async(std::launch::async, [&] { return lanes.Acquire(); });
  EXPECT_EQ(next.wait_for(50ms), std::future_status::timeout);
  release.set_value();
  ASSERT_EQ(next.wait_for(30s), std::future_status::ready);
  EXPECT_LT(next.get(), 3u);
  ASSERT_OK(lanes.Drain());
}

TEST(EncodeLanesTest, TheFirstErrorIsKeptUntilDrainAndDrainClearsIt) {
  EncodeLanes lanes(2);
  lanes.Run(lanes.Acquire(), [] { return Status::IOError("first"); });
  EXPECT_EQ(lanes.Drain().message(), "first");
  lanes.Run(lanes.Acquire(), [] { return Status::IOError("second"); });
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!lanes.Failed() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(lanes.Failed());
  lanes.Run(lanes.Acquire(), [] { return Status::IOError("third"); });
  const Status drained = lanes.Drain();
  EXPECT_EQ(drained.message(), "second");
  EXPECT_FALSE(lanes.Failed());
  ASSERT_OK(lanes.Drain());
}

TEST(EncodeLanesTest, TheDestructorWaitsForTheRunningJobs) {
  std::atomic<int> done{0};
  {
    EncodeLanes lanes(2);
    for (int i = 0; i < 2; ++i) {
      lanes.Run(lanes.Acquire(), [&] {
        std::this_thread::sleep_for(20ms);
        ++done;
        return Status::OK();
      });
    }
  }
  EXPECT_EQ(done.load(), 2);
}

}  // namespace
}  // namespace weir::ingest
