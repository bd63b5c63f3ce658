#include "wal/segment_rotator.h"

#include <gtest/gtest.h>

#include "assert_status.h"
#include "wal/tests/wal_test_util.h"

namespace weir::wal {
namespace {

using std::chrono::seconds;
using testing::ReadParquet;
using testing::Rows;
using testing::ScratchDir;

class SegmentRotatorTest : public ::testing::Test {
 protected:
  SegmentRotatorTest()
      : dir_("rotator"), clock_(std::chrono::system_clock::time_point(seconds(1'700'000'000))) {}

  std::unique_ptr<SegmentRotator> Make(SegmentLimits limits, SegmentFileFactory factory = {}) {
    SegmentFileOptions options;
    options.file.row_group_rows = 100;
    return std::make_unique<SegmentRotator>(dir_.path(), limits, options, std::move(factory),
                                            clock_, 42);
  }
  static PartitionRows Part(const std::string& key, int64_t first, int64_t count) {
    return PartitionRows{key, {{"weir.partition_key", key}}, Rows(first, count, key)};
  }
  // Names of the directory's files that start with `prefix`.
  std::vector<std::string> Files(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& name : dir_.Names()) {
      if (name.starts_with(prefix)) out.push_back(name);
    }
    return out;
  }

  ScratchDir dir_;
  ManualClock clock_;
};

TEST_F(SegmentRotatorTest, OneFilePerTablePartitionAndAllRotateTogetherWithOneRange) {
  auto rotator = Make({});
  ASSERT_OK(rotator->Assign("events", 2, 500));
  ASSERT_OK_AND_ASSIGN(auto none,
                       rotator->Append("events", 2, {Part("a", 0, 10), Part("b", 10, 5)}, 514));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(none, rotator->Append("events", 2, {Part("a", 15, 3)}, 520));
  EXPECT_EQ(Files("active_events_2_500_").size(), 2u);
  EXPECT_EQ(rotator->open_segments(), 2);

  ASSERT_OK_AND_ASSIGN(auto rotation, rotator->Rotate("events", 2));
  ASSERT_TRUE(rotation.has_value());
  EXPECT_EQ(rotation->start, 500);
  EXPECT_EQ(rotation->end, 520);
  EXPECT_EQ(rotation->commit_offset(), 521);
  ASSERT_EQ(rotation->files.size(), 2u);
  EXPECT_TRUE(Files("active_").empty());
  ASSERT_EQ(Files("ready_events_2_500-520_").size(), 2u);
  std::map<std::string, int64_t> rows;
  for (const ReadyFile& file : rotation->files) {
    EXPECT_EQ(file.name.state, SegmentState::kReady);
    EXPECT_EQ(file.name.start, 500);
    EXPECT_EQ(file.name.end, 520);
    const auto back = ReadParquet(file.path);
    EXPECT_EQ(back.rows, file.rows);
    EXPECT_EQ(back.metadata->Get("weir.partition_key").ValueOr(""), file.partition_key);
    rows[file.partition_key] = back.rows;
  }
  EXPECT_EQ(rows, (std::map<std::string, int64_t>{{"a", 13}, {"b", 5}}));
  EXPECT_EQ(rotator->open_segments(), 0);

  // The next group starts where this one ended.
  ASSERT_OK_AND_ASSIGN(none, rotator->Append("events", 2, {Part("a", 100, 1)}, 530));
  EXPECT_EQ(Files("active_events_2_521_").size(), 1u);
}

TEST_F(SegmentRotatorTest, AFullFileRotatesItsWholePartitionAfterTheAppend) {
  auto rotator = Make({.max_file_bytes = 2000});
  ASSERT_OK(rotator->Assign("t", 0, 0));
  ASSERT_OK(rotator->Assign("t", 1, 0));
  ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", 1, {Part("x", 0, 3)}, 2));
  EXPECT_TRUE(done.empty());
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 0, {Part("x", 0, 3)}, 2));
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 0, {Part("y", 0, 1000), Part("x", 0, 1)}, 9));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].partition, 0);
  EXPECT_EQ(done[0].start, 0);
  EXPECT_EQ(done[0].end, 9);
  EXPECT_EQ(done[0].files.size(), 2u);  // x rotates with y
  EXPECT_EQ(Files("ready_t_0_0-9_").size(), 2u);
  EXPECT_EQ(Files("active_t_1_0_").size(), 1u);  // the other partition is untouched
}

TEST_F(SegmentRotatorTest, AGroupAtTheOpenSegmentLimitRotatesBeforeANewTablePartition) {
  auto rotator = Make({.max_open_segments = 2});
  ASSERT_OK(rotator->Assign("t", 0, 0));
  ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", 0, {Part("a", 0, 1), Part("b", 1, 1)}, 1));
  EXPECT_TRUE(done.empty());
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 0, {Part("a", 2, 1)}, 2));  // a is open
  EXPECT_TRUE(done.empty());
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 0, {Part("c", 3, 1)}, 3));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].end, 2);  // the rotation covers what came before c's record
  EXPECT_EQ(done[0].files.size(), 2u);
  EXPECT_EQ(Files("active_t_0_3_").size(), 1u);
}

TEST_F(SegmentRotatorTest, ANewSchemaForAnOpenTablePartitionRotatesFirst) {
  auto rotator = Make({});
  ASSERT_OK(rotator->Assign("t", 0, 0));
  ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", 0, {Part("a", 0, 1)}, 0));
  arrow::Int64Builder ids;
  ASSERT_OK(ids.Append(1));
  auto other = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), 1,
                                        {*ids.Finish()});
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 0, {PartitionRows{"a", {}, other}}, 1));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].end, 0);
  EXPECT_EQ(Files("active_t_0_1_").size(), 1u);
}

