#include "files/rolling_parquet_writer.h"

#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <filesystem>
#include <random>

#include "decode/json_batch_builder.h"

namespace weir::files {
namespace {

// Rows of ids from `first`, with a pseudo-random hex text so the codec cannot shrink them to
// nothing.
std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t rows) {
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  std::mt19937_64 random(static_cast<uint64_t>(first));
  for (int64_t i = first; i < first + rows; ++i) {
    char hex[33];
    std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(random()),
                  static_cast<unsigned long long>(random()));
    EXPECT_TRUE(builder
                    ->Append(R"({"id":)" + std::to_string(i) + R"(,"blob":")" + hex +
                             R"(","kind":"k)" + std::to_string(i % 7) + "\"}")
                    .ok());
  }
  auto batch = *builder->Finish();
  return batch->Slice(0);  // as the pipeline hands them over
}

struct ReadBack {
  std::vector<int64_t> ids;
  std::vector<int64_t> row_group_bytes;
};

ReadBack Read(const std::string& path) {
  ReadBack out;
  auto file = *arrow::io::ReadableFile::Open(path);
  auto reader = *parquet::arrow::OpenFile(file, arrow::default_memory_pool());
  auto metadata = reader->parquet_reader()->metadata();
  for (int g = 0; g < metadata->num_row_groups(); ++g) {
    out.row_group_bytes.push_back(metadata->RowGroup(g)->total_compressed_size());
  }
  auto table = *reader->ReadTable();
  auto ids = table->GetColumnByName("id");
  for (const auto& chunk : ids->chunks()) {
    const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < values.length(); ++i) out.ids.push_back(values.Value(i));
  }
  return out;
}

class RollingParquetWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-rolling-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RollingParquetWriter::PathMaker Paths() {
    return [this] { return (dir_ / ("f" + std::to_string(made_++) + ".parquet")).string(); };
  }
  int Files() const {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      n += entry.is_regular_file();
    return n;
  }

  std::filesystem::path dir_;
  int made_ = 0;
  std::shared_ptr<arrow::fs::FileSystem> fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
};

TEST_F(RollingParquetWriterTest, RotatesFilesAtTheTargetSizeWithEveryRowOnceInOrder) {
  constexpr int64_t kTarget = 512 << 10;
  constexpr int64_t kRows = 200000;
  RollingParquetWriter writer(fs_, Rows(0, 1)->schema(), FileConfig{}, kTarget, Paths());
  // Batches of varied sizes, as flushes and chunks come.
  int64_t next = 0;
  for (const int64_t size : {7, 30000, 1, 55000, 12345}) {
    ASSERT_TRUE(writer.Append(*Rows(next, size)).ok());
    next += size;
  }
  ASSERT_TRUE(writer.Append(*Rows(next, kRows - next)).ok());
  auto files = writer.Finish();
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_GE(files->size(), 4u);
  EXPECT_EQ(Files(), static_cast<int>(files->size()));
  std::vector<int64_t> ids;
  int64_t rows = 0;
  for (size_t f = 0; f < files->size(); ++f) {
    const FileInfo& info = (*files)[f];
    EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(info.path)), info.size_bytes);
    if (f + 1 < files->size()) {
      EXPECT_NEAR(static_cast<double>(info.size_bytes), kTarget, kTarget * 0.10)
          << "file " << f << " of " << files->size();
    } else {
      EXPECT_LE(info.size_bytes, kTarget * 1.10);
    }
    const ReadBack back = Read(info.path);
    EXPECT_EQ(static_cast<int64_t>(back.ids.size()), info.rows);
    EXPECT_GE(back.row_group_bytes.size(), f + 1 < files->size() ? 4u : 1u);
    for (const int64_t bytes : back.row_group_bytes) EXPECT_LE(bytes, kTarget / 8 * 1.5);
    ids.insert(ids.end(), back.ids.begin(), back.ids.end());
    rows += info.rows;
    // Statistics are of the file's own rows.
    ASSERT_FALSE(info.columns.empty());
    EXPECT_EQ(info.columns[0].value_count, info.rows);
  }
  EXPECT_EQ(rows, kRows);
  ASSERT_EQ(static_cast<int64_t>(ids.size()), kRows);
  for (int64_t i = 0; i < kRows; ++i) ASSERT_EQ(ids[static_cast<size_t>(i)], i);
}

TEST_F(RollingParquetWriterTest, WithoutATargetWritesOneFile) {
  RollingParquetWriter writer(fs_, Rows(0, 1)->schema(), FileConfig{}, 0, Paths());
  ASSERT_TRUE(writer.Append(*Rows(0, 50000)).ok());
  ASSERT_TRUE(writer.Append(*Rows(50000, 50000)).ok());
  auto files = writer.Finish();
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].rows, 100000);
  EXPECT_EQ(Read((*files)[0].path).ids.size(), 100000u);
}

