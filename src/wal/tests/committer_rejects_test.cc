// The WAL committer's rejects segments (docs/ARCHITECTURE.md "Rejects in WAL mode"): uploaded
// to the rejects table, landing in the rows' commit (a table that commits its companion) or
// just before it under the rejects table's own ledger, never twice.
#include <filesystem>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/testing/fake_table.h"
#include "wal/committer.h"
#include "wal/segment_metadata.h"
#include "wal/segment_rotator.h"
#include "wal/tests/wal_test_util.h"

namespace weir::wal {
namespace {

using lake::testing::FakeCatalog;
using lake::testing::FakeStep;
using lake::testing::FakeTableState;
using testing::Rows;
using testing::ScratchDir;

class WalRejectsFixture : public ::testing::Test {
 protected:
  explicit WalRejectsFixture(bool companion)
      : companion_(companion),
        wal_("rejects-wal"),
        lake_("rejects-lake"),
        clock_(std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000))),
        catalog_(lake_.path()),
        rotator_(wal_.path(), {}, {}, {}, clock_, 7) {
    auto opened = catalog_.OpenTable(lake::TableSpec{"main", "events", {}, {}, {}},
                                     lake::OpenMode::kOpenOrCreate);
    EXPECT_TRUE(opened.ok());
    table_ = std::move(opened->table);
    auto rejects = catalog_.OpenTable(lake::TableSpec{"main", "events_rejects", {}, {}, {}},
                                      lake::OpenMode::kOpenOrCreate);
    EXPECT_TRUE(rejects.ok());
    rejects_table_ = std::move(rejects->table);
    data().commits_companion = companion_;
    committer_ = std::make_unique<WalCommitter>(
        wal_.path(), table_.get(), "host/1", clock_, 9,
        [this]() -> Result<lake::Table*> { return rejects_table_.get(); });
  }
  FakeTableState& data() { return catalog_.state("main.events"); }
  FakeTableState& rejects() { return catalog_.state("main.events_rejects"); }
  // Rotates offsets [first, first + count) of partition p: `count - bad` rows and `bad`
  // rejects (a rejects segment when bad > 0).
  void Rotation(int32_t p, int64_t first, int64_t count, int64_t bad) {
    if (!rotator_.Holds("t", p)) ASSERT_OK(rotator_.Assign("t", p, first));
    std::vector<PartitionRows> rows;
    if (count > bad) rows.push_back({"", PartitionMetadata({}), Rows(first, count - bad)});
    if (bad > 0) rows.push_back({kRejectsPartitionKey, RejectsMetadata(), Rows(1000 + first, bad)});
    ASSERT_OK_AND_ASSIGN(auto done, rotator_.Append("t", p, rows, first + count - 1));
    ASSERT_OK_AND_ASSIGN(auto rotated, rotator_.Rotate("t", p));
    ASSERT_TRUE(rotated.has_value());
  }
  int64_t LandedRejects() {
    int64_t n = 0;
    for (const auto& s : data().snapshots) {
      for (const auto& f : s.companion_files) n += f.info.rows;
    }
    for (const auto& s : rejects().snapshots) {
      for (const auto& f : s.files) n += f.info.rows;
    }
    return n;
  }

  bool companion_;
  ScratchDir wal_, lake_;
  ManualClock clock_;
  FakeCatalog catalog_;
  SegmentRotator rotator_;
  std::unique_ptr<lake::Table> table_, rejects_table_;
  std::unique_ptr<WalCommitter> committer_;
};

// Both formats' ways: one snapshot (DuckLake), or apart with the rejects first (Iceberg).
class WalRejectsTest : public WalRejectsFixture, public ::testing::WithParamInterface<bool> {
 protected:
  WalRejectsTest() : WalRejectsFixture(GetParam()) {}
};

// The rejects table apart (Iceberg's way): its own ledger, committed first.
class WalRejectsApartTest : public WalRejectsFixture {
 protected:
  WalRejectsApartTest() : WalRejectsFixture(false) {}
};

