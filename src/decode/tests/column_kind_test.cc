#include "decode/column_kind.h"

#include <arrow/type.h>
#include <gtest/gtest.h>

namespace weir::decode {
namespace {

constexpr ColumnKind kAll[] = {ColumnKind::kNull, ColumnKind::kBoolean, ColumnKind::kInt64,
                               ColumnKind::kDouble, ColumnKind::kVarchar};

TEST(ColumnKindTest, JoinPromotesIntToDoubleAndEverythingElseToVarchar) {
  EXPECT_EQ(Join(ColumnKind::kInt64, ColumnKind::kDouble), ColumnKind::kDouble);
  EXPECT_EQ(Join(ColumnKind::kInt64, ColumnKind::kBoolean), ColumnKind::kVarchar);
  EXPECT_EQ(Join(ColumnKind::kDouble, ColumnKind::kVarchar), ColumnKind::kVarchar);
  EXPECT_EQ(Join(ColumnKind::kBoolean, ColumnKind::kDouble), ColumnKind::kVarchar);
  for (const ColumnKind kind : kAll) {
    EXPECT_EQ(Join(ColumnKind::kNull, kind), kind) << "null is neutral";
    EXPECT_EQ(Join(kind, kind), kind);
  }
}

TEST(ColumnKindTest, JoinIsCommutativeAndAssociativeSoOrderNeverMatters) {
  for (const ColumnKind a : kAll) {
    for (const ColumnKind b : kAll) {
      EXPECT_EQ(Join(a, b), Join(b, a));
      for (const ColumnKind c : kAll) EXPECT_EQ(Join(Join(a, b), c), Join(a, Join(b, c)));
    }
  }
}

TEST(ColumnKindTest, ArrowTypes) {
  EXPECT_TRUE(ArrowType(ColumnKind::kInt64)->Equals(arrow::int64()));
  EXPECT_TRUE(ArrowType(ColumnKind::kDouble)->Equals(arrow::float64()));
  EXPECT_TRUE(ArrowType(ColumnKind::kBoolean)->Equals(arrow::boolean()));
  EXPECT_TRUE(ArrowType(ColumnKind::kVarchar)->Equals(arrow::utf8()));
  EXPECT_TRUE(ArrowType(ColumnKind::kNull)->Equals(arrow::utf8()));
}

}  // namespace
}  // namespace weir::decode
