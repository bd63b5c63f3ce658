// DatasetWriter's streamed flush against the scripted lake (lake/testing): the parts of a flush
// land in one commit with the flush's ledger ranges, nothing is referenced before it, and every
// way a streamed flush can end short of landing (fenced, the table changed, aborted) leaves no
// file behind and nothing landed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <numeric>
#include <set>

#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "harness_env.h"
#include "ingest/dataset_writer.h"
#include "lake/testing/fake_table.h"
#include "writer_fixture.h"

namespace weir::ingest {
namespace {

using lake::testing::FakeStep;
using lake::testing::FakeTableState;

// `rows` rows: id (from `first`) and, with `team`, a team column.
std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t rows, bool team = true) {
  arrow::Int64Builder ids;
  arrow::StringBuilder teams;
  for (int64_t i = first; i < first + rows; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE(teams.Append(i % 2 == 0 ? "a" : "b").ok());
  }
  if (!team) {
    return arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), rows,
                                    {ids.Finish().ValueOrDie()});
  }
  return arrow::RecordBatch::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("team", arrow::utf8())}),
      rows, {ids.Finish().ValueOrDie(), teams.Finish().ValueOrDie()});
}

// The last seal of a flush of offsets [start, end) whose rows from `last_from` on are in it.
SealedFlush Last(int64_t start, int64_t end, int64_t last_from) {
  SealedFlush flush;
  flush.batch = Rows(last_from, end - last_from);
  flush.offsets = {{"t", 0, start, end}};
  flush.records = end - start;
  return flush;
}

// A local file system whose file creations fail from the `fail_from`th on (counting from 1).
class FailingCreates final : public arrow::fs::LocalFileSystem {
 public:
  explicit FailingCreates(int fail_from) : fail_from_(fail_from) {}
  using arrow::fs::LocalFileSystem::OpenOutputStream;
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string& path,
      const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override {
    if (++opened_ >= fail_from_) return arrow::Status::IOError("injected: cannot create ", path);
    return arrow::fs::LocalFileSystem::OpenOutputStream(path, metadata);
  }

 private:
  const int fail_from_;
  std::atomic<int> opened_{0};
};

class DatasetWriterStreamTest : public WriterFixture {
 protected:
  void SetUp() override { SetUpWriter("dataset_writer_stream_"); }

  // The ids in the files of every landed snapshot, sorted.
  std::vector<int64_t> LandedIds() { return Sorted(LandedInt64s(events(), "id")); }
  static std::vector<int64_t> Ids(int64_t n) {
    std::vector<int64_t> ids(static_cast<size_t>(n));
    std::iota(ids.begin(), ids.end(), 0);
    return ids;
  }
};

TEST_F(DatasetWriterStreamTest, ThePartsOfAFlushLandInOneCommitWithItsRanges) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.WritePart(Rows(0, 10)));
  ASSERT_OK(writer.WritePart(Rows(10, 10)));
  EXPECT_TRUE(writer.streaming());
  EXPECT_TRUE(events().snapshots.empty()) << "nothing is committed before the flush ends";
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 30, 20)));
  EXPECT_FALSE(writer.streaming());
  EXPECT_FALSE(outcome.fenced);
  EXPECT_FALSE(outcome.replay);
  EXPECT_EQ(outcome.rows, 30);
  EXPECT_EQ(outcome.files, 1) << "one open file per tuple across the parts";
  ASSERT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 30);
  EXPECT_EQ(events().ledger, (std::map<std::pair<std::string, int32_t>, int64_t>{{{"t", 0}, 30}}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterStreamTest, APartLackingAColumnGoesOnInTheOpenFileAndANewColumnStartsAFile) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.WritePart(Rows(0, 10)));
  ASSERT_OK(writer.WritePart(Rows(10, 10, /*team=*/false)));  // team null in the same file
  ASSERT_OK_AND_ASSIGN(const FlushOutcome first, writer.FinishStream(Last(0, 30, 20)));
  EXPECT_EQ(first.files, 1);
  // A flush whose first part lacks team, then has it: the column comes with a new file.
  ASSERT_OK(writer.WritePart(Rows(30, 10, /*team=*/false)));
  ASSERT_OK(writer.WritePart(Rows(40, 10)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome second, writer.FinishStream(Last(30, 60, 50)));
  EXPECT_EQ(second.files, 2);
  EXPECT_EQ(second.rows, 30);
  EXPECT_EQ(events().LandedRows(), 60);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterStreamTest, AFencedStreamedFlushDeletesEveryFileOfItsParts) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.Write(Last(0, 10, 0)).status());
  events().ledger[{"t", 0}] = 25;  // another writer took the partition
  ASSERT_OK(writer.WritePart(Rows(10, 10)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(10, 30, 20)));
  EXPECT_TRUE(outcome.fenced);
  EXPECT_EQ(outcome.rows, 0);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the fenced flush's files are deleted";
}

