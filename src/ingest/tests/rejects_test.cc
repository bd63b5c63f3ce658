#include "ingest/rejects.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

namespace weir::ingest {
namespace {

TEST(SafeTextTest, KeepsValidUtf8AndEscapesOtherBytes) {
  EXPECT_EQ(SafeText("caf\xC3\xA9", 100), "caf\xC3\xA9");
  EXPECT_EQ(SafeText("a\xFF"
                     "b",
                     100),
            "a\\xFFb");
  EXPECT_EQ(SafeText("\xC3", 100), "\\xC3");                    // truncated sequence
  EXPECT_EQ(SafeText("\xED\xA0\x80", 100), "\\xED\\xA0\\x80");  // a surrogate is not UTF-8
  EXPECT_EQ(SafeText("\xC0\xAF", 100), "\\xC0\\xAF");           // overlong
}

TEST(SafeTextTest, TruncatesWithoutSplittingCharactersOrEscapes) {
  EXPECT_EQ(SafeText("abc\xC3\xA9", 4), "abc");
  EXPECT_EQ(SafeText("ab\xFF", 4), "ab");
  EXPECT_EQ(SafeText("abcdef", 0), "");
}

TEST(RejectsBatchTest, ColumnsFollowTheTableWithFieldIds) {
  std::vector<lake::Column> table;
  int64_t id = 1;
  for (const auto& [name, type] : RejectsColumns()) table.push_back({id++, name, type});
  RejectRecord r;
  r.topic = "t";
  r.partition = 3;
  r.offset = 17;
  r.payload = "[1]";
  r.payload_bytes = 3;
  r.reason = "not_an_object";
  r.error = "not an object";
  r.received_at_us = 5;
  auto batch = RejectsBatch({r}, table).ValueOrDie();
  ASSERT_EQ(batch->num_columns(), 9);
  EXPECT_EQ(batch->num_rows(), 1);
  EXPECT_EQ(batch->schema()->field(2)->name(), "offset");
  EXPECT_EQ(batch->schema()->field(2)->metadata()->Get("PARQUET:field_id").ValueOrDie(), "3");
  EXPECT_TRUE(batch->GetColumnByName("key")->IsNull(0));
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*batch->GetColumnByName("offset")).Value(0), 17);
}

}  // namespace
}  // namespace weir::ingest