TEST_P(WalRejectsTest, RejectsLandOnceWithTheirRowsAndTheLocalFilesGo) {
  data().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10, 2);
  Rotation(0, 10, 5, 0);
  Rotation(0, 15, 3, 3);  // only rejects: no zero-row file, the rejects segment holds the range
  EXPECT_EQ(wal_.Names().size(), 4u);
  ASSERT_OK_AND_ASSIGN(const auto upload, committer_->Upload());
  EXPECT_EQ(upload.uploaded, 4);
  ASSERT_OK_AND_ASSIGN(const auto result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  EXPECT_EQ(result.rows, 13);
  EXPECT_EQ(result.rejects, 5);
  EXPECT_EQ(data().LandedRows(), 13);
  EXPECT_EQ(LandedRejects(), 5);
  EXPECT_EQ((data().ledger[{"t", 0}]), 18);
  ASSERT_EQ(data().snapshots.size(), 1u);
  if (GetParam()) {
    // One snapshot holds rows, rejects and the ledger.
    EXPECT_EQ(data().snapshots[0].companion_files.size(), 2u);
    EXPECT_EQ(data().requests[0].companion, rejects_table_.get());
    EXPECT_TRUE(rejects().snapshots.empty());
  } else {
    // The rejects table's own commit, first, moves its own ledger over the whole chain.
    ASSERT_EQ(rejects().snapshots.size(), 1u);
    EXPECT_LT(rejects().snapshots[0].sequence, data().snapshots[0].sequence);
    EXPECT_EQ((rejects().ledger[{"t", 0}]), 18);
    EXPECT_EQ(rejects().snapshots[0].writer, data().snapshots[0].writer + "/rejects");
    EXPECT_TRUE(data().snapshots[0].companion_files.empty());
    EXPECT_EQ(data().requests[0].companion, nullptr);
  }
  // The rejects' objects are in the rejects table's directory, named from the files' UUIDs.
  const auto& files =
      GetParam() ? data().snapshots[0].companion_files : rejects().snapshots[0].files;
  for (const auto& file : files) {
    EXPECT_TRUE(file.relative_path.starts_with("wal-")) << file.relative_path;
    EXPECT_NE(file.info.path.find(rejects_table_->DataDirectory()), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(file.info.path)) << file.info.path;
  }
  EXPECT_TRUE(wal_.Names().empty());
  // Nothing left: a second interval commits nothing.
  ASSERT_OK_AND_ASSIGN(const auto again, committer_->CommitOnce({}));
  EXPECT_FALSE(again.committed);
  EXPECT_EQ(LandedRejects(), 5);
}

TEST_P(WalRejectsTest, ARowsCommitThatDoesNotLandCommitsItsRejectsOnce) {
  data().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10, 4);
  ASSERT_OK(committer_->Upload().status());
  data().script = {FakeStep::kConflict};
  ASSERT_OK_AND_ASSIGN(const auto first, committer_->CommitOnce({}));
  EXPECT_FALSE(first.committed);
  EXPECT_EQ(data().LandedRows(), 0);
  // Apart, the rejects landed before the rows' conflict: R = 10 > D = 0.
  EXPECT_EQ(LandedRejects(), GetParam() ? 0 : 4);
  EXPECT_EQ(wal_.Names().size(), 2u);
  ASSERT_OK_AND_ASSIGN(const auto second, committer_->CommitOnce({}));
  EXPECT_TRUE(second.committed);
  EXPECT_EQ(data().LandedRows(), 6);
  EXPECT_EQ(LandedRejects(), 4);
  EXPECT_EQ(rejects().snapshots.size(), GetParam() ? 0u : 1u);
  EXPECT_TRUE(wal_.Names().empty());
}

