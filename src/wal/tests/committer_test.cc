#include "wal/committer.h"

#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/testing/fake_table.h"
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

class WalCommitterTest : public ::testing::Test {
 protected:
  WalCommitterTest()
      : wal_("committer-wal"),
        lake_("committer-lake"),
        clock_(std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000))),
        catalog_(lake_.path()),
        rotator_(wal_.path(), {}, {}, {}, clock_, 7) {
    auto opened = catalog_.OpenTable(lake::TableSpec{"main", "events", {}, {}, {}},
                                     lake::OpenMode::kOpenOrCreate);
    EXPECT_TRUE(opened.ok());
    table_ = std::move(opened->table);
    committer_ = std::make_unique<WalCommitter>(wal_.path(), table_.get(), "host/1", clock_, 9);
  }
  FakeTableState& state() { return catalog_.state("main.events"); }
  // Rotates rows [first, first + count) of partition p as offsets first..first+count-1.
  void Rotation(int32_t p, int64_t first, int64_t count) {
    if (!rotator_.Holds("t", p)) ASSERT_OK(rotator_.Assign("t", p, first));
    const PartitionRows rows{"", PartitionMetadata({}), Rows(first, count)};
    ASSERT_OK_AND_ASSIGN(auto done, rotator_.Append("t", p, {rows}, first + count - 1));
    ASSERT_OK_AND_ASSIGN(auto rotated, rotator_.Rotate("t", p));
    ASSERT_TRUE(rotated.has_value());
  }
  size_t ReadyFiles() const { return wal_.Names().size(); }

  ScratchDir wal_, lake_;
  ManualClock clock_;
  FakeCatalog catalog_;
  SegmentRotator rotator_;
  std::unique_ptr<lake::Table> table_;
  std::unique_ptr<WalCommitter> committer_;
};

TEST_F(WalCommitterTest, EveryUploadedGroupCommitsInOneCommitWithOneRangePerPartition) {
  state().ledger[{"t", 0}] = 0;
  state().ledger[{"t", 1}] = 0;
  Rotation(0, 0, 10);
  Rotation(0, 10, 5);
  Rotation(1, 0, 7);
  ASSERT_OK_AND_ASSIGN(const auto upload, committer_->Upload());
  EXPECT_EQ(upload.uploaded, 3);
  EXPECT_EQ(upload.failed, 0);
  ASSERT_OK_AND_ASSIGN(const auto result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  EXPECT_EQ(result.files, 3);
  EXPECT_EQ(result.rows, 22);
  ASSERT_EQ(state().snapshots.size(), 1u);
  EXPECT_EQ(state().LandedRows(), 22);
  EXPECT_EQ((state().ledger[{"t", 0}]), 15);
  EXPECT_EQ((state().ledger[{"t", 1}]), 7);
  ASSERT_EQ(state().requests.size(), 1u);
  ASSERT_EQ(state().requests[0].offsets.size(), 2u);
  EXPECT_EQ(state().requests[0].offsets[0].start, 0);
  EXPECT_EQ(state().requests[0].offsets[0].end, 15);
  // The objects carry the files' UUIDs; the local copies are gone after the commit.
  for (const auto& file : state().snapshots[0].files) {
    EXPECT_TRUE(file.relative_path.starts_with("wal-")) << file.relative_path;
    EXPECT_TRUE(std::filesystem::exists(file.info.path)) << file.info.path;
  }
  EXPECT_EQ(ReadyFiles(), 0u);
  EXPECT_EQ(result.deleted_local, 3);
}

TEST_F(WalCommitterTest, NothingIsCommittedBeforeItsUploadAndNothingLocalGoesWithoutACommit) {
  state().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto result, committer_->CommitOnce({}));
  EXPECT_FALSE(result.committed);
  EXPECT_EQ(result.waiting_groups, 1);
  EXPECT_EQ(state().commit_calls, 0);
  EXPECT_EQ(ReadyFiles(), 1u);
}

TEST_F(WalCommitterTest, AFailedCommitKeepsTheFilesAndTheNextIntervalLandsThem) {
  state().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto upload, committer_->Upload());
  state().script = {FakeStep::kRetriableError, FakeStep::kConflict};
  EXPECT_FALSE(committer_->CommitOnce({}).ok());
  EXPECT_EQ(ReadyFiles(), 1u);
  ASSERT_OK_AND_ASSIGN(auto result, committer_->CommitOnce({}));
  EXPECT_EQ(result.status, lake::CommitStatus::kConflict);
  EXPECT_FALSE(result.committed);
  EXPECT_EQ(ReadyFiles(), 1u);
  ASSERT_OK_AND_ASSIGN(result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  EXPECT_EQ(state().snapshots.size(), 1u);
  EXPECT_EQ(state().LandedRows(), 10);
  EXPECT_EQ(ReadyFiles(), 0u);
}