TEST_F(DatasetWriterStreamTest, ATableChangedAtTheCommitMakesAReplayWithNothingLeft) {
  events().script = {FakeStep::kTableChanged};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.WritePart(Rows(0, 10)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 20, 10)));
  EXPECT_TRUE(outcome.replay) << "the parts are gone: the records are read again";
  EXPECT_TRUE(events().snapshots.empty());
  EXPECT_TRUE(FilesOnDisk().empty());
  // The replay (the same offsets again) lands once.
  ASSERT_OK(writer.WritePart(Rows(0, 10)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome again, writer.FinishStream(Last(0, 20, 10)));
  EXPECT_FALSE(again.replay);
  EXPECT_EQ(events().LandedRows(), 20);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterStreamTest, AnAbortedStreamLeavesNoFile) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.WritePart(Rows(0, 10)));
  ASSERT_OK(writer.WritePart(Rows(10, 10)));
  writer.AbortStream();
  EXPECT_FALSE(writer.streaming());
  EXPECT_TRUE(FilesOnDisk().empty());
  EXPECT_TRUE(events().snapshots.empty());
}

TEST_F(DatasetWriterStreamTest, FilesRotateAtTheTargetAcrossParts) {
  config_.target_file_size = 64 << 10;
  config_.file.row_group_rows = 1000;
  DatasetWriter writer(config_, catalog_.get());
  for (int p = 0; p < 20; ++p) ASSERT_OK(writer.WritePart(Rows(p * 5000, 5000)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 100001, 100000)));
  EXPECT_GT(outcome.files, 2);
  EXPECT_EQ(outcome.rows, 100001);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 100001);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterStreamTest, TwoLanesEncodeTwoPartsAtOnceIntoTwoFilesOfOneCommit) {
  using namespace std::chrono_literals;
  config_.encode_lanes = 2;
  DatasetWriter writer(config_, catalog_.get());
  // The first part's lane stays busy (in its release) until the second part is encoded: the
  // second can only be encoded on the other lane, at the same time.
  std::promise<void> second_encoded;
  auto second = second_encoded.get_future();
  std::atomic<int> released{0};
  std::atomic<bool> overlapped{false};
  ASSERT_OK(writer.WritePart(Rows(0, 1000), [&](auto) {
    overlapped = second.wait_for(30s) == std::future_status::ready;
    ++released;
  }));
  ASSERT_OK(writer.WritePart(Rows(1000, 1000), [&](auto encoding) {
    EXPECT_GT(encoding.count(), 0) << "encoded on a lane: its time is reported";
    ++released;
    second_encoded.set_value();
  }));
  EXPECT_TRUE(events().snapshots.empty()) << "nothing is committed before the flush ends";
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 3001, 2000)));
  EXPECT_TRUE(overlapped.load());
  EXPECT_EQ(released.load(), 2);
  EXPECT_EQ(outcome.files, 2) << "one file per lane (no rotation at the default target)";
  EXPECT_EQ(outcome.rows, 3001);
  ASSERT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().snapshots[0].files.size(), 2u);
  EXPECT_EQ(events().LandedRows(), 3001);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
  EXPECT_EQ(LandedIds(), Ids(3001)) << "every row once, in one of the two files";
}

