#include "records/dataset_mapping.h"

#include <gtest/gtest.h>

namespace weir::records {
namespace {

std::string Refusal(const std::map<std::string, std::string>& columns) {
  auto mapping = CompileDatasetMapping(columns);
  EXPECT_FALSE(mapping.ok());
  if (mapping.ok()) return "";
  EXPECT_EQ(ClassOf(mapping.status()), ErrorClass::kFatal);
  return mapping.status().message();
}

TEST(DatasetMapping, CompilesEveryColumnInNameOrder) {
  auto mapping = CompileDatasetMapping({{"zeta", "a.b"}, {"alpha", "length(c)"}, {"Mid", "@"}});
  ASSERT_TRUE(mapping.ok()) << mapping.status().ToString();
  ASSERT_EQ((*mapping)->size(), 3u);
  EXPECT_EQ((*mapping)->column(0).column, "Mid");
  EXPECT_EQ((*mapping)->column(1).column, "alpha");
  EXPECT_EQ((*mapping)->column(2).column, "zeta");
  EXPECT_EQ((*mapping)->column(2).expression, "a.b");
}

TEST(DatasetMapping, RefusesWhatTheFieldNamePolicyWouldNotWriteAsIs) {
  EXPECT_NE(Refusal({{"utm-source", "a"}}).find("column \"utm-source\": not a column name"),
            std::string::npos);
  EXPECT_NE(Refusal({{std::string(64, 'k'), "a"}}).find("name_too_long"), std::string::npos);
  EXPECT_NE(Refusal({{"_Inserted_At", "a"}}).find("reserved_name"), std::string::npos);
  EXPECT_NE(Refusal({{"row_id", "a"}}).find("reserved by DuckLake"), std::string::npos);
  EXPECT_NE(Refusal({{"Team", "a"}, {"team", "b"}}).find("\"Team\" and \"team\" are the same"),
            std::string::npos);
  EXPECT_NE(Refusal({{"a", ""}}).find("column \"a\": empty expression"), std::string::npos);
}

TEST(DatasetMapping, RefusesAnExpressionThatDoesNotCompileNamingTheColumn) {
  const std::string bad = Refusal({{"ok", "a"}, {"user", "foo[?"}});
  EXPECT_NE(bad.find("mapping column user (foo[?)"), std::string::npos) << bad;
  const std::string unknown = Refusal({{"n", "no_such_function(a)"}});
  EXPECT_NE(unknown.find("mapping column n (no_such_function(a))"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("unknown"), std::string::npos) << unknown;
  const std::string arity = Refusal({{"n", "length(a, b)"}});
  EXPECT_NE(arity.find("mapping column n"), std::string::npos) << arity;
}

}  // namespace
}  // namespace weir::records
