#include <cmath>
#include <filesystem>

#include <arrow/builder.h>
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "files/parquet_file_writer.h"
#include "lake/iceberg/binary_value.h"
#include "lake/iceberg/parquet_metrics.h"

namespace weir::lake::iceberg {
namespace {

Type T(TypeId id) { return Type::Primitive(id); }

class IcebergParquetMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iceberg_parquet_metrics_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
    schema_ = Schema(0, {NestedField{11, "id", false, T(TypeId::kLong), {}},
                         NestedField{12, "name", false, T(TypeId::kString), {}},
                         NestedField{13, "score", false, T(TypeId::kDouble), {}},
                         NestedField{14, "ok", false, T(TypeId::kBoolean), {}},
                         NestedField{15, "at", false, T(TypeId::kTimestampTz), {}},
                         NestedField{16, "empty", false, T(TypeId::kString), {}}});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes rows i = 0..n-1: id = i - 5, name "n<i>" (null when i % 4 == 0; one long name),
  // score = i / 2 (-0.0 first), ok = i odd, at = 1000 + i, empty always null.
  Result<std::string> Write(int n, int64_t row_group_rows, std::vector<int> ids) {
    arrow::Int64Builder id;
    arrow::StringBuilder name, empty;
    arrow::DoubleBuilder score;
    arrow::BooleanBuilder ok;
    const auto ts_type = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    arrow::TimestampBuilder at(ts_type, arrow::default_memory_pool());
    for (int i = 0; i < n; ++i) {
      WEIR_RETURN_NOT_OK(id.Append(i - 5));
      if (i % 4 == 0) {
        WEIR_RETURN_NOT_OK(name.AppendNull());
      } else if (i == 3) {
        WEIR_RETURN_NOT_OK(name.Append("zzzzzzzzzzzzzzzzzzzz-long"));  // 25 code points
      } else {
        WEIR_RETURN_NOT_OK(name.Append("n" + std::to_string(i)));
      }
      WEIR_RETURN_NOT_OK(score.Append(i == 0 ? -0.0 : i / 2.0));
      WEIR_RETURN_NOT_OK(ok.Append(i % 2 == 1));
      WEIR_RETURN_NOT_OK(at.Append(1000 + i));
      WEIR_RETURN_NOT_OK(empty.AppendNull());
    }
    std::vector<std::shared_ptr<arrow::Array>> columns(6);
    WEIR_RETURN_NOT_OK(id.Finish(&columns[0]));
    WEIR_RETURN_NOT_OK(name.Finish(&columns[1]));
    WEIR_RETURN_NOT_OK(score.Finish(&columns[2]));
    WEIR_RETURN_NOT_OK(ok.Finish(&columns[3]));
    WEIR_RETURN_NOT_OK(at.Finish(&columns[4]));
    WEIR_RETURN_NOT_OK(empty.Finish(&columns[5]));
    const auto schema = arrow::schema(
        {arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
         arrow::field("score", arrow::float64()), arrow::field("ok", arrow::boolean()),
         arrow::field("at", ts_type), arrow::field("empty", arrow::utf8())});
    WEIR_ASSIGN_OR_RAISE(auto with_ids, files::WithFieldIds(*schema, ids));
    const std::string path = (dir_ / "f.parquet").string();
    files::FileConfig config;
    config.row_group_rows = row_group_rows;
    WEIR_ASSIGN_OR_RAISE(auto writer,
                         files::ParquetFileWriter::Create(fs_, path, with_ids, config));
    WEIR_RETURN_NOT_OK(writer->Append(*arrow::RecordBatch::Make(with_ids, n, columns)));
    WEIR_RETURN_NOT_OK(writer->Finish().status());
    return path;
  }