TEST_F(WalRejectsApartTest, ARestartAfterTheRejectsLandedCommitsOnlyTheRows) {
  data().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10, 4);
  Rotation(0, 10, 10, 1);
  ASSERT_OK(committer_->Upload().status());
  data().script = {FakeStep::kRetriableError};
  EXPECT_FALSE(committer_->CommitOnce({}).ok());
  EXPECT_EQ(LandedRejects(), 5);
  // A new process (nothing uploaded in memory) finds R at the chain's end.
  committer_ = std::make_unique<WalCommitter>(
      wal_.path(), table_.get(), "host/2", clock_, 11,
      [this]() -> Result<lake::Table*> { return rejects_table_.get(); });
  ASSERT_OK(committer_->Upload().status());
  ASSERT_OK_AND_ASSIGN(const auto result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  EXPECT_EQ(result.rejects, 0);
  EXPECT_EQ(data().LandedRows(), 15);
  EXPECT_EQ(LandedRejects(), 5);
  EXPECT_EQ(rejects().commit_calls, 1);
}

TEST_F(WalRejectsApartTest, ARejectsCommitThatDoesNotLandHoldsTheRows) {
  data().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10, 4);
  ASSERT_OK(committer_->Upload().status());
  rejects().script = {FakeStep::kConflict};
  ASSERT_OK_AND_ASSIGN(const auto first, committer_->CommitOnce({}));
  EXPECT_FALSE(first.committed);
  EXPECT_EQ(data().commit_calls, 0);  // the rows never land before their rejects
  rejects().script = {FakeStep::kLostUnknown};
  ASSERT_OK_AND_ASSIGN(const auto second, committer_->CommitOnce({}));
  EXPECT_FALSE(second.committed);
  EXPECT_EQ(data().commit_calls, 0);
  rejects().script = {FakeStep::kLandUnknown};  // landed, read back: the rows follow
  ASSERT_OK_AND_ASSIGN(const auto third, committer_->CommitOnce({}));
  EXPECT_TRUE(third.committed);
  EXPECT_EQ(data().LandedRows(), 6);
  EXPECT_EQ(LandedRejects(), 4);
}

TEST_F(WalRejectsApartTest, ARejectsLedgerBelowTheChainClaimsTheGapTheRowsLedgerCovers) {
  data().ledger[{"t", 0}] = 10;  // [0, 10) landed without rejects: R never moved
  rejects().ledger[{"t", 0}] = 3;
  Rotation(0, 10, 10, 2);
  ASSERT_OK(committer_->Upload().status());
  ASSERT_OK_AND_ASSIGN(const auto result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  ASSERT_EQ(rejects().requests.size(), 1u);
  ASSERT_EQ(rejects().requests[0].offsets.size(), 1u);
  EXPECT_EQ(rejects().requests[0].offsets[0].start, 3);
  EXPECT_EQ(rejects().requests[0].offsets[0].end, 20);
  EXPECT_EQ((rejects().ledger[{"t", 0}]), 20);
}

TEST_F(WalRejectsApartTest, ARejectsLedgerInsideAGroupWithRejectsStopsTheCommitter) {
  data().ledger[{"t", 0}] = 0;
  rejects().ledger[{"t", 0}] = 5;  // another volume's range [0, 5) landed its rejects
  Rotation(0, 0, 10, 2);
  ASSERT_OK(committer_->Upload().status());
  auto result = committer_->CommitOnce({});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(ClassOf(result.status()), ErrorClass::kFatal);
  EXPECT_NE(result.status().message().find("rejects ledger"), std::string::npos);
  EXPECT_EQ(data().commit_calls, 0);
  EXPECT_EQ(wal_.Names().size(), 2u);  // nothing deleted
}

TEST_P(WalRejectsTest, ARejectsSegmentWithoutARejectsTableIsFatal) {
  committer_ = std::make_unique<WalCommitter>(wal_.path(), table_.get(), "host/1", clock_, 9);
  data().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10, 2);
  auto upload = committer_->Upload();
  ASSERT_FALSE(upload.ok());
  EXPECT_EQ(ClassOf(upload.status()), ErrorClass::kFatal);
}

INSTANTIATE_TEST_SUITE_P(Companion, WalRejectsTest, ::testing::Bool(), [](const auto& param_info) {
  return param_info.param ? "InOneSnapshot" : "Apart";
});

}  // namespace
}  // namespace weir::wal
