#include "ingest/row_sort.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/uuid_arrow.h"

namespace weir::ingest {
namespace {

std::shared_ptr<arrow::RecordBatch> Rows() {
  // team (with a null), ts, seq: the consume order.
  arrow::StringBuilder team;
  arrow::Int64Builder ts, seq;
  const std::vector<std::optional<std::string>> teams = {"b", "a", std::nullopt, "b", "a", "a"};
  const std::vector<int64_t> times = {5, 9, 1, 5, 2, 9};
  for (size_t i = 0; i < teams.size(); ++i) {
    EXPECT_TRUE((teams[i] ? team.Append(*teams[i]) : team.AppendNull()).ok());
    EXPECT_TRUE(ts.Append(times[i]).ok());
    EXPECT_TRUE(seq.Append(static_cast<int64_t>(i)).ok());
  }
  return arrow::RecordBatch::Make(
      arrow::schema({arrow::field("Team", arrow::utf8()), arrow::field("ts", arrow::int64()),
                     arrow::field("seq", arrow::int64())}),
      6, {team.Finish().ValueOrDie(), ts.Finish().ValueOrDie(), seq.Finish().ValueOrDie()});
}

std::vector<int64_t> Seq(const arrow::RecordBatch& rows) {
  const auto& seq = static_cast<const arrow::Int64Array&>(*rows.GetColumnByName("seq"));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < seq.length(); ++i) out.push_back(seq.Value(i));
  return out;
}

lake::SortKey Asc(std::string column) { return {std::move(column), false, false}; }

TEST(SortRowsTest, SortsAscendingLeftToRightStablyWithNullsLast) {
  ASSERT_OK_AND_ASSIGN(auto sorted, SortRows(Rows(), {Asc("team")}));
  EXPECT_EQ(sorted.skipped, "");
  // Keys resolve case-insensitively; equal keys keep their consume order; the null goes last.
  EXPECT_EQ(Seq(*sorted.rows), (std::vector<int64_t>{1, 4, 5, 0, 3, 2}));
  ASSERT_OK_AND_ASSIGN(sorted, SortRows(Rows(), {Asc("team"), Asc("ts")}));
  EXPECT_EQ(Seq(*sorted.rows), (std::vector<int64_t>{4, 1, 5, 0, 3, 2}));
  ASSERT_OK_AND_ASSIGN(sorted, SortRows(Rows(), {Asc("ts"), Asc("team")}));
  EXPECT_EQ(Seq(*sorted.rows), (std::vector<int64_t>{2, 4, 0, 3, 1, 5}));
}

TEST(SortRowsTest, AMissingKeySkipsTheSortAndNamesTheKeys) {
  const auto rows = Rows();
  ASSERT_OK_AND_ASSIGN(auto sorted, SortRows(rows, {Asc("ts"), Asc("nope"), Asc("gone")}));
  EXPECT_EQ(sorted.skipped, "field_missing");
  EXPECT_EQ(sorted.keys_at_fault, (std::vector<std::string>{"nope", "gone"}));
  EXPECT_EQ(sorted.rows, rows) << "written as they came";
}

TEST(SortRowsTest, AKeyOfAnUnsortableTypeSkipsTheSort) {
  auto values = std::make_shared<arrow::Int64Builder>();
  arrow::ListBuilder lists(arrow::default_memory_pool(), values);
  for (int64_t i = 0; i < 6; ++i) {
    ASSERT_OK(lists.Append());
    ASSERT_OK(values->Append(i));
  }
  ASSERT_OK_AND_ASSIGN(auto list, lists.Finish());
  ASSERT_OK_AND_ASSIGN(auto rows, Rows()->AddColumn(3, "l", list));
  ASSERT_OK_AND_ASSIGN(auto sorted, SortRows(rows, {Asc("ts"), Asc("l")}));
  EXPECT_EQ(sorted.skipped, "unsortable_type");
  EXPECT_EQ(sorted.keys_at_fault, (std::vector<std::string>{"l"}));
  EXPECT_EQ(Seq(*sorted.rows), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(SortRowsTest, AUuidSortsByItsBytes) {
  // fixed_size_binary(16), as a uuid column's storage: big-endian bytes order like the text.
  arrow::FixedSizeBinaryBuilder uuids(arrow::fixed_size_binary(16));
  arrow::Int64Builder seq;
  const std::vector<std::string> values = {
      std::string("\xff") + std::string(15, '\0'), std::string(16, '\0'),
      std::string("\x7f") + std::string(15, '\x01'), std::string(15, '\0') + "\x01"};
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_OK(uuids.Append(values[i]));
    ASSERT_OK(seq.Append(static_cast<int64_t>(i)));
  }
  auto rows =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("u", arrow::fixed_size_binary(16)),
                                              arrow::field("seq", arrow::int64())}),
                               4, {uuids.Finish().ValueOrDie(), seq.Finish().ValueOrDie()});
  ASSERT_OK_AND_ASSIGN(auto sorted, SortRows(rows, {Asc("u")}));
  EXPECT_EQ(sorted.skipped, "");
  EXPECT_EQ(Seq(*sorted.rows), (std::vector<int64_t>{1, 3, 2, 0}));
  // The arrow.uuid column a uuid pin makes: the same order, and the type survives the take.
  ASSERT_OK_AND_ASSIGN(auto typed, UuidArrayOf(rows->column(0)));
  ASSERT_OK_AND_ASSIGN(auto typed_rows,
                       rows->SetColumn(0, arrow::field("u", typed->type()), typed));
  ASSERT_OK_AND_ASSIGN(auto typed_sorted, SortRows(typed_rows, {Asc("U")}));
  EXPECT_EQ(typed_sorted.skipped, "");
  EXPECT_EQ(Seq(*typed_sorted.rows), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_TRUE(IsUuidArrowType(*typed_sorted.rows->column(0)->type()));
  EXPECT_EQ(UuidAt(*typed_sorted.rows->column(0), 3).ToString(),
            "ff000000-0000-0000-0000-000000000000");
}

}  // namespace
}  // namespace weir::ingest