TEST_F(RollingParquetWriterTest, AMaxRowsPerFileSplitsRowsEvenlyAcrossBatches) {
  RollingParquetWriter writer(fs_, Rows(0, 1)->schema(), FileConfig{}, 64 << 20, Paths());
  writer.set_max_file_rows(30000);
  int64_t next = 0;
  for (const int64_t size : {12345, 40000, 7, 37648}) {  // 90,000 rows
    ASSERT_TRUE(writer.Append(*Rows(next, size)).ok());
    next += size;
  }
  auto files = writer.Finish();
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 3u);
  std::vector<int64_t> ids;
  for (const FileInfo& info : *files) {
    EXPECT_EQ(info.rows, 30000);
    const ReadBack back = Read(info.path);
    ids.insert(ids.end(), back.ids.begin(), back.ids.end());
  }
  ASSERT_EQ(ids.size(), 90000u);
  for (int64_t i = 0; i < 90000; ++i) ASSERT_EQ(ids[static_cast<size_t>(i)], i);
}

TEST_F(RollingParquetWriterTest, KnowingItsTotalRowsItLeavesNoSmallRemainderFile) {
  constexpr int64_t kTarget = 512 << 10;
  constexpr int64_t kRows = 100000;  // a small remainder after full files of the target
  const auto write = [&](bool total) {
    RollingParquetWriter writer(fs_, Rows(0, 1)->schema(), FileConfig{}, kTarget, Paths());
    if (total) writer.set_total_rows(kRows);
    for (int64_t next = 0; next < kRows; next += 10000) {
      EXPECT_TRUE(writer.Append(*Rows(next, 10000)).ok());
    }
    return *writer.Finish();
  };
  const auto plain = write(false);
  ASSERT_GE(plain.size(), 3u);
  EXPECT_LT(plain.back().size_bytes, kTarget / 2) << "the remainder the even split avoids";
  const auto even = write(true);
  ASSERT_EQ(even.size(), plain.size());
  int64_t rows = 0;
  for (size_t f = 0; f < even.size(); ++f) {
    EXPECT_GE(even[f].size_bytes, kTarget / 2) << "file " << f;
    EXPECT_LE(even[f].size_bytes, kTarget * 1.1) << "file " << f;
    if (f > 1) {
      EXPECT_NEAR(even[f].rows, even[1].rows, static_cast<double>(even.size()));
    }
    rows += even[f].rows;
  }
  EXPECT_EQ(rows, kRows);
}

TEST_F(RollingParquetWriterTest, AbortRemovesTheOpenFileAndKeepsTheFinishedOnes) {
  RollingParquetWriter writer(fs_, Rows(0, 1)->schema(), FileConfig{}, 256 << 10, Paths());
  ASSERT_TRUE(writer.Append(*Rows(0, 60000)).ok());
  const size_t finished = writer.finished().size();
  ASSERT_GE(finished, 1u);
  ASSERT_GT(writer.open_bytes(), 0);
  EXPECT_EQ(Files(), static_cast<int>(finished) + 1);
  writer.Abort();
  EXPECT_EQ(Files(), static_cast<int>(finished));
  for (const auto& info : writer.finished()) EXPECT_TRUE(std::filesystem::exists(info.path));
}

TEST_F(RollingParquetWriterTest, ADestroyedWriterLeavesNoOpenFile) {
  {
    RollingParquetWriter writer(fs_, Rows(0, 1)->schema(), FileConfig{}, 0, Paths());
    ASSERT_TRUE(writer.Append(*Rows(0, 1000)).ok());
    EXPECT_EQ(Files(), 1);
  }
  EXPECT_EQ(Files(), 0);
}

TEST(ParquetFileWriterBytes, RowGroupsCloseAtTheirByteBound) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("weir-rowgroup-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  FileConfig config;
  config.row_group_bytes = 64 << 10;
  auto writer =
      ParquetFileWriter::Create(std::make_shared<arrow::fs::LocalFileSystem>(),
                                (dir / "g.parquet").string(), Rows(0, 1)->schema(), config);
  ASSERT_TRUE(writer.ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*writer)->Append(*Rows(i * 10000, 10000)).ok());
  auto info = (*writer)->Finish();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  const ReadBack back = Read(info->path);
  ASSERT_EQ(back.ids.size(), 100000u);
  ASSERT_GE(back.row_group_bytes.size(), 8u);
  // The first group is bounded by Arrow bytes (no ratio measured yet), the others by the
  // estimate; the last is what was left.
  for (size_t g = 1; g + 1 < back.row_group_bytes.size(); ++g) {
    EXPECT_NEAR(static_cast<double>(back.row_group_bytes[g]), 64 << 10, (64 << 10) * 0.25) << g;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace weir::files
