#include "app/probe_runner.h"

#include <condition_variable>
#include <memory>
#include <mutex>

#include <gtest/gtest.h>

namespace weir::app {
namespace {

using std::chrono::milliseconds;

// A gate that probes wait at; shared with probe threads that may outlive the test's frame.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0;
  bool open = false;
  bool finished = false;
};

TEST(ProbeRunnerTest, ProbesRunAtTheSameTime) {
  // Each probe waits until all three have started: run one after another, none would pass.
  auto gate = std::make_shared<Gate>();
  std::vector<Probe> probes;
  for (const char* name : {"a", "b", "c"}) {
    probes.push_back({name, [gate, name](milliseconds) -> Result<std::string> {
                        std::unique_lock lock(gate->mutex);
                        ++gate->arrived;
                        gate->changed.notify_all();
                        if (!gate->changed.wait_for(lock, std::chrono::seconds(20),
                                                    [&] { return gate->arrived == 3; })) {
                          return Status::IOError("alone");
                        }
                        return std::string("found ") + name;
                      }});
  }
  const ProbeReport report =
      RunProbes(std::move(probes), std::chrono::seconds(60), milliseconds(0));
  EXPECT_TRUE(report.ok());
  EXPECT_FALSE(report.abandoned);
  ASSERT_EQ(report.outcomes.size(), 3u);
  EXPECT_EQ(report.outcomes[0].name, "a");
  EXPECT_EQ(report.outcomes[0].detail, "found a");
  EXPECT_EQ(report.outcomes[2].name, "c");
  EXPECT_EQ(report.outcomes[2].detail, "found c");
}

TEST(ProbeRunnerTest, EachProbeGetsTheDeadlineAndAFailureKeepsItsMessage) {
  std::vector<Probe> probes;
  probes.push_back({"broken", [](milliseconds timeout) -> Result<std::string> {
                      return Status::IOError("refused after ", timeout.count(), " ms budget");
                    }});
  probes.push_back({"fine", [](milliseconds) -> Result<std::string> { return "ok"; }});
  const ProbeReport report = RunProbes(std::move(probes), milliseconds(1234), milliseconds(0));
  EXPECT_FALSE(report.ok());
  EXPECT_FALSE(report.abandoned);
  ASSERT_EQ(report.outcomes.size(), 2u);
  EXPECT_EQ(report.outcomes[0].verdict, Verdict::kFailed);
  EXPECT_EQ(report.outcomes[0].detail, "refused after 1234 ms budget");
  EXPECT_EQ(report.outcomes[1].verdict, Verdict::kOk);
}

TEST(ProbeRunnerTest, AProbeStillRunningAfterDeadlineAndGraceIsTimedOutAndLeftRunning) {
  auto gate = std::make_shared<Gate>();
  std::vector<Probe> probes;
  probes.push_back({"stuck", [gate](milliseconds) -> Result<std::string> {
                      std::unique_lock lock(gate->mutex);
                      gate->changed.wait(lock, [&] { return gate->open; });
                      gate->finished = true;
                      gate->changed.notify_all();
                      return "late";
                    }});
  probes.push_back({"quick", [](milliseconds) -> Result<std::string> { return "here"; }});
  const ProbeReport report = RunProbes(std::move(probes), milliseconds(50), milliseconds(20));
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(report.abandoned);
  ASSERT_EQ(report.outcomes.size(), 2u);
  EXPECT_EQ(report.outcomes[0].name, "stuck");
  EXPECT_EQ(report.outcomes[0].verdict, Verdict::kTimedOut);
  EXPECT_EQ(report.outcomes[0].detail, "no answer within 0.050s");
  EXPECT_GE(report.outcomes[0].duration, milliseconds(70));
  EXPECT_EQ(report.outcomes[1].verdict, Verdict::kOk);
  EXPECT_EQ(report.outcomes[1].detail, "here");
  // The abandoned probe finishes on its own thread once released.
  std::unique_lock lock(gate->mutex);
  gate->open = true;
  gate->changed.notify_all();
  gate->changed.wait(lock, [&] { return gate->finished; });
}

TEST(ProbeRunnerTest, OutcomesAreOneAlignedLineEach) {
  const std::vector<ProbeOutcome> outcomes = {
      {"topic events", Verdict::kOk, "3 partition(s)", milliseconds(12)},
      {"catalog", Verdict::kFailed, "cannot connect", milliseconds(2001)},
      {"storage", Verdict::kTimedOut, "no answer within 2.000s", milliseconds(2500)},
  };
  EXPECT_EQ(FormatOutcomes(outcomes),
            "ok       topic events    0.012s  3 partition(s)\n"
            "FAILED   catalog         2.001s  cannot connect\n"
            "TIMEOUT  storage         2.500s  no answer within 2.000s\n");
}

}  // namespace
}  // namespace weir::app