TEST_F(SegmentRotatorTest, GroupsRotateAtTheirAgeAndYoungOnesStay) {
  auto rotator = Make({.max_age = std::chrono::minutes(5)});
  ASSERT_OK(rotator->Assign("t", 0, 0));
  ASSERT_OK(rotator->Assign("t", 1, 0));
  ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", 0, {Part("a", 0, 1)}, 0));
  clock_.Advance(seconds(200));
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 1, {Part("a", 0, 1)}, 0));
  ASSERT_OK_AND_ASSIGN(done, rotator->Append("t", 0, {Part("a", 1, 1)}, 1));
  ASSERT_OK_AND_ASSIGN(done, rotator->RotateAged());
  EXPECT_TRUE(done.empty());
  clock_.Advance(seconds(100));  // partition 0's group is 300 s old, 1's 100 s
  ASSERT_OK_AND_ASSIGN(done, rotator->RotateAged());
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].partition, 0);
  EXPECT_EQ(done[0].end, 1);
  clock_.Advance(seconds(200));
  ASSERT_OK_AND_ASSIGN(done, rotator->RotateAged());
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].partition, 1);
}

TEST_F(SegmentRotatorTest, OffsetsWithoutRowsRotateToAZeroRowFileThatRecordsTheRange) {
  auto rotator = Make({});
  ASSERT_OK(rotator->Assign("t", 4, 10));
  ASSERT_OK(rotator->Advance("t", 4, 19));
  ASSERT_OK_AND_ASSIGN(auto rotation, rotator->Release("t", 4));
  ASSERT_TRUE(rotation.has_value());
  EXPECT_EQ(rotation->start, 10);
  EXPECT_EQ(rotation->end, 19);
  ASSERT_EQ(rotation->files.size(), 1u);
  EXPECT_EQ(rotation->files[0].rows, 0);
  EXPECT_EQ(ReadParquet(rotation->files[0].path).rows, 0);
  EXPECT_FALSE(rotator->Holds("t", 4));
}

TEST_F(SegmentRotatorTest, AGroupWithoutOffsetsDoesNotRotate) {
  auto rotator = Make({});
  ASSERT_OK(rotator->Assign("t", 0, 7));
  ASSERT_OK_AND_ASSIGN(auto rotation, rotator->Rotate("t", 0));
  EXPECT_FALSE(rotation.has_value());
  ASSERT_OK_AND_ASSIGN(auto all, rotator->RotateAll());
  EXPECT_TRUE(all.empty());
  EXPECT_TRUE(dir_.Names().empty());
}

TEST_F(SegmentRotatorTest, RotateAllRotatesEveryPartitionForShutdown) {
  auto rotator = Make({});
  for (int32_t p = 0; p < 3; ++p) {
    ASSERT_OK(rotator->Assign("t", p, 100 * p));
    ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", p, {Part("a", 0, 2)}, 100 * p + 1));
  }
  ASSERT_OK_AND_ASSIGN(auto all, rotator->RotateAll());
  ASSERT_EQ(all.size(), 3u);
  for (int32_t p = 0; p < 3; ++p) {
    EXPECT_EQ(all[p].partition, p);
    EXPECT_EQ(all[p].commit_offset(), 100 * p + 2);
  }
  EXPECT_EQ(Files("ready_").size(), 3u);
  EXPECT_TRUE(Files("active_").empty());
}

TEST_F(SegmentRotatorTest, DropDeletesTheActiveFilesOfALostPartition) {
  auto rotator = Make({});
  ASSERT_OK(rotator->Assign("t", 0, 0));
  ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", 0, {Part("a", 0, 2), Part("b", 2, 2)}, 3));
  ASSERT_OK(rotator->Drop("t", 0));
  EXPECT_TRUE(dir_.Names().empty());
  EXPECT_FALSE(rotator->Holds("t", 0));
}

TEST_F(SegmentRotatorTest, OffsetsMustMoveForwardAndPartitionsMustBeHeld) {
  auto rotator = Make({});
  EXPECT_FALSE(rotator->Append("t", 0, {Part("a", 0, 1)}, 0).ok());
  ASSERT_OK(rotator->Assign("t", 0, 10));
  EXPECT_FALSE(rotator->Assign("t", 0, 10).ok());
  ASSERT_OK_AND_ASSIGN(auto done, rotator->Append("t", 0, {Part("a", 0, 1)}, 12));
  EXPECT_FALSE(rotator->Append("t", 0, {Part("a", 0, 1)}, 12).ok());
}

TEST_F(SegmentRotatorTest, AFileErrorIsReturnedAndLeavesNoReadyFile) {
  int calls = 0;
  auto failing = [&calls](
                     const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
                     const SegmentFileOptions& options) -> Result<std::unique_ptr<SegmentFile>> {
    if (++calls == 2) return Status::IOError("disk full (test)");
    return CreateParquetSegment(path, schema, options);
  };
  auto rotator = Make({}, failing);
  ASSERT_OK(rotator->Assign("t", 0, 0));
  const auto appended = rotator->Append("t", 0, {Part("a", 0, 1), Part("b", 1, 1)}, 1);
  ASSERT_FALSE(appended.ok());
  EXPECT_NE(appended.status().message().find("disk full"), std::string::npos);
  EXPECT_TRUE(Files("ready_").empty());
}

}  // namespace
}  // namespace weir::wal
