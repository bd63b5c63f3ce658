#include "files/parquet_file_writer.h"

#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/bloom_filter.h>
#include <parquet/bloom_filter_reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <filesystem>

#include "base/clock.h"
#include "base/uuid_arrow.h"
#include "decode/json_batch_builder.h"
#include "files/object_names.h"

namespace weir::files {
namespace {

std::shared_ptr<arrow::RecordBatch> EventBatch(int64_t rows) {
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  for (int64_t i = 0; i < rows; ++i) {
    const std::string name = i % 10 == 0 ? "null" : "\"n" + std::to_string(1000 + i) + "\"";
    EXPECT_TRUE(builder
                    ->Append(R"({"id":)" + std::to_string(i) + R"(,"name":)" + name +
                             R"(,"score":)" + std::to_string(i - 100) + R"(.25,"flag":)" +
                             (i % 2 ? "true" : "false") + "}")
                    .ok());
  }
  return *builder->Finish();
}

class ParquetFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("weir-files-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ParquetFileWriterTest, WritesFieldIdsStatsAndRowGroupsAndReadsBackIdentical) {
  const auto batch = EventBatch(2500);
  auto schema = WithFieldIds(*batch->schema(), {11, 12, 13, 14});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  FileConfig config;
  config.row_group_rows = 1000;
  const std::string path = (dir_ / "f.parquet").string();
  auto writer = ParquetFileWriter::Create(std::make_shared<arrow::fs::LocalFileSystem>(), path,
                                          *schema, config);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append(*batch->Slice(0, 1200)).ok());
  ASSERT_TRUE((*writer)->Append(*batch->Slice(1200)).ok());
  auto info = (*writer)->Finish();
  ASSERT_TRUE(info.ok()) << info.status().ToString();

  EXPECT_EQ(info->path, path);
  EXPECT_EQ(info->rows, 2500);
  EXPECT_EQ(info->size_bytes, static_cast<int64_t>(std::filesystem::file_size(path)));
  EXPECT_GT(info->footer_bytes, 0);
  ASSERT_EQ(info->columns.size(), 4u);
  const auto& id = info->columns[0];
  EXPECT_EQ(id.field_id, 11);
  EXPECT_EQ(id.name, "id");
  EXPECT_EQ(id.min, "0");
  EXPECT_EQ(id.max, "2499");
  EXPECT_EQ(id.null_count, 0);
  EXPECT_EQ(id.value_count, 2500);
  const auto& name = info->columns[1];
  EXPECT_EQ(name.field_id, 12);
  EXPECT_EQ(name.null_count, 250);
  EXPECT_EQ(name.min, "n1001");
  EXPECT_EQ(name.max, "n3499");
  EXPECT_EQ(info->columns[2].min, "-100.25");  // "-100" + ".25" at i = 0
  EXPECT_EQ(info->columns[2].max, "2399.25");
  EXPECT_EQ(info->columns[3].min, "false");
  EXPECT_EQ(info->columns[3].max, "true");
  for (const auto& column : info->columns) EXPECT_GT(column.compressed_bytes, 0);

  auto file = arrow::io::ReadableFile::Open(path);
  ASSERT_TRUE(file.ok());
  auto reader = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok());
  const auto metadata = (*reader)->parquet_reader()->metadata();
  EXPECT_EQ(metadata->num_row_groups(), 3);
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(metadata->schema()->Column(c)->schema_node()->field_id(), 11 + c);
    EXPECT_EQ(metadata->RowGroup(0)->ColumnChunk(c)->compression(), parquet::Compression::ZSTD);
  }
  auto table = (*reader)->ReadTable();
  ASSERT_TRUE(table.ok());
  auto expected = arrow::Table::FromRecordBatches({batch});
  ASSERT_TRUE(expected.ok());
  EXPECT_TRUE((*table)->Equals(**expected, /*check_metadata=*/false));
}

TEST_F(ParquetFileWriterTest, AllNullColumnHasNoMinMax) {
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  ASSERT_TRUE(builder->Append(R"({"a":null})").ok());
  ASSERT_TRUE(builder->Append(R"({"a":null})").ok());
  auto batch = *builder->Finish();
  const std::string path = (dir_ / "nulls.parquet").string();
  auto writer = *ParquetFileWriter::Create(std::make_shared<arrow::fs::LocalFileSystem>(), path,
                                           *WithFieldIds(*batch->schema(), {1}), FileConfig{});
  ASSERT_TRUE(writer->Append(*batch).ok());
  auto info = writer->Finish();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->columns[0].null_count, 2);
  EXPECT_FALSE(info->columns[0].min.has_value());
}

