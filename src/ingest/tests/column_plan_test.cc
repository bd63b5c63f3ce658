#include "ingest/column_plan.h"

#include <gtest/gtest.h>

namespace weir::ingest {
namespace {

using lake::ColumnType;

std::shared_ptr<arrow::Schema> Batch(
    std::vector<std::pair<std::string, std::shared_ptr<arrow::DataType>>> fields) {
  std::vector<std::shared_ptr<arrow::Field>> out;
  for (auto& [name, type] : fields) out.push_back(arrow::field(name, type));
  return arrow::schema(out);
}

TEST(ColumnPlanTest, SpellingsResolveToTheLiveColumnOfTheirName) {
  const std::vector<lake::Column> live = {{1, "name", ColumnType::kVarchar},
                                          {2, "_inserted_at", ColumnType::kTimestampTz},
                                          {3, "Score", ColumnType::kDouble}};
  const auto batch = Batch({{"NAME", arrow::utf8()},
                            {"score", arrow::int64()},
                            {"name", arrow::utf8()},
                            {"SCORE", arrow::utf8()}});
  const ColumnPlan plan = PlanColumns(*batch, live, {});
  EXPECT_EQ(plan.sources, (std::vector<std::vector<int>>{{0, 2}, {}, {1, 3}}));
  EXPECT_TRUE(plan.missing.empty());
  EXPECT_TRUE(plan.refused.empty());
}

TEST(ColumnPlanTest, NewSpellingsOfOneNameBecomeOneColumnOfAJoinedType) {
  const auto batch = Batch({{"Seq", arrow::int64()},
                            {"v", arrow::boolean()},
                            {"seq", arrow::float64()},
                            {"V", arrow::int64()},
                            {"row_id_", arrow::utf8()}});
  const ColumnPlan plan = PlanColumns(*batch, {}, {"row_id_"});
  ASSERT_EQ(plan.missing.size(), 2u);
  EXPECT_EQ(plan.missing[0].name, "Seq");
  EXPECT_EQ(plan.missing[0].type, ColumnType::kDouble);
  EXPECT_EQ(plan.missing[0].fields, (std::vector<int>{0, 2}));
  EXPECT_EQ(plan.missing[1].name, "v");
  EXPECT_EQ(plan.missing[1].type, ColumnType::kVarchar);
  EXPECT_EQ(plan.missing[1].fields, (std::vector<int>{1, 3}));
  EXPECT_EQ(plan.refused, (std::vector<int>{4})) << "a refused name is never asked for again";
}

TEST(ColumnPlanTest, JoinedTypesFollowTheDecodersPromotion) {
  EXPECT_EQ(JoinColumnTypes(ColumnType::kBigint, ColumnType::kBigint), ColumnType::kBigint);
  EXPECT_EQ(JoinColumnTypes(ColumnType::kBigint, ColumnType::kDouble), ColumnType::kDouble);
  EXPECT_EQ(JoinColumnTypes(ColumnType::kDouble, ColumnType::kBigint), ColumnType::kDouble);
  EXPECT_EQ(JoinColumnTypes(ColumnType::kBoolean, ColumnType::kBigint), ColumnType::kVarchar);
  EXPECT_EQ(JoinColumnTypes(ColumnType::kVarchar, ColumnType::kDouble), ColumnType::kVarchar);
}

}  // namespace
}  // namespace weir::ingest
