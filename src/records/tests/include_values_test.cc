#include "records/include_values.h"

#include <deque>
#include <mutex>

#include <gtest/gtest.h>

#include "base/clock.h"

namespace weir::records {
namespace {

FilterValues Json(const std::string& body) { return *ParseFilterValuesJson(body); }
FilterValues Ints(std::vector<int64_t> v) {
  FilterValues out;
  out.integers = std::move(v);
  std::sort(out.integers.begin(), out.integers.end());
  return out;
}
FilterValues Texts(std::vector<std::string> v) {
  FilterValues out;
  out.kind = FilterValueKind::kText;
  out.texts = std::move(v);
  std::sort(out.texts.begin(), out.texts.end());
  return out;
}
using Labels = std::vector<std::string>;

TEST(IncludeValuesState, AdditionsApplyAtOnceAndRemovalsAfterNConsecutivePolls) {
  IncludeValuesState state(Ints({1}), 3);
  EXPECT_FALSE(state.synced());
  auto v = state.Apply(Json("[1, 2, 3]"));
  EXPECT_TRUE(v.refused.empty());
  EXPECT_EQ(v.added, (Labels{"2", "3"}));
  EXPECT_TRUE(state.synced());
  EXPECT_EQ(state.values(), Ints({1, 2, 3}));
  // 3 is absent: two polls count down, the third removes it.
  EXPECT_TRUE(state.Apply(Json("[1, 2]")).removed.empty());
  EXPECT_EQ(state.pending_removals(), 1u);
  EXPECT_TRUE(state.Apply(Json("[1, 2]")).removed.empty());
  EXPECT_EQ(state.Apply(Json("[1, 2]")).removed, (Labels{"3"}));
  EXPECT_EQ(state.values(), Ints({1, 2}));
  EXPECT_EQ(state.pending_removals(), 0u);
}

TEST(IncludeValuesState, AReappearanceResetsTheCountdownAndRefusalsAdvanceNothing) {
  IncludeValuesState state(Ints({1}), 2);
  state.Apply(Json("[1, 2, 3, 4, 5]"));
  state.Apply(Json("[1, 2, 3, 4]"));  // 5 absent once
  EXPECT_EQ(state.pending_removals(), 1u);
  state.Apply(Json("[1, 2, 3, 4, 5]"));  // back: reset
  EXPECT_EQ(state.pending_removals(), 0u);
  state.Apply(Json("[1, 2, 3, 4]"));  // absent once again
  // Refused polls between do not advance it.
  EXPECT_EQ(state.Apply(Json("[]")).refused, kRefusedEmpty);
  EXPECT_EQ(state.Apply(Json(R"(["a"])")).refused, kRefusedTypeFlip);
  EXPECT_EQ(state.values(), Ints({1, 2, 3, 4, 5}));
  EXPECT_EQ(state.pending_removals(), 1u);
  EXPECT_EQ(state.Apply(Json("[1, 2, 3, 4]")).removed, (Labels{"5"}));
}

TEST(IncludeValuesState, PinsNeverLeaveAndAPinsOnlySetAcceptsAnEmptyAnswer) {
  IncludeValuesState pins_only(Ints({7, 8}), 1);
  auto v = pins_only.Apply(Json("[]"));
  EXPECT_TRUE(v.refused.empty());
  EXPECT_TRUE(pins_only.synced());
  EXPECT_EQ(pins_only.values(), Ints({7, 8}));

  IncludeValuesState state(Ints({7}), 1);
  state.Apply(Json("[7, 9]"));
  v = state.Apply(Json("[9]"));  // the endpoint drops the pin: it stays
  EXPECT_TRUE(v.removed.empty());
  EXPECT_EQ(state.values(), Ints({7, 9}));
  // Endpoint values held: empty is refused.
  EXPECT_EQ(state.Apply(Json("[]")).refused, kRefusedEmpty);
  EXPECT_EQ(state.values(), Ints({7, 9}));
}

TEST(IncludeValuesState, BulkRemovalIsRefusedAgainstTheManagedSliceButItsAdditionsApply) {
  IncludeValuesState state(Ints({100}), 1);
  state.Apply(Json("[1, 2, 3, 4]"));
  // managed = {1,2,3,4} (the pin 100 is not served); removing 3 of 4 is more than half.
  auto v = state.Apply(Json("[4, 5]"));
  EXPECT_EQ(v.refused, kRefusedBulkRemoval);
  EXPECT_EQ(v.added, (Labels{"5"}));
  EXPECT_TRUE(v.removed.empty());
  EXPECT_EQ(state.values(), Ints({1, 2, 3, 4, 5, 100}));
  // Removing exactly half (2 of 4 managed... now 5 managed: 2 of 5) is allowed.
  v = state.Apply(Json("[1, 2, 5]"));
  EXPECT_TRUE(v.refused.empty());
  EXPECT_EQ(v.removed, (Labels{"3", "4"}));
  // One of two may go.
  IncludeValuesState two(Ints({100}), 1);
  two.Apply(Json("[1, 2]"));
  EXPECT_EQ(two.Apply(Json("[1]")).removed, (Labels{"2"}));
}

TEST(IncludeValuesState, ServedPinsCountInTheManagedSlice) {
  // The endpoint serves the pins too: dropping 2 of its 12 is not bulk.
  IncludeValuesState state(Ints({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), 1);
  state.Apply(Json("[1,2,3,4,5,6,7,8,9,10,11,12]"));
  auto v = state.Apply(Json("[1,2,3,4,5,6,7,8,9,10]"));
  EXPECT_TRUE(v.refused.empty());
  EXPECT_EQ(v.removed, (Labels{"11", "12"}));
}

TEST(IncludeValuesState, TextSetsWorkAlikeAndRefuseIntegers) {
  IncludeValuesState state(Texts({"a"}), 1);
  EXPECT_EQ(state.Apply(Json("[1, 2]")).refused, kRefusedTypeFlip);
  EXPECT_FALSE(state.synced());
  EXPECT_EQ(state.Apply(Json(R"(["a", "b"])")).added, (Labels{"b"}));
  EXPECT_EQ(state.values(), Texts({"a", "b"}));
}

TEST(IncludeValues, JitterStaysWithinTenPercent) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 1000; ++i) {
    const auto d = JitteredInterval(std::chrono::milliseconds(60000), rng);
    EXPECT_GE(d.count(), 54000);
    EXPECT_LE(d.count(), 66000);
  }
}

// A scripted endpoint: each fetch takes the next answer (an empty optional is a failure).
class FakeEndpoint {
 public:
  void Push(std::optional<std::string> answer) {
    std::lock_guard lock(mutex_);
    answers_.push_back(std::move(answer));
  }
  Result<std::string> Fetch(const std::stop_token& stop) {
    std::unique_lock lock(mutex_);
    ++fetches_;
    if (answers_.empty()) {
      if (block_when_empty_) {
        changed_.wait(lock, stop, [] { return false; });  // a stalled endpoint, until stopped
        return Status::IOError("stopped");
      }
      return Status::IOError("no answer scripted");
    }
    auto answer = std::move(answers_.front());
    answers_.pop_front();
    if (!answer) return Status::IOError("connection refused");
    return *answer;
  }
  int fetches() {
    std::lock_guard lock(mutex_);
    return fetches_;
  }
  bool block_when_empty_ = false;

