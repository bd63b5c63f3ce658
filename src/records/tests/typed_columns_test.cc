#include "records/typed_columns.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "base/uuid_arrow.h"
#include "decode/json_batch_builder.h"
#include "records/mapped_batch_builder.h"

namespace weir::records {
namespace {

std::shared_ptr<arrow::RecordBatch> Decode(const std::vector<std::string>& records) {
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  for (const auto& record : records) EXPECT_TRUE(builder->Append(record).ok()) << record;
  return *builder->Finish();
}

std::vector<std::string> Texts(const arrow::Array& array) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < array.length(); ++i) {
    out.push_back(array.IsNull(i) ? "null" : array.GetScalar(i).ValueOrDie()->ToString());
  }
  return out;
}

TEST(TypedColumns, ParsesMillpondsGrammarAndRefusesBadItemsNamingThem) {
  auto parsed = ParseTypedColumns({"timestamp:timestamptz", " project_id : bigint", "",
                                   "ok:boolean", "score:double", "name:varchar", "id:uuid"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 6u);
  EXPECT_EQ((*parsed)[1].column, "project_id");
  EXPECT_EQ((*parsed)[1].type, TypedKind::kBigint);
  EXPECT_EQ((*parsed)[5].type, TypedKind::kUuid);
  for (const auto& [items, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"timestamp"}, "\"timestamp\" is not column:type"},
           {{"a-b:bigint"}, "\"a-b\" is not a column name"},
           {{"a:int"}, "type \"int\" is not one of"},
           {{"a:bigint", "A:double"}, "column a is typed twice"}}) {
    auto bad = ParseTypedColumns(items);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
  }
  EXPECT_TRUE(TypedColumns::Make(*parsed).ok());  // every type is written, uuid included
}

TEST(TypedColumns, CastsEachPinnedColumnNullingOnlyTheValuesThatCannotBeCast) {
  auto typed = *TypedColumns::Make({{"ts", TypedKind::kTimestampTz},
                                    {"project_id", TypedKind::kBigint},
                                    {"score", TypedKind::kDouble},
                                    {"ok", TypedKind::kBoolean},
                                    {"label", TypedKind::kVarchar},
                                    {"already", TypedKind::kBigint},
                                    {"absent", TypedKind::kDouble}});
  auto batch = Decode({
      R"({"ts":"2024-01-01 12:00:00.123","project_id":null,"score":"1.5","ok":"true","label":1,"already":1})",
      R"({"ts":"2024-01-01T12:00:00Z","project_id":null,"score":2,"ok":false,"label":2.5,"already":2})",
      R"({"ts":"yesterday","project_id":null,"score":"x","ok":"yes","label":true,"already":3})",
  });
  std::vector<ColumnCoercion> outcomes;
  auto out = typed.Apply(batch, &outcomes);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto& b = **out;
  EXPECT_EQ(b.num_columns(), 6);
  EXPECT_TRUE(
      b.GetColumnByName("ts")->type()->Equals(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  EXPECT_EQ(b.GetColumnByName("project_id")->type()->id(), arrow::Type::INT64);
  EXPECT_EQ(Texts(*b.GetColumnByName("ts")),
            (std::vector<std::string>{"2024-01-01 12:00:00.123000Z", "2024-01-01 12:00:00.000000Z",
                                      "null"}));
  EXPECT_EQ(Texts(*b.GetColumnByName("project_id")),
            (std::vector<std::string>{"null", "null", "null"}));
  EXPECT_EQ(Texts(*b.GetColumnByName("score")), (std::vector<std::string>{"1.5", "2", "null"}));
  EXPECT_EQ(Texts(*b.GetColumnByName("ok")), (std::vector<std::string>{"true", "false", "null"}));
  EXPECT_EQ(Texts(*b.GetColumnByName("label")), (std::vector<std::string>{"1", "2.5", "true"}));
  // One outcome per cast column: `already` (int64), `label` (promoted to varchar by decoding)
  // and `absent` are not reported.
  std::map<std::string, int64_t> nulled;
  for (const auto& outcome : outcomes) nulled[outcome.column] = outcome.nulled;
  EXPECT_EQ(nulled, (std::map<std::string, int64_t>{
                        {"ok", 1}, {"project_id", 0}, {"score", 1}, {"ts", 1}}));
}

TEST(TypedColumns, EverySpellingOfAPinnedNameIsCast) {
  auto typed = *TypedColumns::Make({{"seq", TypedKind::kBigint}});
  auto batch = Decode({R"({"Seq":"1"})", R"({"seq":"2"})"});
  std::vector<ColumnCoercion> outcomes;
  auto out = typed.Apply(batch, &outcomes);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->GetColumnByName("Seq")->type()->id(), arrow::Type::INT64);
  EXPECT_EQ((*out)->GetColumnByName("seq")->type()->id(), arrow::Type::INT64);
  EXPECT_EQ(outcomes.size(), 2u);
}

TEST(TypedColumns, BigintFromIntegralDoublesAndNumericTextOnly) {
  auto typed = *TypedColumns::Make({{"v", TypedKind::kBigint}});
  auto batch = Decode({R"({"v":"7"})", R"({"v":"3.0"})", R"({"v":"3.5"})", R"({"v":"x"})",
                       R"({"v":"9223372036854775807"})"});
  std::vector<ColumnCoercion> outcomes;
  auto out = typed.Apply(batch, &outcomes);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Texts(*(*out)->column(0)),
            (std::vector<std::string>{"7", "3", "null", "null", "9223372036854775807"}));
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].nulled, 2);
}

TEST(TypedColumns, UuidTakesMillpondsShapesAsArrowUuidsAndNullsEverythingElse) {
  auto typed = *TypedColumns::Make({{"u", TypedKind::kUuid}});
  auto batch =
      Decode({R"({"u":"0123ABCD-4567-89EF-0123-456789ABCDEF"})",
              R"({"u":"urn:uuid:0123abcd456789ef0123456789abcdef"})",
              R"({"u":"{0123abcd-4567-89ef-0123-456789abcdef}"})", R"({"u":null})",
              R"({"u":"URN:UUID:0123abcd-4567-89ef-0123-456789abcdef"})",
              R"({"u":"0x0123abcd456789ef0123456789abcdef"})", R"({"u":7})", R"({"u":true})"});
  std::vector<ColumnCoercion> outcomes;
  auto out = typed.Apply(batch, &outcomes);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto& column = *(*out)->column(0);
  ASSERT_TRUE(IsUuidArrowType(*column.type())) << column.type()->ToString();
  ASSERT_TRUE(IsUuidArrowType(*(*out)->schema()->field(0)->type()));
  std::vector<std::string> got;
  for (int64_t i = 0; i < column.length(); ++i) {
    got.push_back(column.IsNull(i) ? "null" : UuidAt(column, i).ToString());
  }
  const std::string c = "0123abcd-4567-89ef-0123-456789abcdef";
  EXPECT_EQ(got, (std::vector<std::string>{c, c, c, "null", "null", "null", "null", "null"}));
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].type, TypedKind::kUuid);
  EXPECT_EQ(outcomes[0].nulled, 4);  // the JSON null is not counted
  // Already uuid (a second Apply): left alone and not reported.
  ASSERT_TRUE(typed.Apply(*out, &outcomes).ok());
  EXPECT_TRUE(outcomes.empty());
}

}  // namespace
}  // namespace weir::records