  std::filesystem::path dir_;
  std::shared_ptr<arrow::fs::LocalFileSystem> fs_;
  Schema schema_;
};

TEST_F(IcebergParquetMetrics, ComeFromTheFooterKeyedByFieldIdAcrossRowGroups) {
  ASSERT_OK_AND_ASSIGN(const std::string path, Write(20, 6, {11, 12, 13, 14, 15, 16}));
  ASSERT_OK_AND_ASSIGN(const auto footer, ReadParquetFooter(*fs_, path));
  ASSERT_EQ(footer->num_row_groups(), 4);
  DataFile file;
  ASSERT_OK(AddParquetMetrics(*footer, schema_, {16, true}, file));
  EXPECT_EQ(file.record_count, 20);
  EXPECT_EQ(file.split_offsets.size(), 4u);
  EXPECT_TRUE(std::is_sorted(file.split_offsets.begin(), file.split_offsets.end()));
  EXPECT_EQ(file.split_offsets[0], 4);  // after the "PAR1" magic
  for (int id = 11; id <= 16; ++id) {
    EXPECT_EQ(file.value_counts.at(id), 20) << id;
    EXPECT_GT(file.column_sizes.at(id), 0) << id;
  }
  EXPECT_EQ(file.null_value_counts.at(11), 0);
  EXPECT_EQ(file.null_value_counts.at(12), 5);
  EXPECT_EQ(file.null_value_counts.at(16), 20);
  EXPECT_EQ(file.nan_value_counts, (std::map<int, int64_t>{{13, 0}}));  // JSON has no NaN
  EXPECT_EQ(*FromBinary(file.lower_bounds.at(11), T(TypeId::kLong)), Value(int64_t{-5}));
  EXPECT_EQ(*FromBinary(file.upper_bounds.at(11), T(TypeId::kLong)), Value(int64_t{14}));
  EXPECT_EQ(file.lower_bounds.at(12), "n1");
  // The 25-code-point maximum is cut to 16 and rounded up so it still bounds the column.
  EXPECT_EQ(file.upper_bounds.at(12), "zzzzzzzzzzzzzzz{");
  const Value low_score = *FromBinary(file.lower_bounds.at(13), T(TypeId::kDouble));
  EXPECT_TRUE(std::signbit(std::get<double>(low_score)));  // -0.0 precedes 0.0
  EXPECT_EQ(*FromBinary(file.upper_bounds.at(13), T(TypeId::kDouble)), Value(9.5));
  EXPECT_EQ(*FromBinary(file.lower_bounds.at(14), T(TypeId::kBoolean)), Value(false));
  EXPECT_EQ(*FromBinary(file.upper_bounds.at(14), T(TypeId::kBoolean)), Value(true));
  EXPECT_EQ(*FromBinary(file.lower_bounds.at(15), T(TypeId::kTimestampTz)), Value(int64_t{1000}));
  EXPECT_EQ(*FromBinary(file.upper_bounds.at(15), T(TypeId::kTimestampTz)), Value(int64_t{1019}));
  EXPECT_EQ(file.lower_bounds.count(16), 0u);  // all null: no bounds
}

TEST_F(IcebergParquetMetrics, LeaveNanCountsOutUnlessTheWriterKnowsThem) {
  ASSERT_OK_AND_ASSIGN(const std::string path, Write(8, 100, {11, 12, 13, 14, 15, 16}));
  ASSERT_OK_AND_ASSIGN(const auto footer, ReadParquetFooter(*fs_, path));
  DataFile file;
  ASSERT_OK(AddParquetMetrics(*footer, schema_, {}, file));
  EXPECT_TRUE(file.nan_value_counts.empty());
}

TEST_F(IcebergParquetMetrics, RefuseColumnsWithoutAnIcebergFieldId) {
  ASSERT_OK_AND_ASSIGN(const std::string path, Write(4, 100, {11, 12, 13, 14, 15, 99}));
  ASSERT_OK_AND_ASSIGN(const auto footer, ReadParquetFooter(*fs_, path));
  DataFile file;
  const Status status = AddParquetMetrics(*footer, schema_, {}, file);
  EXPECT_NE(status.message().find("field id 99"), std::string::npos) << status.message();
  EXPECT_FALSE(ReadParquetFooter(*fs_, (dir_ / "missing.parquet").string()).ok());
}

TEST(IcebergTruncatedBounds, RoundUpTheLastKeptCodePoint) {
  EXPECT_EQ(TruncateUpperString("abc", 16), "abc");
  EXPECT_EQ(TruncateUpperString("abcdef", 3), "abd");
  EXPECT_EQ(TruncateUpperString("ab\xf4\x8f\xbf\xbf"
                                "cd",
                                3),
            "ac");                                                       // U+10FFFF cannot grow
  EXPECT_EQ(TruncateUpperString("a\xed\x9f\xbfz", 2), "a\xee\x80\x80");  // skips surrogates
  EXPECT_EQ(TruncateUpperString("\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbfx", 2), std::nullopt);
  EXPECT_EQ(TruncateUpperBinary(std::string("\x01\xff\x05", 3), 2), std::string("\x02", 1));
  EXPECT_EQ(TruncateUpperBinary(std::string("\xff\xff\x05", 3), 2), std::nullopt);
}

}  // namespace
}  // namespace weir::lake::iceberg
