// WalCommitLoop (ingest/wal_commit_loop.h) on the fake lake: a drain commits every ready file of
// every dataset, one commit per dataset, rejects segments as the companion files of their
// dataset's commit; a ledger inside a range stops the loop through fatal().
#include "ingest/wal_commit_loop.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/testing/fake_table.h"
#include "observe/metric_names.h"
#include "wal/segment_metadata.h"
#include "wal/segment_rotator.h"
#include "wal/tests/wal_test_util.h"

namespace weir::ingest {
namespace {

using lake::testing::FakeCatalog;
using wal::testing::Rows;
using wal::testing::ScratchDir;

lake::TableSpec Spec(const std::string& table) { return {"main", table, {}, {}, {}}; }

class WalCommitLoopTest : public ::testing::Test {
 protected:
  WalCommitLoopTest() : wal_("loop-wal"), lake_("loop-lake"), catalog_(lake_.path()) {
    for (const char* name : {"events", "other"}) {
      std::filesystem::create_directories(Dir(name));
      EXPECT_TRUE(catalog_.OpenTable(Spec(name), lake::OpenMode::kOpenOrCreate).ok());
    }
  }
  std::string Dir(const std::string& dataset) const { return wal_.path() + "/" + dataset; }
  // Rotates offsets [first, first + count) of t/p into `dataset`'s WAL: count - bad rows, and
  // a rejects segment of `bad` when bad > 0.
  void Rotate(const std::string& dataset, int32_t p, int64_t first, int64_t count,
              int64_t bad = 0) {
    wal::SegmentRotator rotator(Dir(dataset), {}, {}, {}, Clock::System(), 3);
    ASSERT_OK(rotator.Assign("t", p, first));
    std::vector<wal::PartitionRows> rows;
    if (count > bad) rows.push_back({"", wal::PartitionMetadata({}), Rows(first, count - bad)});
    if (bad > 0) {
      rows.push_back({wal::kRejectsPartitionKey, wal::RejectsMetadata(), Rows(first, bad)});
    }
    ASSERT_OK(rotator.Append("t", p, rows, first + count - 1).status());
    ASSERT_OK_AND_ASSIGN(auto rotated, rotator.Rotate("t", p));
    ASSERT_TRUE(rotated.has_value());
  }
  WalCommitLoopOptions Options() {
    WalCommitLoopOptions options;
    options.datasets = {{"events", Dir("events"), Spec("events"), Spec("events_rejects"), {}},
                        {"other", Dir("other"), Spec("other"), std::nullopt, {}}};
    options.upload_interval = std::chrono::hours(1);  // only the drain works
    options.commit_interval = std::chrono::hours(1);
    return options;
  }
  double Commits(const std::string& dataset) {
    return metrics_.Counter(observe::kCommits, {{std::string(observe::kLabelDataset), dataset}})
        .value();
  }

  ScratchDir wal_, lake_;
  FakeCatalog catalog_;
  observe::MetricsRegistry metrics_;
};

TEST_F(WalCommitLoopTest, ADrainCommitsEveryReadyFileOfEachDatasetInOneCommit) {
  catalog_.state("main.events").ledger[{"t", 0}] = 0;
  catalog_.state("main.events").ledger[{"t", 1}] = 0;
  catalog_.state("main.other").ledger[{"t", 0}] = 100;
  Rotate("events", 0, 0, 10, 3);
  Rotate("events", 0, 10, 10);
  Rotate("events", 1, 0, 5, 5);  // rejects only
  Rotate("other", 0, 100, 7);
  WalCommitLoop loop(Options(), &catalog_, &metrics_);
  // Known origins: the loop asks no broker for low watermarks (there is none here).
  for (int32_t p : {0, 1}) loop.SetOrigin("t", p, 0);
  loop.Start();
  EXPECT_TRUE(loop.Drain(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
  loop.Stop();
  ASSERT_OK(loop.fatal());
  const auto& events = catalog_.state("main.events");
  ASSERT_EQ(events.snapshots.size(), 1u);
  EXPECT_EQ(events.LandedRows(), 17);
  int64_t rejects = 0;
  for (const auto& file : events.snapshots[0].companion_files) rejects += file.info.rows;
  EXPECT_EQ(rejects, 8);
  EXPECT_EQ(events.requests[0].offsets.size(), 2u);
  EXPECT_EQ((catalog_.state("main.events").ledger[{"t", 0}]), 20);
  EXPECT_EQ((catalog_.state("main.events").ledger[{"t", 1}]), 5);
  const auto& other = catalog_.state("main.other");
  ASSERT_EQ(other.snapshots.size(), 1u);
  EXPECT_EQ(other.LandedRows(), 7);
  EXPECT_EQ((catalog_.state("main.other").ledger[{"t", 0}]), 107);
  EXPECT_TRUE(std::filesystem::is_empty(Dir("events")));
  EXPECT_TRUE(std::filesystem::is_empty(Dir("other")));
  EXPECT_EQ(Commits("events"), 1);
  EXPECT_EQ(Commits("other"), 1);
}

TEST_F(WalCommitLoopTest, ALedgerInsideARangeStopsTheLoopWithItsError) {
  catalog_.state("main.events").ledger[{"t", 0}] = 4;
  Rotate("events", 0, 0, 10);
  WalCommitLoop loop(Options(), &catalog_, &metrics_);
  // Known origins: the loop asks no broker for low watermarks (there is none here).
  for (int32_t p : {0, 1}) loop.SetOrigin("t", p, 0);
  loop.Start();
  EXPECT_FALSE(loop.Drain(std::chrono::steady_clock::now() + std::chrono::seconds(60)));
  loop.Stop();
  ASSERT_FALSE(loop.fatal().ok());
  EXPECT_NE(loop.fatal().message().find("stands inside the range"), std::string::npos)
      << loop.fatal().ToString();
  EXPECT_EQ(catalog_.state("main.events").commit_calls, 0);
  EXPECT_FALSE(std::filesystem::is_empty(Dir("events")));  // nothing deleted
}

}  // namespace
}  // namespace weir::ingest
