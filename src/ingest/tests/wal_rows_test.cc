#include "ingest/wal_rows.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "ingest/tests/writer_fixture.h"

namespace weir::ingest {
namespace {

std::shared_ptr<arrow::RecordBatch> Ids(std::vector<std::string> columns) {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (const auto& name : columns) {
    arrow::Int64Builder builder;
    EXPECT_TRUE(builder.AppendValues({1, 2, 3}).ok());
    fields.push_back(arrow::field(name, arrow::int64()));
    arrays.push_back(builder.Finish().ValueOrDie());
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), 3, arrays);
}

class WalTableRowsTest : public WriterFixture {
 protected:
  void SetUp() override { SetUpWriter("wal_rows_"); }
};

TEST_F(WalTableRowsTest, ATableChangedUnderASchemaChangeIsReopenedAndPlannedAgain) {
  WalTableRows rows(config_, catalog_.get());
  int64_t nulled = 0;
  ASSERT_TRUE(rows.Shape(*Ids({"id"}), 1, &nulled).ok());
  const int opens = events().opens;
  events().changed_evolves = 2;  // another writer changes the table twice in a row
  auto shaped = rows.Shape(*Ids({"id", "extra"}), 2, &nulled);
  ASSERT_TRUE(shaped.ok()) << shaped.status().ToString();
  EXPECT_EQ(events().opens, opens + 2);  // reopened after each change
  ASSERT_EQ(shaped->size(), 1u);
  EXPECT_NE((*shaped)[0].rows->schema()->GetFieldIndex("extra"), -1);
  EXPECT_TRUE(std::any_of(events().columns.begin(), events().columns.end(),
                          [](const lake::Column& c) { return c.name == "extra"; }));
}

TEST_F(WalTableRowsTest, ATableThatKeepsChangingIsARetriableErrorAfterTheLastReload) {
  WalTableRows rows(config_, catalog_.get());
  int64_t nulled = 0;
  ASSERT_TRUE(rows.Shape(*Ids({"id"}), 1, &nulled).ok());
  events().dropped = true;
  auto shaped = rows.Shape(*Ids({"id", "extra"}), 2, &nulled);
  ASSERT_FALSE(shaped.ok());
  EXPECT_EQ(GetErrorDetail(shaped.status())->code(), "table_changed");
  EXPECT_EQ(ClassOf(shaped.status()), ErrorClass::kRetriable);
  EXPECT_NE(shaped.status().message().find("changed under every one of 6 schema changes"),
            std::string::npos)
      << shaped.status().ToString();
}

}  // namespace
}  // namespace weir::ingest
