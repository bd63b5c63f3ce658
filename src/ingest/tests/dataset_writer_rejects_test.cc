// DatasetWriter's rejects on a table that cannot commit them in the rows' snapshot
// (Table::CommitsCompanion() false, as Iceberg's): the rejects table commits first, with its own
// ledger, and a crash, retry, rewrite or racing writer between the two commits neither loses
// nor duplicates a reject. Exactly once is asserted on the offsets in the rejects files that
// landed.
#include <filesystem>
#include <set>

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "harness_env.h"
#include "ingest/dataset_writer.h"
#include "lake/testing/fake_table.h"
#include "writer_fixture.h"

namespace weir::ingest {
namespace {

using lake::testing::FakeCatalog;
using lake::testing::FakeStep;
using lake::testing::FakeTableState;
using std::chrono::milliseconds;
using Ledger = std::map<std::pair<std::string, int32_t>, int64_t>;

// A flush of partition 0 covering [start, end): rows for every offset but `poison`, which are
// rejects.
SealedFlush Flush(int64_t start, int64_t end, const std::set<int64_t>& poison) {
  arrow::Int64Builder ids;
  SealedFlush flush;
  for (int64_t offset = start; offset < end; ++offset) {
    if (!poison.count(offset)) {
      EXPECT_TRUE(ids.Append(offset).ok());
      continue;
    }
    RejectRecord reject;
    reject.topic = "t";
    reject.offset = offset;
    reject.payload = "{oops";
    reject.reason = "invalid_json";
    flush.rejects.push_back(reject);
  }
  auto array = ids.Finish().ValueOrDie();
  flush.batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}),
                                         array->length(), {array});
  flush.offsets = {{"t", 0, start, end}};
  flush.records = end - start;
  return flush;
}

class RejectsApartTest : public WriterFixture {
 protected:
  void SetUp() override {
    SetUpWriter("dataset_writer_rejects_");
    events().commits_companion = false;
  }

  FakeTableState& events() { return catalog_->state("main.events"); }
  FakeTableState& rejects() { return catalog_->state("main.events_rejects"); }

  // The values of an int64 column of every file the table's landed snapshots reference, in
  // landing order (no commit may carry a companion's files here).
  static std::vector<int64_t> Landed(const FakeTableState& state, const std::string& column) {
    for (const auto& snapshot : state.snapshots) {
      EXPECT_TRUE(snapshot.companion_files.empty()) << "a commit carried a companion's files";
    }
    return LandedInt64s(state, column);
  }
  std::vector<int64_t> LandedRejectOffsets() { return Landed(rejects(), "offset"); }
  std::vector<int64_t> LandedRowIds() { return Landed(events(), "id"); }

  std::set<std::string> FilesOnDisk() const {
    std::set<std::string> out;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
      if (entry.path().extension() == ".parquet") out.insert(entry.path().string());
    }
    return out;
  }

  std::set<std::string> FilesLanded() {
    std::set<std::string> out;
    for (auto* state : {&events(), &rejects()}) {
      for (const auto& snapshot : state->snapshots) {
        for (const auto& file : snapshot.files) out.insert(file.info.path);
      }
    }
    return out;
  }
};

TEST_F(RejectsApartTest, TheRejectsCommitFirstInTheirOwnSnapshotWithTheirOwnLedger) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10, {3, 7})));
  EXPECT_FALSE(outcome.fenced);
  EXPECT_EQ(outcome.rows, 8);
  EXPECT_EQ(outcome.rejects, 2);
  EXPECT_EQ(outcome.files, 2);
  ASSERT_EQ(rejects().snapshots.size(), 1u);
  ASSERT_EQ(events().snapshots.size(), 1u);
  EXPECT_LT(rejects().snapshots[0].sequence, events().snapshots[0].sequence)
      << "the rejects land before the rows";
  EXPECT_EQ(rejects().snapshots[0].writer, events().snapshots[0].writer + "/rejects");
  EXPECT_EQ(rejects().ledger, (Ledger{{{"t", 0}, 10}}));
  EXPECT_EQ(events().ledger, (Ledger{{{"t", 0}, 10}}));
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
  // A flush without rejects does not touch the rejects table.
  ASSERT_OK(writer.Write(Flush(10, 20, {})).status());
  EXPECT_EQ(rejects().commit_calls, 1);
  EXPECT_EQ(events().ledger, (Ledger{{{"t", 0}, 20}}));
  EXPECT_EQ(rejects().ledger, (Ledger{{{"t", 0}, 10}}));
}

TEST_F(RejectsApartTest, ACrashBetweenTheTwoCommitsNeitherLosesNorDuplicatesAReject) {
  {
    // The process dies after the rejects landed, before the rows did.
    events().script = {FakeStep::kFatalError};
    DatasetWriter writer(config_, catalog_.get());
    EXPECT_FALSE(writer.Write(Flush(0, 10, {3, 7})).ok());
    EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{3, 7}));
    EXPECT_TRUE(events().snapshots.empty());
  }
  // The next start re-reads the same records from the rows' ledger.
  DatasetWriter restarted(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, restarted.Write(Flush(0, 10, {3, 7})));
  EXPECT_EQ(outcome.rows, 8);
  EXPECT_EQ(outcome.rejects, 0) << "both were in the rejects table already";
  EXPECT_EQ(rejects().commit_calls, 1) << "no second rejects commit";
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(LandedRowIds(), (std::vector<int64_t>{0, 1, 2, 4, 5, 6, 8, 9}));
  EXPECT_EQ(events().ledger, (Ledger{{{"t", 0}, 10}}));
}

