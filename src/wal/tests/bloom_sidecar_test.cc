#include "wal/bloom_sidecar.h"

#include <filesystem>

#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include "assert_status.h"
#include "wal/segment_file.h"
#include "wal/tests/wal_test_util.h"

namespace weir::wal {
namespace {

using testing::Rows;
using testing::ScratchDir;

// A closed segment of ids [0, 2500) in row groups of 1,000, with a bloom filter on `id`.
std::string WriteSegment(const ScratchDir& dir, std::vector<std::string> bloom_columns) {
  SegmentFileOptions options;
  options.file.row_group_rows = 1000;
  options.file.bloom_filter_columns = std::move(bloom_columns);
  const std::string path = dir.path() + "/ready_t_0_0_2499_x.parquet";
  auto file = CreateParquetSegment(path, Rows(0, 1)->schema(), options);
  EXPECT_TRUE(file.ok());
  for (int64_t i = 0; i < 25; ++i) EXPECT_TRUE((*file)->Append(*Rows(i * 100, 100)).ok());
  EXPECT_TRUE((*file)->Close().ok());
  return path;
}

// The bytes the data file holds at its column chunk's bloom_filter_offset.
std::string FileFilterBytes(const std::string& path, int row_group, int column) {
  auto input = *arrow::io::ReadableFile::Open(path);
  auto reader = parquet::ParquetFileReader::Open(input);
  auto chunk = reader->metadata()->RowGroup(row_group)->ColumnChunk(column);
  EXPECT_TRUE(chunk->bloom_filter_offset().has_value());
  EXPECT_TRUE(chunk->bloom_filter_length().has_value());
  auto bytes = *input->ReadAt(*chunk->bloom_filter_offset(), *chunk->bloom_filter_length());
  return bytes->ToString();
}

TEST(BloomSidecarTest, NamesPairADataObjectWithItsSidecar) {
  EXPECT_EQ(BloomSidecarPath("s3://b/t/p=1/wal-0190.parquet"), "s3://b/t/p=1/wal-0190.bloom");
  EXPECT_EQ(BloomSidecarDataPath("s3://b/t/p=1/wal-0190.bloom"),
            std::optional<std::string>("s3://b/t/p=1/wal-0190.parquet"));
  EXPECT_EQ(BloomSidecarDataPath("t/data-0190.bloom"), std::nullopt);
  EXPECT_EQ(BloomSidecarDataPath("t/wal-0190.parquet"), std::nullopt);
  EXPECT_EQ(BloomSidecarDataPath("t/wal-0190.bloom/x"), std::nullopt);
}

TEST(BloomSidecarTest, ReadsEveryRowGroupsFilterAndRoundTripsThroughItsEncoding) {
  ScratchDir dir("sidecar");
  const std::string path = WriteSegment(dir, {"ID"});  // matched in any case
  const auto size = static_cast<int64_t>(std::filesystem::file_size(path));
  ASSERT_OK_AND_ASSIGN(auto sidecar, ReadBloomSidecar(path, {"ID"}, "wal-x.parquet", size));
  ASSERT_EQ(sidecar.filters.size(), 3u);
  for (int rg = 0; rg < 3; ++rg) {
    EXPECT_EQ(sidecar.filters[rg].row_group, rg);
    EXPECT_EQ(sidecar.filters[rg].row_group_rows, rg < 2 ? 1000 : 500);
    EXPECT_EQ(sidecar.filters[rg].column, "id");
    EXPECT_EQ(sidecar.filters[rg].filter, FileFilterBytes(path, rg, /*column=*/0));
  }

  ASSERT_OK_AND_ASSIGN(auto bytes, EncodeBloomSidecar(sidecar));
  ASSERT_OK_AND_ASSIGN(auto back, DecodeBloomSidecar(bytes));
  EXPECT_EQ(back.data_file, "wal-x.parquet");
  EXPECT_EQ(back.data_file_size, size);
  EXPECT_EQ(back.columns, std::vector<std::string>{"ID"});
  ASSERT_EQ(back.filters.size(), 3u);
  for (int rg = 0; rg < 3; ++rg) {
    EXPECT_EQ(back.filters[rg].row_group, rg);
    EXPECT_EQ(back.filters[rg].row_group_rows, sidecar.filters[rg].row_group_rows);
    EXPECT_EQ(back.filters[rg].column, "id");
    EXPECT_EQ(back.filters[rg].filter, sidecar.filters[rg].filter);
  }

  // Probing: every id of a row group is a possible member of its filter; of the 1,000 ids of
  // another row group, at most a few percent are (fpp 5 %; the hashes are deterministic).
  ASSERT_OK_AND_ASSIGN(auto first, OpenBloomFilter(back.filters[0]));
  for (int64_t id = 0; id < 1000; ++id) ASSERT_TRUE(first.FindHash(first.Hash(id))) << id;
  int false_positives = 0;
  for (int64_t id = 1000; id < 2000; ++id) false_positives += first.FindHash(first.Hash(id));
  EXPECT_LT(false_positives, 100);
  ASSERT_OK_AND_ASSIGN(auto last, OpenBloomFilter(back.filters[2]));
  for (int64_t id = 2000; id < 2500; ++id) ASSERT_TRUE(last.FindHash(last.Hash(id))) << id;
}

TEST(BloomSidecarTest, AColumnWithoutAFilterHasNoEntries) {
  ScratchDir dir("sidecar_none");
  const std::string path = WriteSegment(dir, {});
  ASSERT_OK_AND_ASSIGN(auto sidecar, ReadBloomSidecar(path, {"id", "team"}, "wal-y.parquet", 1));
  EXPECT_TRUE(sidecar.filters.empty());
  ASSERT_OK_AND_ASSIGN(auto bytes, EncodeBloomSidecar(sidecar));
  ASSERT_OK_AND_ASSIGN(auto back, DecodeBloomSidecar(bytes));
  EXPECT_TRUE(back.filters.empty());
  EXPECT_EQ(back.columns, (std::vector<std::string>{"id", "team"}));
}

TEST(BloomSidecarTest, AnythingElseIsRefusedAsNoSidecar) {
  EXPECT_FALSE(DecodeBloomSidecar(std::make_shared<arrow::Buffer>("not parquet")).ok());
  ScratchDir dir("sidecar_other");
  const std::string path = WriteSegment(dir, {});  // a Parquet file, but no sidecar
  auto input = *arrow::io::ReadableFile::Open(path);
  auto whole = *input->Read(*input->GetSize());
  auto decoded = DecodeBloomSidecar(whole);
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("weir.sidecar.format"), std::string::npos);
}

}  // namespace
}  // namespace weir::wal