TEST_F(WalCommitterTest, AnUnknownOutcomeIsReadBackAndRetriedUnderTheSameWriter) {
  state().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto upload, committer_->Upload());
  state().script = {FakeStep::kLostUnknown};
  ASSERT_OK_AND_ASSIGN(auto result, committer_->CommitOnce({}));
  EXPECT_FALSE(result.committed);
  EXPECT_EQ(ReadyFiles(), 1u);
  state().script = {FakeStep::kLandUnknown};
  ASSERT_OK_AND_ASSIGN(result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  ASSERT_EQ(state().requests.size(), 2u);
  EXPECT_EQ(state().requests[0].writer, state().requests[1].writer);
  EXPECT_EQ(state().snapshots.size(), 1u);
  EXPECT_EQ(ReadyFiles(), 0u);
}

TEST_F(WalCommitterTest, AFenceLeavesTheFilesAndALedgerPastThemDeletesOnlyTheLocalCopies) {
  state().ledger[{"t", 0}] = 0;
  Rotation(0, 0, 10);
  ASSERT_OK_AND_ASSIGN(auto upload, committer_->Upload());
  // Another writer lands [0, 10) first (the same range, held twice: the ledger decides).
  state().before_commit = [](FakeTableState& s) { s.ledger[{"t", 0}] = 10; };
  ASSERT_OK_AND_ASSIGN(auto result, committer_->CommitOnce({}));
  EXPECT_EQ(result.status, lake::CommitStatus::kFenced);
  EXPECT_EQ(ReadyFiles(), 1u);
  state().before_commit = nullptr;
  ASSERT_OK_AND_ASSIGN(result, committer_->CommitOnce({}));
  EXPECT_FALSE(result.committed);
  EXPECT_EQ(result.deleted_local, 1);
  EXPECT_EQ(state().snapshots.size(), 0u);
  EXPECT_EQ(ReadyFiles(), 0u);
}

TEST_F(WalCommitterTest, AGroupAfterAGapWaitsAndALedgerInsideARangeStops) {
  state().ledger[{"t", 0}] = 5;
  Rotation(0, 10, 10);
  ASSERT_OK_AND_ASSIGN(auto upload, committer_->Upload());
  ASSERT_OK_AND_ASSIGN(auto result, committer_->CommitOnce({}));
  EXPECT_EQ(result.waiting_groups, 1);
  EXPECT_EQ(state().commit_calls, 0);
  state().ledger[{"t", 0}] = 12;
  const auto stopped = committer_->CommitOnce({});
  ASSERT_FALSE(stopped.ok());
  EXPECT_NE(stopped.status().message().find("ready_t_0_10-19_"), std::string::npos);
  EXPECT_EQ(ReadyFiles(), 1u);
}

TEST_F(WalCommitterTest, ARangeWithoutRowsMovesOnlyTheLedger) {
  state().ledger[{"t", 3}] = 40;
  ASSERT_OK(rotator_.Assign("t", 3, 40));
  ASSERT_OK(rotator_.Advance("t", 3, 49));
  ASSERT_OK_AND_ASSIGN(auto rotated, rotator_.Rotate("t", 3));
  ASSERT_OK_AND_ASSIGN(auto upload, committer_->Upload());
  EXPECT_EQ(upload.uploaded, 0);  // nothing to upload
  ASSERT_OK_AND_ASSIGN(auto result, committer_->CommitOnce({}));
  EXPECT_TRUE(result.committed);
  EXPECT_EQ(result.files, 0);
  EXPECT_EQ((state().ledger[{"t", 3}]), 50);
  EXPECT_EQ(ReadyFiles(), 0u);
}

TEST_F(WalCommitterTest, AGuardedListingNeverSeesAFileWhoseOffsetsAreUndecided) {
  // The poll thread holds the guard from the rename until the group refused the offsets and
  // the files are gone: a commit started meanwhile lists after that, and lands nothing.
  std::mutex guard;
  committer_->GuardListing(&guard);
  state().ledger[{"t", 0}] = 0;
  std::unique_lock held(guard);
  Rotation(0, 0, 10);
  ASSERT_OK(committer_->Upload().status());  // the uploader may copy it; only commits list
  Result<CommitOnceResult> result = Status::UnknownError("not run");
  std::thread committing([&] { result = committer_->CommitOnce({}); });
  for (const auto& name : wal_.Names()) std::filesystem::remove(wal_.path() + "/" + name);
  held.unlock();
  committing.join();
  ASSERT_OK(result.status());
  EXPECT_FALSE(result->committed);
  EXPECT_EQ(state().commit_calls, 0);
  EXPECT_EQ((state().ledger[{"t", 0}]), 0);
}

}  // namespace
}  // namespace weir::wal
