#include "wal/segment_file.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "wal/tests/wal_test_util.h"

namespace weir::wal {
namespace {

using testing::ReadParquet;
using testing::Rows;
using testing::ScratchDir;

TEST(SegmentFileTest, RowGroupsLeaveMemoryAsTheyFillAndCloseWritesTheFooter) {
  ScratchDir dir("file");
  SegmentFileOptions options;
  options.file.row_group_rows = 1000;
  options.metadata = {{"weir.partition_values", "[\"7\"]"}};
  const std::string path = dir.path() + "/active_t_0_0_x.parquet";
  ASSERT_OK_AND_ASSIGN(auto file, CreateParquetSegment(path, Rows(0, 1)->schema(), options));
  for (int64_t i = 0; i < 25; ++i) ASSERT_OK(file->Append(*Rows(i * 100, 100)));
  // 2,500 rows: two groups of 1,000 are on disk already, before the file is closed.
  EXPECT_EQ(file->rows(), 2500);
  const auto on_disk = std::filesystem::file_size(path);
  EXPECT_GT(on_disk, 4000u);
  EXPECT_GE(file->EstimatedSize(), static_cast<int64_t>(on_disk));
  ASSERT_OK(file->Close());
  const auto back = ReadParquet(path);
  EXPECT_EQ(back.rows, 2500);
  EXPECT_EQ(back.row_groups, 3);
  ASSERT_EQ(back.ids.size(), 2500u);
  for (int64_t i = 0; i < 2500; ++i) ASSERT_EQ(back.ids[i], i);
  ASSERT_NE(back.metadata, nullptr);
  EXPECT_EQ(back.metadata->Get("weir.partition_values").ValueOr(""), "[\"7\"]");
}

TEST(SegmentFileTest, ABatchLargerThanARowGroupIsSplitAcrossGroups) {
  ScratchDir dir("split");
  SegmentFileOptions options;
  options.file.row_group_rows = 300;
  const std::string path = dir.path() + "/s.parquet";
  ASSERT_OK_AND_ASSIGN(auto file, CreateParquetSegment(path, Rows(0, 1)->schema(), options));
  ASSERT_OK(file->Append(*Rows(0, 1000)));
  ASSERT_OK(file->Close());
  const auto back = ReadParquet(path);
  EXPECT_EQ(back.rows, 1000);
  EXPECT_EQ(back.row_groups, 4);  // 300, 300, 300, 100
}

TEST(SegmentFileTest, AByteBoundClosesGroupsBeforeTheRowBound) {
  ScratchDir dir("bytes");
  SegmentFileOptions options;
  options.file.row_group_rows = 1'000'000;
  options.row_group_bytes = 4096;
  const std::string path = dir.path() + "/s.parquet";
  ASSERT_OK_AND_ASSIGN(auto file, CreateParquetSegment(path, Rows(0, 1)->schema(), options));
  for (int i = 0; i < 10; ++i) ASSERT_OK(file->Append(*Rows(i * 1000, 1000)));
  ASSERT_OK(file->Close());
  const auto back = ReadParquet(path);
  EXPECT_EQ(back.rows, 10000);
  EXPECT_EQ(back.row_groups, 10);  // every 1,000-row batch is > 4 KiB of Arrow
}

TEST(SegmentFileTest, DiscardDeletesTheFile) {
  ScratchDir dir("discard");
  const std::string path = dir.path() + "/s.parquet";
  ASSERT_OK_AND_ASSIGN(auto file, CreateParquetSegment(path, Rows(0, 1)->schema(), {}));
  ASSERT_OK(file->Append(*Rows(0, 10)));
  ASSERT_TRUE(std::filesystem::exists(path));
  ASSERT_OK(file->Discard());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SegmentFileTest, ADiscardedFileWithAnOpenRowGroupCanBeDestroyedAndAppendIsRefused) {
  ScratchDir dir("discard-open");
  const std::string path = dir.path() + "/s.parquet";
  SegmentFileOptions options;
  options.file.row_group_rows = 1'000'000;  // the rows stay in the open row group
  ASSERT_OK_AND_ASSIGN(auto file, CreateParquetSegment(path, Rows(0, 1)->schema(), options));
  for (int i = 0; i < 5; ++i) ASSERT_OK(file->Append(*Rows(i * 100, 100)));
  ASSERT_OK(file->Discard());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(file->Append(*Rows(0, 1)).ok());
  EXPECT_FALSE(file->Close().ok());
  ASSERT_OK(file->Discard());  // twice: nothing left to do
  file.reset();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SegmentFileTest, ADestroyedOpenFileIsDeleted) {
  ScratchDir dir("drop");
  const std::string path = dir.path() + "/s.parquet";
  {
    ASSERT_OK_AND_ASSIGN(auto file, CreateParquetSegment(path, Rows(0, 1)->schema(), {}));
    ASSERT_OK(file->Append(*Rows(0, 10)));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SegmentFileTest, AFileThatCannotBeCreatedIsAnErrorNamingIt) {
  const auto created = CreateParquetSegment("/nonexistent-dir/x.parquet", Rows(0, 1)->schema(), {});
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("/nonexistent-dir/x.parquet"), std::string::npos)
      << created.status().ToString();
}

TEST(SegmentFileTest, RenameDurablyMovesTheFileAndSyncsItsDirectory) {
  ScratchDir dir("rename");
  const std::string from = dir.path() + "/a", to = dir.path() + "/b";
  {
    std::FILE* f = std::fopen(from.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  ASSERT_OK(RenameDurably(from, to));
  EXPECT_EQ(dir.Names(), (std::set<std::string>{"b"}));
  EXPECT_FALSE(RenameDurably(from, to).ok());
}

}  // namespace
}  // namespace weir::wal
