#include "decode/field_names.h"

#include <string>

#include <gtest/gtest.h>

namespace weir::decode {
namespace {

TEST(FieldNamesTest, AcceptsIdentifiers) {
  for (const char* name : {"a", "_", "event", "distinct_id", "A9_b", "_x1"}) {
    EXPECT_EQ(CheckFieldName(name, 63), std::nullopt) << name;
  }
}

TEST(FieldNamesTest, RejectsEachProblemByName) {
  EXPECT_EQ(CheckFieldName("utm-source", 63), FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("9lives", 63), FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("", 63), FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("caf\xC3\xA9", 63), FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName("has space", 63), FieldNameProblem::kInvalidCharacters);
  EXPECT_EQ(CheckFieldName(std::string(64, 'a'), 63), FieldNameProblem::kTooLong);
  EXPECT_EQ(CheckFieldName(std::string(63, 'a'), 63), std::nullopt);
  EXPECT_EQ(CheckFieldName("_inserted_at", 63), FieldNameProblem::kReserved);
  EXPECT_EQ(ToString(FieldNameProblem::kTooLong), "name_too_long");
}

}  // namespace
}  // namespace weir::decode
