#include "lake/ducklake/stats_text.h"

#include <arrow/builder.h>
#include <gtest/gtest.h>

#include "base/uuid_arrow.h"

namespace weir::lake::ducklake {
namespace {

TEST(StatsTextTest, TimestampsPrintAsDuckDbDoes) {
  EXPECT_EQ(TimestampText(0), "1970-01-01 00:00:00+00");
  EXPECT_EQ(TimestampText(1710000000123456), "2024-03-09 16:00:00.123456+00");
  EXPECT_EQ(TimestampText(1710000000500000), "2024-03-09 16:00:00.5+00");
  EXPECT_EQ(TimestampText(-3600000000), "1969-12-31 23:00:00+00");
}

TEST(StatsTextTest, PartitionValuesFollowDuckLakeTransforms) {
  const int64_t t = 1710000000123456;  // 2024-03-09 16:00:00.123456 UTC
  EXPECT_EQ(TimestampPartitionValue(TransformKind::kYear, t), "2024");
  EXPECT_EQ(TimestampPartitionValue(TransformKind::kMonth, t), "3");
  EXPECT_EQ(TimestampPartitionValue(TransformKind::kDay, t), "9");
  EXPECT_EQ(TimestampPartitionValue(TransformKind::kHour, t), "16");
  EXPECT_EQ(TimestampPartitionValue(TransformKind::kHour, -3600000000), "23");
}

TEST(StatsTextTest, ParquetStatisticsBecomeCatalogText) {
  EXPECT_EQ(StatText(ColumnType::kBoolean, "true"), "1");
  EXPECT_EQ(StatText(ColumnType::kBoolean, "false"), "0");
  EXPECT_EQ(StatText(ColumnType::kTimestampTz, "0"), "1970-01-01 00:00:00+00");
  EXPECT_EQ(StatText(ColumnType::kBigint, "-5"), "-5");
  EXPECT_EQ(StatText(ColumnType::kVarchar, std::nullopt), std::nullopt);
}

TEST(StatsTextTest, ComparisonIsByTypeNotByText) {
  EXPECT_LT(CompareStat(ColumnType::kBigint, "9", "10"), 0);
  EXPECT_LT(CompareStat(ColumnType::kDouble, "-1.5", "-0.5"), 0);
  EXPECT_GT(CompareStat(ColumnType::kVarchar, "b", "ab"), 0);
  EXPECT_EQ(CompareStat(ColumnType::kBigint, "7", "7"), 0);
}

TEST(StatsTextTest, AUuidIsItsCanonicalTextAsDuckDbRecordsIt) {
  arrow::FixedSizeBinaryBuilder storage(arrow::fixed_size_binary(16));
  ASSERT_TRUE(storage.Append(Uuid::Parse("0123ABCD456789EF0123456789ABCDEF")->bytes.data()).ok());
  ASSERT_TRUE(storage.AppendNull().ok());
  const auto uuids = *UuidArrayOf(storage.Finish().ValueOrDie());
  const PartitionKey key{"u", {TransformKind::kIdentity, 0}};
  EXPECT_EQ(*PartitionValueText(*uuids, 0, key), "0123abcd-4567-89ef-0123-456789abcdef");
  EXPECT_EQ(*PartitionValueText(*uuids, 1, key), std::nullopt);
  EXPECT_FALSE(PartitionValueText(*uuids, 0, {"u", {TransformKind::kDay, 0}}).ok());
  EXPECT_EQ(StatText(ColumnType::kUuid, "0123abcd-4567-89ef-0123-456789abcdef"),
            "0123abcd-4567-89ef-0123-456789abcdef");
  EXPECT_LT(CompareStat(ColumnType::kUuid, "0fffffff-0000-0000-0000-000000000000",
                        "a0000000-0000-0000-0000-000000000000"),
            0);
}

TEST(StatsTextTest, PartitionDirectoriesEscapeLikeDuckDb) {
  EXPECT_EQ(PartitionDirectory({"t", {TransformKind::kYear}}, "2024"), "year=2024");
  EXPECT_EQ(PartitionDirectory({"s", {TransformKind::kIdentity}}, "a b/c"), "s=a%20b%2Fc");
  EXPECT_EQ(PartitionDirectory({"s", {TransformKind::kIdentity}}, std::nullopt),
            "s=__HIVE_DEFAULT_PARTITION__");
}

}  // namespace
}  // namespace weir::lake::ducklake
