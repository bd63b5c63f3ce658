#include "ingest/upsert_rows.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/status.h"
#include "lake/row_keys.h"

namespace weir::ingest {
namespace {

// group (text, one null), w (int32 in one batch, int64 in another), v, seq; and tombstones.
std::shared_ptr<arrow::RecordBatch> Changelog(const std::vector<bool>& tombstones) {
  arrow::StringBuilder group;
  arrow::Int64Builder w, v, seq;
  const std::vector<std::optional<std::string>> groups = {"a", "b", "a",         std::nullopt,
                                                          "a", "b", std::nullopt};
  const std::vector<int64_t> windows = {1, 1, 2, 1, 1, 1, 1};
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_TRUE((groups[i] ? group.Append(*groups[i]) : group.AppendNull()).ok());
    EXPECT_TRUE(w.Append(windows[i]).ok());
    EXPECT_TRUE(v.Append(static_cast<int64_t>(i) * 10).ok());
    EXPECT_TRUE(seq.Append(static_cast<int64_t>(i)).ok());
  }
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("Group", arrow::utf8()), arrow::field("w", arrow::int64()),
                     arrow::field("v", arrow::int64()), arrow::field("seq", arrow::int64())}),
      7,
      {group.Finish().ValueOrDie(), w.Finish().ValueOrDie(), v.Finish().ValueOrDie(),
       seq.Finish().ValueOrDie()});
  return WithTombstoneColumn(batch, tombstones).ValueOrDie();
}

std::vector<int64_t> Seq(const arrow::RecordBatch& rows) {
  const auto& seq = static_cast<const arrow::Int64Array&>(*rows.GetColumnByName("seq"));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < seq.length(); ++i) out.push_back(seq.Value(i));
  return out;
}

TEST(LastRowPerKeyTest, KeepsTheLastRowOfEachKeyInBatchOrder) {
  // Keys: (a,1) rows 0 and 4; (b,1) rows 1 and 5; (a,2) row 2; (null,1) rows 3 and 6.
  ASSERT_OK_AND_ASSIGN(auto last,
                       LastRowPerKey(Changelog(std::vector<bool>(7, false)), {"group", "w"}));
  EXPECT_EQ(Seq(*last.rows), (std::vector<int64_t>{2, 4, 5, 6}));
  EXPECT_EQ(last.superseded, 3);
  EXPECT_EQ(last.tombstones, (std::vector<bool>{false, false, false, false}));
  EXPECT_EQ(last.rows->schema()->GetFieldIndex(kTombstoneColumn), -1);
}

TEST(LastRowPerKeyTest, ATombstoneWinsOnlyWhenItIsTheLastRecordOfItsKey) {
  // Row 4 (a,1) is a tombstone after row 0: the key is deleted. Row 1 (b,1) is a tombstone
  // followed by row 5: the key lives with row 5.
  ASSERT_OK_AND_ASSIGN(
      auto last,
      LastRowPerKey(Changelog({false, true, false, false, true, false, false}), {"group", "w"}));
  EXPECT_EQ(Seq(*last.rows), (std::vector<int64_t>{2, 4, 5, 6}));
  EXPECT_EQ(last.tombstones, (std::vector<bool>{false, true, false, false}));
}

TEST(LastRowPerKeyTest, AMissingKeyColumnIsNullInEveryRow) {
  ASSERT_OK_AND_ASSIGN(auto last,
                       LastRowPerKey(Changelog(std::vector<bool>(7, false)), {"w", "absent"}));
  // Keys: w = 1 (rows 0, 1, 3, 4, 5, 6) and w = 2 (row 2).
  EXPECT_EQ(Seq(*last.rows), (std::vector<int64_t>{2, 6}));
  ASSERT_OK_AND_ASSIGN(auto keys, KeysOf(*last.rows, {"w", "absent"}));
  EXPECT_EQ(keys->keys->num_rows(), 2);
  EXPECT_EQ(keys->keys->column(1)->null_count(), 2);
  EXPECT_EQ(keys->columns, (std::vector<std::string>{"w", "absent"}));
}

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> Make(Builder builder, const std::vector<std::optional<T>>& values) {
  for (const auto& v : values) EXPECT_TRUE((v ? builder.Append(*v) : builder.AppendNull()).ok());
  return builder.Finish().ValueOrDie();
}
using Ints = std::vector<std::optional<int64_t>>;
using Texts = std::vector<std::optional<std::string>>;

TEST(RowKeysTest, EqualValuesOfDifferentWidthsAndKindsEncodeEqually) {
  auto int32s = Make(arrow::Int32Builder(), std::vector<std::optional<int32_t>>{1, {}, -3});
  auto int64s = Make(arrow::Int64Builder(), Ints{1, {}, -3});
  auto strings = Make(arrow::StringBuilder(), Texts{"x", "y", {}});
  auto large = Make(arrow::LargeStringBuilder(), Texts{"x", "y", {}});
  ASSERT_OK_AND_ASSIGN(auto a, lake::EncodeRowKeys({int32s, strings}));
  ASSERT_OK_AND_ASSIGN(auto b, lake::EncodeRowKeys({int64s, large}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a[0], a[1]);
  ASSERT_OK_AND_ASSIGN(auto c, lake::EncodeRowKeys({strings, int32s}));
  EXPECT_NE(a[0], c[0]);
  // A text "1" is not the integer 1, and ("ab","c") is not ("a","bc").
  auto one = Make(arrow::StringBuilder(), Texts{"1"});
  auto ints = Make(arrow::Int64Builder(), Ints{1});
  EXPECT_NE(lake::EncodeRowKeys({one}).ValueOrDie(), lake::EncodeRowKeys({ints}).ValueOrDie());
  auto ab = Make(arrow::StringBuilder(), Texts{"ab"});
  auto c1 = Make(arrow::StringBuilder(), Texts{"c"});
  auto a1 = Make(arrow::StringBuilder(), Texts{"a"});
  auto bc = Make(arrow::StringBuilder(), Texts{"bc"});
  EXPECT_NE(lake::EncodeRowKeys({ab, c1}).ValueOrDie(), lake::EncodeRowKeys({a1, bc}).ValueOrDie());
}

TEST(WithKeyFieldsTest, PutsTheKeyFieldsFirstSoThatTheyWin) {
  std::string out;
  ASSERT_OK(WithKeyFields(R"( {"g": "a", "w": 1} )", R"({"v": 2, "g": "other"})", out));
  EXPECT_EQ(out, R"({"g": "a", "w": 1,"v": 2, "g": "other"})");
  ASSERT_OK(WithKeyFields("{}", R"({"v": 2})", out));
  EXPECT_EQ(out, R"({"v": 2})");
  ASSERT_OK(WithKeyFields(R"({"g": 1})", "{ }", out));
  EXPECT_EQ(out, R"({"g": 1})");
  const Status not_object = WithKeyFields("42", R"({"v": 2})", out);
  EXPECT_EQ(ClassOf(not_object), ErrorClass::kBadData);
  EXPECT_EQ(GetErrorDetail(not_object)->code(), "upsert_key_not_object");
  EXPECT_EQ(ClassOf(WithKeyFields(R"({"g": 1})", "[1]", out)), ErrorClass::kBadData);
}

}  // namespace
}  // namespace weir::ingest
