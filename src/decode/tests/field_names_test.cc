#include "decode/field_names.h"

#include <string>

#include <gtest/gtest.h>

namespace weir::decode {
namespace {

TEST(FieldNamesTest, AcceptsIdentifiers) {
  for (const char* name : {"a", "_", "event", "distinct_id", "A9_b", "_x1"}) {
    EXPECT_EQ(CheckFieldName(name, 63).problem, std::nullopt) << name;
    EXPECT_FALSE(CheckFieldName(name, 63).renamed) << name;
  }
}

TEST(FieldNamesTest, RejectsEachProblemByName) {
  EXPECT_EQ(CheckFieldName("utm-source", 63).problem, FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("9lives", 63).problem, FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("", 63).problem, FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("caf\xC3\xA9", 63).problem, FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("has space", 63).problem, FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName(std::string(64, 'a'), 63).problem, FieldNameProblem::kTooLong);
  EXPECT_EQ(CheckFieldName(std::string(63, 'a'), 63).problem, std::nullopt);
  EXPECT_EQ(CheckFieldName("_inserted_at", 63).problem, FieldNameProblem::kReserved);
  EXPECT_EQ(ToString(FieldNameProblem::kTooLong), "name_too_long");
}

TEST(FieldNamesTest, ReservedNamesAreReservedInAnyCase) {
  for (const char* name :
       {"_inserted_AT", "_INSERTED_AT", "_ducklake_internal_snapshot_id",
        "_DUCKLAKE_INTERNAL_ROW_ID", "_ducklake_internal", "_Ducklake_Internalx"}) {
    EXPECT_EQ(CheckFieldName(name, 63).problem, FieldNameProblem::kReserved) << name;
  }
  EXPECT_EQ(CheckFieldName("_ducklake_interna", 63).problem, std::nullopt);
  EXPECT_EQ(CheckFieldName("inserted_at", 63).problem, std::nullopt);
}

TEST(FieldNamesTest, DuckLakeInliningNamesAreRenamedWithinTheLengthLimit) {
  for (const char* name : {"row_id", "ROW_ID", "begin_snapshot", "End_Snapshot"}) {
    const auto check = CheckFieldName(name, 63);
    EXPECT_EQ(check.problem, std::nullopt) << name;
    EXPECT_TRUE(check.renamed) << name;
  }
  EXPECT_EQ(RenamedFieldName("Row_Id"), "Row_Id_");
  EXPECT_EQ(CheckFieldName("row_id", 6).problem, FieldNameProblem::kTooLong) << "row_id_ is 7";
  EXPECT_FALSE(CheckFieldName("row_ids", 63).renamed);
}

TEST(FieldNamesTest, NamesResolveCaseInsensitively) {
  EXPECT_TRUE(SameColumnName("Seq", "seq"));
  EXPECT_TRUE(SameColumnName("NAME", "name"));
  EXPECT_FALSE(SameColumnName("name", "names"));
  EXPECT_FALSE(SameColumnName("a_b", "a-b"));
  EXPECT_EQ(FoldName("UserId_9"), "userid_9");
}

}  // namespace
}  // namespace weir::decode
