// Arrow C++ and Parquet C++ from the pyarrow wheel: write a zstd-compressed Parquet file with
// statistics, read it back, values identical. The file is also read by DuckDB in
// tests/e2e/test_dependencies.py, which recomputes the same rows from the formulas below.
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/statistics.h>

#include <gtest/gtest.h>

#include "harness_env.h"

namespace weir {
namespace {

constexpr int64_t kRows = 10000;
constexpr int64_t kRowGroupRows = 4096;
constexpr int64_t kTimestampBaseMicros = 1700000000000000;

// Row i of the reference table (keep in step with tests/e2e/test_dependencies.py).
std::shared_ptr<arrow::Table> ReferenceTable() {
  arrow::Int64Builder id;
  arrow::Int32Builder small;
  arrow::DoubleBuilder score;
  arrow::StringBuilder name;
  arrow::BooleanBuilder flag;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (int64_t i = 0; i < kRows; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(small.Append(static_cast<int32_t>(i % 1000 - 500)).ok());
    EXPECT_TRUE(score.Append(static_cast<double>(i) * 0.25 - 100.0).ok());
    if (i % 7 == 0) {
      EXPECT_TRUE(name.AppendNull().ok());
    } else {
      EXPECT_TRUE(name.Append("r\xC3\xA9gion-" + std::to_string(i)).ok());
    }
    EXPECT_TRUE(flag.Append(i % 3 == 0).ok());
    EXPECT_TRUE(ts.Append(kTimestampBaseMicros + i * 1000003).ok());
  }
  auto schema = arrow::schema({
      arrow::field("id", arrow::int64(), false),
      arrow::field("small", arrow::int32()),
      arrow::field("score", arrow::float64()),
      arrow::field("name", arrow::utf8()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
  });
  std::vector<std::shared_ptr<arrow::Array>> columns(6);
  EXPECT_TRUE(id.Finish(&columns[0]).ok());
  EXPECT_TRUE(small.Finish(&columns[1]).ok());
  EXPECT_TRUE(score.Finish(&columns[2]).ok());
  EXPECT_TRUE(name.Finish(&columns[3]).ok());
  EXPECT_TRUE(flag.Finish(&columns[4]).ok());
  EXPECT_TRUE(ts.Finish(&columns[5]).ok());
  return arrow::Table::Make(schema, columns);
}

TEST(ParquetRoundTripTest, ZstdWithStatisticsReadsBackIdentical) {
  const auto path = testing::TestOutputDir("parquet") / "arrow_roundtrip.parquet";
  const auto table = ReferenceTable();

  {
    auto sink = arrow::io::FileOutputStream::Open(path.string());
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    const auto properties = parquet::WriterProperties::Builder()
                                .compression(parquet::Compression::ZSTD)
                                ->enable_statistics()
                                ->max_row_group_length(kRowGroupRows)
                                ->build();
    ASSERT_TRUE(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *sink,
                                           kRowGroupRows, properties)
                    .ok());
    ASSERT_TRUE((*sink)->Close().ok());
  }

  auto source = arrow::io::ReadableFile::Open(path.string());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto reader = parquet::arrow::OpenFile(*source, arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto read_result = (*reader)->ReadTable();
  ASSERT_TRUE(read_result.ok()) << read_result.status().ToString();
  const std::shared_ptr<arrow::Table> read_back = *read_result;
  ASSERT_EQ(read_back->num_rows(), kRows);
  EXPECT_TRUE(read_back->Equals(*table)) << read_back->ToString().substr(0, 2000);

  const auto metadata = (*reader)->parquet_reader()->metadata();
  ASSERT_EQ(metadata->num_row_groups(), 3);  // 4096 + 4096 + 1808
  EXPECT_EQ(metadata->RowGroup(2)->num_rows(), kRows - 2 * kRowGroupRows);
  for (int group = 0; group < metadata->num_row_groups(); ++group) {
    for (int column = 0; column < metadata->num_columns(); ++column) {
      const auto chunk = metadata->RowGroup(group)->ColumnChunk(column);
      EXPECT_EQ(chunk->compression(), parquet::Compression::ZSTD);
      EXPECT_TRUE(chunk->is_stats_set()) << "group " << group << " column " << column;
    }
  }
  const auto id_stats = std::static_pointer_cast<parquet::Int64Statistics>(
      metadata->RowGroup(1)->ColumnChunk(0)->statistics());
  EXPECT_EQ(id_stats->min(), kRowGroupRows);
  EXPECT_EQ(id_stats->max(), 2 * kRowGroupRows - 1);
  const auto name_stats = metadata->RowGroup(0)->ColumnChunk(3)->statistics();
  EXPECT_EQ(name_stats->null_count(), (kRowGroupRows + 6) / 7);
}

}  // namespace
}  // namespace weir