TEST_F(RejectsApartTest, ARetryWithOtherFlushBoundariesCommitsOnlyTheRejectsBeyondTheLedger) {
  {
    events().script = {FakeStep::kFatalError};
    DatasetWriter writer(config_, catalog_.get());
    EXPECT_FALSE(writer.Write(Flush(0, 10, {3, 7})).ok());
  }
  DatasetWriter restarted(config_, catalog_.get());
  // The records come back in other flushes: [0, 5), then [5, 12).
  ASSERT_OK(restarted.Write(Flush(0, 5, {3})).status());
  EXPECT_EQ(rejects().commit_calls, 1);
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, restarted.Write(Flush(5, 12, {7, 11})));
  EXPECT_EQ(outcome.rejects, 1);
  ASSERT_EQ(rejects().requests.size(), 2u);
  ASSERT_EQ(rejects().requests[1].offsets.size(), 1u);
  EXPECT_EQ(rejects().requests[1].offsets[0].start, 10) << "the ledger moves from where it stood";
  EXPECT_EQ(rejects().requests[1].offsets[0].end, 12);
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{3, 7, 11}));
  EXPECT_EQ(LandedRowIds(), (std::vector<int64_t>{0, 1, 2, 4, 5, 6, 8, 9, 10}));
  EXPECT_EQ(rejects().ledger, (Ledger{{{"t", 0}, 12}}));
  EXPECT_EQ(events().ledger, (Ledger{{{"t", 0}, 12}}));
}

TEST_F(RejectsApartTest, RejectsAfterAFlushWhoseRowsHaveNotLandedAreNotCommitted) {
  // The rejects ledger stands at 5 and the rows' at 0: whatever covers [5, 10) has not landed
  // (a zombie's queued flush after its fenced one). Committing [10, 20)'s rejects would move
  // the rejects ledger past rejects of [5, 10) that nobody committed.
  rejects().ledger[{"t", 0}] = 5;
  events().ledger[{"t", 0}] = 0;
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(10, 20, {15})));
  EXPECT_TRUE(outcome.fenced);
  EXPECT_EQ(rejects().commit_calls, 0);
  EXPECT_EQ(events().commit_calls, 0);
  EXPECT_TRUE(FilesOnDisk().empty());
  // Once the rows up to 10 landed (with their rejects), the same flush goes through.
  events().ledger[{"t", 0}] = 10;
  rejects().ledger[{"t", 0}] = 10;
  ASSERT_OK_AND_ASSIGN(const FlushOutcome again, writer.Write(Flush(10, 20, {15})));
  EXPECT_FALSE(again.fenced);
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{15}));
}

TEST_F(RejectsApartTest, AWriterRacingForTheRejectsTableMakesItReadTheLedgerAgain) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.Write(Flush(0, 4, {})).status());
  // Before our first rejects commit lands, another writer commits the rejects of [4, 8).
  rejects().before_commit = [](FakeTableState& state) {
    state.ledger[{"t", 0}] = 8;
    state.before_commit = nullptr;
  };
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(4, 10, {5, 7, 9})));
  EXPECT_FALSE(outcome.fenced);
  EXPECT_EQ(outcome.rejects, 1);
  ASSERT_EQ(rejects().requests.size(), 2u);
  EXPECT_EQ(rejects().requests[0].files[0].info.rows, 3);
  EXPECT_EQ(rejects().requests[1].files[0].info.rows, 1) << "only 9 is beyond the new ledger";
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{9}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the fenced rejects file is deleted";
  EXPECT_EQ(events().ledger, (Ledger{{{"t", 0}, 10}}));
}

TEST_F(RejectsApartTest, ARejectsCommitOfUnknownOutcomeThatLandedIsNotCommittedAgain) {
  rejects().script = {FakeStep::kLandUnknown};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10, {3})));
  EXPECT_EQ(outcome.unknown_outcomes, 1);
  EXPECT_EQ(rejects().find_calls, 1);
  EXPECT_EQ(rejects().commit_calls, 1);
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{3}));
  EXPECT_EQ(events().ledger, (Ledger{{{"t", 0}, 10}}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(RejectsApartTest, RejectsConflictsAreRetriedAndATableChangeOfTheRowsRewritesOnlyTheRows) {
  rejects().script = {FakeStep::kConflict};
  events().script = {FakeStep::kTableChanged};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10, {2, 3})));
  EXPECT_EQ(outcome.reloads, 1);
  EXPECT_EQ(rejects().commit_calls, 2) << "one lost race, one landing; none after the reload";
  EXPECT_EQ(events().commit_calls, 2);
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(LandedRowIds(), (std::vector<int64_t>{0, 1, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(RejectsApartTest, AFencedRowsCommitKeepsTheRejectsThatLandedBeforeIt) {
  DatasetWriter writer(config_, catalog_.get());
  // A new owner of the partition read the same records: it found their reject committed by us
  // and its rows land between our two commits.
  events().before_commit = [](FakeTableState& state) {
    state.ledger[{"t", 0}] = 10;
    state.before_commit = nullptr;
  };
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10, {4})));
  EXPECT_TRUE(outcome.fenced);
  EXPECT_EQ(outcome.orphaned_files, 1);
  EXPECT_EQ(LandedRejectOffsets(), (std::vector<int64_t>{4}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the landed rejects file is kept";
}

}  // namespace
}  // namespace weir::ingest
