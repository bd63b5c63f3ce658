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

RejectRecord RejectAt(int32_t partition, int64_t offset) {
  RejectRecord r;
  r.topic = "t";
  r.partition = partition;
  r.offset = offset;
  return r;
}

std::vector<int64_t> Offsets(const std::vector<RejectRecord>& rejects) {
  std::vector<int64_t> out;
  for (const auto& r : rejects) out.push_back(r.offset);
  return out;
}

bool SameRanges(const std::vector<lake::OffsetRange>& a, const std::vector<lake::OffsetRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].topic != b[i].topic || a[i].partition != b[i].partition || a[i].start != b[i].start ||
        a[i].end != b[i].end) {
      return false;
    }
  }
  return true;
}

TEST(PlanRejectsCommitTest, WithoutALedgerEveryRejectIsOwedAndTheLedgerStartsAtTheFlush) {
  const auto plan =
      PlanRejectsCommit({RejectAt(0, 3), RejectAt(1, 40)}, {{"t", 0, 0, 10}, {"t", 1, 30, 50}}, {});
  EXPECT_EQ(Offsets(plan.rejects), (std::vector<int64_t>{3, 40}));
  EXPECT_TRUE(SameRanges(plan.offsets, {{"t", 0, 0, 10}, {"t", 1, 30, 50}}));
  EXPECT_TRUE(plan.needs_data_ledger.empty());
}

TEST(PlanRejectsCommitTest, RejectsBelowTheLedgerAreInTheTableAlready) {
  // A crash after the rejects of [0, 7) landed and before the rows did; the retried flush
  // covers [0, 10).
  const auto plan = PlanRejectsCommit({RejectAt(0, 3), RejectAt(0, 6), RejectAt(0, 7)},
                                      {{"t", 0, 0, 10}}, {{"t", {{0, 7}}}});
  EXPECT_EQ(Offsets(plan.rejects), (std::vector<int64_t>{7}));
  EXPECT_TRUE(SameRanges(plan.offsets, {{"t", 0, 7, 10}}));
  EXPECT_TRUE(plan.needs_data_ledger.empty());
}

TEST(PlanRejectsCommitTest, AFlushWhollyBelowTheLedgerOwesNothing) {
  const auto plan = PlanRejectsCommit({RejectAt(0, 3)}, {{"t", 0, 0, 5}}, {{"t", {{0, 5}}}});
  EXPECT_TRUE(plan.rejects.empty());
  EXPECT_TRUE(plan.offsets.empty());
}

TEST(PlanRejectsCommitTest, ALedgerBelowTheFlushNeedsTheRowsLedgerToHaveReachedIt) {
  // The flushes of [5, 20) had no rejects: the rejects ledger stayed at 5.
  const auto plan = PlanRejectsCommit({RejectAt(0, 25)}, {{"t", 0, 20, 30}, {"t", 2, 0, 4}},
                                      {{"t", {{0, 5}, {2, 0}}}, {"other", {{2, 99}}}});
  EXPECT_EQ(Offsets(plan.rejects), (std::vector<int64_t>{25}));
  EXPECT_TRUE(SameRanges(plan.offsets, {{"t", 0, 5, 30}, {"t", 2, 0, 4}}));
  EXPECT_TRUE(SameRanges(plan.needs_data_ledger, {{"t", 0, 20, 30}}));
}

}  // namespace
}  // namespace weir::ingest