 private:
  std::mutex mutex_;
  std::condition_variable_any changed_;
  std::deque<std::optional<std::string>> answers_;
  int fetches_ = 0;
};

IncludeValuesOptions Options(IncludeValuesMode mode, FilterValues pins) {
  IncludeValuesOptions o;
  o.url = "http://endpoint.test/values";
  o.mode = mode;
  o.pins = std::move(pins);
  o.removal_polls = 2;
  o.poll_interval = std::chrono::hours(1);  // PollOnce drives the tests
  o.startup_timeout = std::chrono::milliseconds(200);
  return o;
}

TEST(IncludeValuesPoller, AuthoritativeServesTheHeldSetAndReportsEachPoll) {
  FakeEndpoint endpoint;
  ManualClock clock(std::chrono::system_clock::time_point(std::chrono::seconds(1000)));
  std::vector<IncludeValuesReport> reports;
  IncludeValuesPoller poller(
      Options(IncludeValuesMode::kAuthoritative, Ints({1})),
      [&](const std::stop_token& stop) { return endpoint.Fetch(stop); },
      [&](const IncludeValuesReport& r) { reports.push_back(r); }, clock, 1);
  std::stop_source stop;
  endpoint.Push("[1, 2, 3]");
  poller.PollOnce(stop.get_token());
  EXPECT_EQ(*poller.Current(), Ints({1, 2, 3}));
  endpoint.Push(std::nullopt);  // a failed poll keeps the set
  clock.Advance(std::chrono::seconds(60));
  poller.PollOnce(stop.get_token());
  EXPECT_EQ(*poller.Current(), Ints({1, 2, 3}));
  endpoint.Push("[1, 2]");
  poller.PollOnce(stop.get_token());
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_TRUE(reports[0].answered);
  EXPECT_EQ(reports[0].size, 3u);
  EXPECT_EQ(reports[0].pinned, 1u);
  EXPECT_EQ(reports[0].pinned_only, 0u);
  EXPECT_EQ(reports[0].last_success_unix_seconds, 1000.0);
  EXPECT_FALSE(reports[0].shadow_only_static.has_value());
  EXPECT_FALSE(reports[1].answered);
  EXPECT_EQ(reports[2].pending_removals, 1u);
  EXPECT_EQ(reports[2].last_success_unix_seconds, 1060.0);
}

TEST(IncludeValuesPoller, ShadowServesTheStaticValuesAndReportsTheDiff) {
  FakeEndpoint endpoint;
  ManualClock clock(std::chrono::system_clock::time_point{});
  std::vector<IncludeValuesReport> reports;
  IncludeValuesPoller poller(
      Options(IncludeValuesMode::kShadow, Ints({1, 2, 3})),
      [&](const std::stop_token& stop) { return endpoint.Fetch(stop); },
      [&](const IncludeValuesReport& r) { reports.push_back(r); }, clock, 1);
  endpoint.Push("[2, 3, 4, 5]");
  poller.PollOnce({});
  EXPECT_EQ(*poller.Current(), Ints({1, 2, 3}));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(*reports[0].shadow_only_static, 1u);
  EXPECT_EQ(*reports[0].shadow_only_remote, 2u);
  EXPECT_EQ(reports[0].size, 5u);  // what authoritative mode would serve
  EXPECT_EQ(reports[0].pinned_only, 1u);
}

TEST(IncludeValuesPoller, AuthoritativeStartWaitsForAGoodPollAndFailsWithoutOne) {
  for (const bool answers : {true, false}) {
    FakeEndpoint endpoint;
    if (answers) {
      endpoint.Push(std::nullopt);
      endpoint.Push("[5]");
    }
    auto options = Options(IncludeValuesMode::kAuthoritative, Ints({1}));
    options.poll_interval = std::chrono::milliseconds(20);
    IncludeValuesPoller poller(
        options, [&](const std::stop_token& stop) { return endpoint.Fetch(stop); }, nullptr,
        Clock::System(), 1);
    const Status started = poller.Start({});
    if (answers) {
      EXPECT_TRUE(started.ok()) << started.ToString();
      EXPECT_EQ(*poller.Current(), Ints({1, 5}));
    } else {
      ASSERT_FALSE(started.ok());
      EXPECT_NE(started.message().find("include_values.startup_timeout"), std::string::npos);
      EXPECT_GE(endpoint.fetches(), 2);  // it kept polling until the deadline
    }
    poller.Stop();
  }
}

TEST(IncludeValuesPoller, ShadowStartDoesNotWaitAndAStopEndsAStalledPoll) {
  FakeEndpoint endpoint;
  endpoint.block_when_empty_ = true;
  IncludeValuesPoller poller(
      Options(IncludeValuesMode::kShadow, Ints({1})),
      [&](const std::stop_token& stop) { return endpoint.Fetch(stop); }, nullptr, Clock::System(),
      1);
  std::stop_source owner;
  ASSERT_TRUE(poller.Start(owner.get_token()).ok());
  while (endpoint.fetches() == 0) std::this_thread::yield();
  owner.request_stop();  // SIGTERM: the stalled fetch returns and the thread ends
  poller.Stop();
  EXPECT_EQ(endpoint.fetches(), 1);
}

}  // namespace
}  // namespace weir::records
