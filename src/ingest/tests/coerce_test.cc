#include "ingest/coerce.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "base/uuid_arrow.h"

namespace weir::ingest {
namespace {

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder builder;
  for (const auto& v : values) {
    EXPECT_TRUE((v ? builder.Append(*v) : builder.AppendNull()).ok());
  }
  return builder.Finish().ValueOrDie();
}

TEST(CoerceTest, TextBecomesBigintWhenIntegralElseNullAndCounted) {
  auto coerced =
      CoerceTo(*Strings({"42", "3.0", "-7", "x", std::nullopt, "1.5"}), lake::ColumnType::kBigint)
          .ValueOrDie();
  EXPECT_EQ(coerced.nulled, 2);  // "x" and "1.5"; an original null is not counted
  const auto& ints = static_cast<const arrow::Int64Array&>(*coerced.array);
  EXPECT_EQ(ints.Value(0), 42);
  EXPECT_EQ(ints.Value(1), 3);
  EXPECT_EQ(ints.Value(2), -7);
  EXPECT_TRUE(ints.IsNull(3));
  EXPECT_TRUE(ints.IsNull(4));
  EXPECT_TRUE(ints.IsNull(5));
}

TEST(CoerceTest, NumbersAndBooleansBecomeTheirText) {
  arrow::Int64Builder ints;
  ASSERT_TRUE(ints.AppendValues({1, -2}).ok());
  auto text = CoerceTo(*ints.Finish().ValueOrDie(), lake::ColumnType::kVarchar).ValueOrDie();
  EXPECT_EQ(text.nulled, 0);
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*text.array).GetString(1), "-2");
  arrow::BooleanBuilder bools;
  ASSERT_TRUE(bools.Append(true).ok());
  auto btext = CoerceTo(*bools.Finish().ValueOrDie(), lake::ColumnType::kVarchar).ValueOrDie();
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*btext.array).GetString(0), "true");
}

TEST(CoerceTest, DoublesBecomeBigintOnlyWhenIntegralAndInRange) {
  arrow::DoubleBuilder doubles;
  ASSERT_TRUE(doubles.AppendValues({2.0, 2.5, 1e19, -9223372036854775808.0}).ok());
  auto coerced = CoerceTo(*doubles.Finish().ValueOrDie(), lake::ColumnType::kBigint).ValueOrDie();
  EXPECT_EQ(coerced.nulled, 2);
  const auto& ints = static_cast<const arrow::Int64Array&>(*coerced.array);
  EXPECT_EQ(ints.Value(0), 2);
  EXPECT_EQ(ints.Value(3), INT64_MIN);
}

TEST(CoerceTest, ALiveTimestampColumnParsesTheTypedColumnsTimestampText) {
  auto coerced = CoerceTo(*Strings({"2026-01-01", std::nullopt, "2026-01-01 12:00:00.5",
                                    "yesterday", "1767225600"}),
                          lake::ColumnType::kTimestampTz)
                     .ValueOrDie();
  EXPECT_EQ(coerced.nulled, 2);  // text outside the grammar; epoch numbers are not guessed
  EXPECT_EQ(coerced.array->type()->id(), arrow::Type::TIMESTAMP);
  const auto& ts = static_cast<const arrow::TimestampArray&>(*coerced.array);
  EXPECT_EQ(ts.Value(0), 1767225600LL * 1000000);
  EXPECT_TRUE(ts.IsNull(1));
  EXPECT_EQ(ts.Value(2), (1767225600LL + 12 * 3600) * 1000000 + 500000);
  EXPECT_TRUE(ts.IsNull(3));
  EXPECT_TRUE(ts.IsNull(4));
}

TEST(CoerceTest, ALiveUuidColumnParsesUuidTextAndAVarcharOneTakesTheCanonicalText) {
  const std::string c = "0123abcd-4567-89ef-0123-456789abcdef";
  auto coerced = CoerceTo(*Strings({"0123ABCD456789EF0123456789ABCDEF", std::nullopt,
                                    "urn:uuid:" + c, "not-a-uuid", "{" + c + "}"}),
                          lake::ColumnType::kUuid)
                     .ValueOrDie();
  EXPECT_EQ(coerced.nulled, 1);
  ASSERT_TRUE(IsUuidArrowType(*coerced.array->type()));
  EXPECT_EQ(ColumnTypeOf(*coerced.array->type()), lake::ColumnType::kUuid);
  EXPECT_TRUE(ArrowTypeOf(lake::ColumnType::kUuid)->Equals(*coerced.array->type()));
  EXPECT_EQ(UuidAt(*coerced.array, 0).ToString(), c);
  EXPECT_TRUE(coerced.array->IsNull(1));
  EXPECT_EQ(UuidAt(*coerced.array, 2).ToString(), c);
  EXPECT_TRUE(coerced.array->IsNull(3));
  EXPECT_EQ(UuidAt(*coerced.array, 4).ToString(), c);
  // Numbers are never uuids.
  arrow::Int64Builder ints;
  ASSERT_TRUE(ints.Append(1).ok());
  EXPECT_EQ(CoerceTo(*ints.Finish().ValueOrDie(), lake::ColumnType::kUuid).ValueOrDie().nulled, 1);
  // The other way: uuids into a live varchar column as lower-case hyphenated text.
  auto text = CoerceTo(*coerced.array, lake::ColumnType::kVarchar).ValueOrDie();
  EXPECT_EQ(text.nulled, 0);
  const auto& strings = static_cast<const arrow::StringArray&>(*text.array);
  EXPECT_EQ(strings.GetString(0), c);
  EXPECT_TRUE(strings.IsNull(1));
  EXPECT_TRUE(strings.IsNull(3));
  EXPECT_EQ(ValueText(*coerced.array, 4), c);
  // Same type: passed through.
  auto same = CoerceTo(*coerced.array, lake::ColumnType::kUuid).ValueOrDie();
  EXPECT_EQ(same.nulled, 0);
  EXPECT_TRUE(same.array->Equals(*coerced.array));
}

TEST(CoerceTest, SameTypeIsPassedThrough) {
  auto input = Strings({"a"});
  auto coerced = CoerceTo(*input, lake::ColumnType::kVarchar).ValueOrDie();
  EXPECT_EQ(coerced.nulled, 0);
  EXPECT_TRUE(coerced.array->Equals(*input));
}

}  // namespace
}  // namespace weir::ingest