TEST_F(DatasetWriterStreamTest, WithFourLanesManyRotatingPartsLandEveryRowOnce) {
  config_.encode_lanes = 4;
  config_.target_file_size = 64 << 10;
  config_.file.row_group_rows = 1000;
  DatasetWriter writer(config_, catalog_.get());
  std::atomic<int> released{0};
  for (int p = 0; p < 40; ++p) {
    ASSERT_OK(writer.WritePart(Rows(p * 2500, 2500), [&](auto) { ++released; }));
  }
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 100001, 100000)));
  EXPECT_EQ(released.load(), 40);
  EXPECT_GT(outcome.files, 4);
  EXPECT_EQ(outcome.rows, 100001);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
  EXPECT_EQ(LandedIds(), Ids(100001));
}

TEST_F(DatasetWriterStreamTest, AnAbortedStreamOfBusyLanesLeavesNoFile) {
  config_.encode_lanes = 2;
  DatasetWriter writer(config_, catalog_.get());
  std::atomic<int> released{0};
  for (int p = 0; p < 10; ++p) {
    ASSERT_OK(writer.WritePart(Rows(p * 5000, 5000), [&](auto) { ++released; }));
  }
  writer.AbortStream();  // whatever the lanes are doing, they finish it first
  EXPECT_EQ(released.load(), 10);
  EXPECT_FALSE(writer.streaming());
  EXPECT_TRUE(FilesOnDisk().empty());
  EXPECT_TRUE(events().snapshots.empty());
  // The writer goes on: the next flush lands on its own.
  ASSERT_OK(writer.WritePart(Rows(0, 10)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 20, 10)));
  EXPECT_EQ(outcome.rows, 20);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
  EXPECT_EQ(LandedIds(), Ids(20));
}

TEST_F(DatasetWriterStreamTest, APartFailingOnItsLaneMakesTheFlushAReplayWithNothingLeft) {
  using namespace std::chrono_literals;
  catalog_ = std::make_unique<lake::testing::FakeCatalog>(dir_.string(),
                                                          std::make_shared<FailingCreates>(2));
  config_.encode_lanes = 2;
  DatasetWriter writer(config_, catalog_.get());
  // As above: the second part is encoded on the second lane, into a second file, which cannot
  // be created. WritePart has returned by then; the flush learns of it when it ends.
  std::promise<void> second_done;
  auto second = second_done.get_future();
  ASSERT_OK(writer.WritePart(Rows(0, 1000), [&](auto) { (void)second.wait_for(30s); }));
  ASSERT_OK(writer.WritePart(Rows(1000, 1000), [&](auto) { second_done.set_value(); }));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(0, 3000, 2000)));
  EXPECT_TRUE(outcome.replay) << "the failed part is gone: the records are read again";
  EXPECT_EQ(outcome.rows, 0);
  EXPECT_TRUE(events().snapshots.empty());
  EXPECT_TRUE(FilesOnDisk().empty()) << "the first lane's file is deleted too";
}

TEST_F(DatasetWriterStreamTest, AFencedFlushOfTwoLanesDeletesTheFilesOfBoth) {
  config_.encode_lanes = 2;
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.Write(Last(0, 10, 0)).status());
  events().ledger[{"t", 0}] = 25000;  // another writer took the partition
  for (int p = 0; p < 6; ++p) ASSERT_OK(writer.WritePart(Rows(10 + p * 3000, 3000)));
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.FinishStream(Last(10, 20010, 18010)));
  EXPECT_TRUE(outcome.fenced);
  EXPECT_GE(outcome.orphaned_files, 1);
  EXPECT_EQ(outcome.rows, 0);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the fenced flush's files of every lane are gone";
}

}  // namespace
}  // namespace weir::ingest