TEST_F(ParquetFileWriterTest, BloomFilterColumnsGetAFilterPerRowGroupOthersNone) {
  const auto batch = EventBatch(2500);  // id bigint, name varchar, score double, flag boolean
  FileConfig config;
  config.row_group_rows = 1000;
  // Matched in any case; a boolean and a column the file lacks get none.
  config.bloom_filter_columns = {"ID", "name", "flag", "absent"};
  const std::string path = (dir_ / "bloom.parquet").string();
  auto writer = ParquetFileWriter::Create(std::make_shared<arrow::fs::LocalFileSystem>(), path,
                                          *WithFieldIds(*batch->schema(), {1, 2, 3, 4}), config);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Append(*batch).ok());
  ASSERT_TRUE((*writer)->Finish().ok());

  auto reader = parquet::ParquetFileReader::OpenFile(path);
  ASSERT_EQ(reader->metadata()->num_row_groups(), 3);
  auto& blooms = reader->GetBloomFilterReader();
  for (int g = 0; g < 3; ++g) {
    auto group = blooms.RowGroup(g);
    auto id = group->GetColumnBloomFilter(0);
    ASSERT_NE(id, nullptr);
    EXPECT_NE(group->GetColumnBloomFilter(1), nullptr);
    EXPECT_EQ(group->GetColumnBloomFilter(2), nullptr);
    EXPECT_EQ(group->GetColumnBloomFilter(3), nullptr);
    // No false negatives: every id of the row group may be there.
    for (int64_t i = g * 1000; i < std::min<int64_t>((g + 1) * 1000, 2500); ++i) {
      EXPECT_TRUE(id->FindHash(id->Hash(i))) << i;
    }
  }
}

TEST_F(ParquetFileWriterTest, AUuidColumnIsFixed16WithTheUuidLogicalTypeAndCanonicalStats) {
  arrow::FixedSizeBinaryBuilder storage(arrow::fixed_size_binary(16));
  const std::vector<std::string> texts = {"7f000000-0000-0000-0000-000000000001",
                                          "00000000-0000-0000-0000-0000000000ff",
                                          "ff000000-0000-0000-0000-000000000000"};
  for (const auto& text : texts) ASSERT_TRUE(storage.Append(Uuid::Parse(text)->bytes.data()).ok());
  ASSERT_TRUE(storage.AppendNull().ok());
  const auto uuids = *UuidArrayOf(storage.Finish().ValueOrDie());
  auto batch =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("u", uuids->type())}), 4, {uuids});
  const std::string path = (dir_ / "uuid.parquet").string();
  FileConfig config;
  config.row_group_rows = 2;  // min and max fold over two row groups
  auto writer = *ParquetFileWriter::Create(std::make_shared<arrow::fs::LocalFileSystem>(), path,
                                           *WithFieldIds(*batch->schema(), {7}), config);
  ASSERT_TRUE(writer->Append(*batch).ok());
  auto info = writer->Finish();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->columns[0].null_count, 1);
  EXPECT_EQ(info->columns[0].min, "00000000-0000-0000-0000-0000000000ff");
  EXPECT_EQ(info->columns[0].max, "ff000000-0000-0000-0000-000000000000");

  auto file = *arrow::io::ReadableFile::Open(path);
  auto reader = *parquet::arrow::OpenFile(file, arrow::default_memory_pool());
  const auto& column = *reader->parquet_reader()->metadata()->schema()->Column(0);
  EXPECT_EQ(column.physical_type(), parquet::Type::FIXED_LEN_BYTE_ARRAY);
  EXPECT_EQ(column.type_length(), 16);
  ASSERT_NE(column.logical_type(), nullptr);
  EXPECT_TRUE(column.logical_type()->is_UUID()) << column.logical_type()->ToString();
  EXPECT_EQ(column.schema_node()->field_id(), 7);
  auto table = reader->ReadTable();
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(IsUuidArrowType(*(*table)->column(0)->type()))
      << (*table)->column(0)->type()->ToString();
  EXPECT_TRUE((*table)->column(0)->chunk(0)->Equals(*uuids));
}

TEST_F(ParquetFileWriterTest, RejectsBadSettings) {
  FileConfig config;
  config.row_group_rows = 0;
  auto schema = arrow::schema({arrow::field("a", arrow::int64())});
  EXPECT_TRUE(ParquetFileWriter::Create(std::make_shared<arrow::fs::LocalFileSystem>(),
                                        (dir_ / "x.parquet").string(), schema, config)
                  .status()
                  .IsInvalid());
  EXPECT_TRUE(WithFieldIds(*schema, {1, 2}).status().IsInvalid());
}

TEST(ObjectNamesTest, UuidV7NamesUnderAPrefix) {
  ManualClock clock(std::chrono::system_clock::time_point(std::chrono::milliseconds(1)));
  UuidV7Generator ids(clock, 1);
  const Uuid id = ids.Next();
  EXPECT_EQ(DataFileName("main/events", id), "main/events/ducklake-" + id.ToString() + ".parquet");
  EXPECT_EQ(DataFileName("main/events/", id), "main/events/ducklake-" + id.ToString() + ".parquet");
  EXPECT_EQ(DataFileName("", id), "ducklake-" + id.ToString() + ".parquet");
}

}  // namespace
}  // namespace weir::files
