// RoutedWriter against the scripted lake (lake/testing): a flush's rows split over routed
// tables that commit first, each with its own ledger, and the dataset's table last; a crash
// between them, a replay with other flush boundaries, the cap and the fence of the gap
// neither lose nor duplicate a row. Exactly once is asserted on the ids in the files landed.
#include "ingest/routed_writer.h"

#include <filesystem>
#include <set>

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "harness_env.h"
#include "lake/testing/fake_table.h"
#include "writer_fixture.h"

namespace weir::ingest {
namespace {

using lake::testing::FakeCatalog;
using lake::testing::FakeStep;
using lake::testing::FakeTableState;
using std::chrono::milliseconds;
using Ledger = std::map<std::pair<std::string, int32_t>, int64_t>;

// The event of offset i: a, b, c in turn, and every 7th offset none (the fallback).
std::optional<std::string> EventOf(int64_t offset) {
  if (offset % 7 == 6) return std::nullopt;
  return std::string(1, static_cast<char>('a' + offset % 3));
}

// A flush of partition 0 covering [start, end): one row per offset, id = offset.
SealedFlush Flush(int64_t start, int64_t end) {
  arrow::Int64Builder ids;
  arrow::StringBuilder events;
  SealedFlush flush;
  for (int64_t offset = start; offset < end; ++offset) {
    EXPECT_TRUE(ids.Append(offset).ok());
    const auto event = EventOf(offset);
    EXPECT_TRUE((event ? events.Append(*event) : events.AppendNull()).ok());
    flush.row_partitions.push_back(0);
    flush.row_offsets.push_back(offset);
  }
  auto id_array = ids.Finish().ValueOrDie();
  auto event_array = events.Finish().ValueOrDie();
  flush.batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("event", arrow::utf8())}),
      id_array->length(), {id_array, event_array});
  flush.offsets = {{"t", 0, start, end}};
  flush.records = end - start;
  return flush;
}

class RoutedWriterTest : public WriterFixture {
 protected:
  void SetUp() override {
    SetUpWriter("routed_writer_");
    route_.rule.route = records::RouteTemplate{"events_", "event", ""};
    route_.rule.fallback = "events";
    route_.max_tables = 3;
  }

  FakeTableState& table(const std::string& name) { return catalog_->state("main." + name); }

  // The ids in every file the table's landed snapshots reference, sorted.
  std::vector<int64_t> Ids(const std::string& name) {
    if (!catalog_->exists("main." + name)) return {};
    return Sorted(LandedInt64s(table(name), "id"));
  }

  // The ids of [start, end) whose event routes to `event` (nullopt: the fallback).
  static std::vector<int64_t> Expected(int64_t start, int64_t end,
                                       const std::optional<std::string>& event) {
    std::vector<int64_t> out;
    for (int64_t i = start; i < end; ++i) {
      if (EventOf(i) == event) out.push_back(i);
    }
    return out;
  }

  void ExpectExactlyOnce(int64_t end) {
    EXPECT_EQ(Ids("events_a"), Expected(0, end, "a"));
    EXPECT_EQ(Ids("events_b"), Expected(0, end, "b"));
    EXPECT_EQ(Ids("events_c"), Expected(0, end, "c"));
    EXPECT_EQ(Ids("events"), Expected(0, end, std::nullopt));
  }

  RouteConfig route_;
};

TEST_F(RoutedWriterTest, EachTableCommitsItsRowsWithItsOwnLedgerAndTheDatasetTableLast) {
  RoutedWriter writer(config_, route_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const RoutedOutcome outcome, writer.Write(Flush(0, 20)));
  EXPECT_FALSE(outcome.total.fenced);
  EXPECT_EQ(outcome.total.rows, 20);
  EXPECT_EQ(outcome.routed_rows.size(), 3u);
  EXPECT_EQ(outcome.fallback_reasons, (std::map<std::string, int64_t>{{"field_missing", 2}}));
  ExpectExactlyOnce(20);
  for (const char* name : {"events_a", "events_b", "events_c", "events"}) {
    EXPECT_EQ(table(name).ledger, (Ledger{{{"t", 0}, 20}})) << name;
  }
  for (const char* name : {"events_a", "events_b", "events_c"}) {
    EXPECT_LT(table(name).snapshots.back().sequence, table("events").snapshots.back().sequence)
        << name << " lands before the dataset's table";
  }
  // A routed table keeps only the columns its rows carry values for.
  std::vector<std::string> names;
  for (const auto& column : table("events_a").columns) names.push_back(column.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "event", "_inserted_at"}));
  names.clear();
  for (const auto& column : table("events").columns) names.push_back(column.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "_inserted_at"}))
      << "the fallback rows' event is null";
}

TEST_F(RoutedWriterTest, ACrashBeforeTheDatasetTableCommitsIsReplayedWithOtherBoundariesExactly) {
  {
    // The process dies after the routed tables landed, before the dataset's table did.
    table("events").script = {FakeStep::kFatalError};
    RoutedWriter writer(config_, route_, catalog_.get());
    EXPECT_FALSE(writer.Write(Flush(0, 20)).ok());
    EXPECT_EQ(Ids("events_a"), Expected(0, 20, "a"));
    EXPECT_TRUE(table("events").snapshots.empty());
  }
  // The restart resumes at the dataset's ledger (none: offset 0) and cuts flushes elsewhere.
  RoutedWriter restarted(config_, route_, catalog_.get());
  ASSERT_OK(restarted.Write(Flush(0, 13)).status());
  ASSERT_OK_AND_ASSIGN(const RoutedOutcome outcome, restarted.Write(Flush(13, 30)));
  EXPECT_EQ(outcome.routed_rows.at("events_a"), 2) << "21 and 24: only the rows beyond its ledger";
  ExpectExactlyOnce(30);
  for (const char* name : {"events_a", "events_b", "events_c", "events"}) {
    EXPECT_EQ(table(name).ledger, (Ledger{{{"t", 0}, 30}})) << name;
  }
}

TEST_F(RoutedWriterTest, AFlushWhoseRowsMissATableLeavesItsLedgerWhereItStands) {
  RoutedWriter writer(config_, route_, catalog_.get());
  ASSERT_OK(writer.Write(Flush(0, 20)).status());
  // Offsets 20 (c), 21 (a): no row for events_b.
  ASSERT_OK(writer.Write(Flush(20, 22)).status());
  EXPECT_EQ(table("events_b").ledger, (Ledger{{{"t", 0}, 20}}));
  // The next row of events_b claims [20, 25) from where its ledger stands.
  ASSERT_OK(writer.Write(Flush(22, 25)).status());
  EXPECT_EQ(table("events_b").ledger, (Ledger{{{"t", 0}, 25}}));
  ExpectExactlyOnce(25);
}

TEST_F(RoutedWriterTest, AGapBelowAFlushIsNotClaimedWhileTheDatasetLedgerLagsBehind) {
  RoutedWriter writer(config_, route_, catalog_.get());
  ASSERT_OK(writer.Write(Flush(0, 20)).status());
  ASSERT_OK(writer.Write(Flush(20, 22)).status());  // events_b stays at 20
  // A zombie's queued flush [30, 40) while the dataset's ledger is at 22: not claimable.
  ASSERT_OK_AND_ASSIGN(const RoutedOutcome outcome, writer.Write(Flush(30, 40)));
  EXPECT_TRUE(outcome.total.fenced);
  EXPECT_EQ(table("events_b").ledger, (Ledger{{{"t", 0}, 20}}));
  EXPECT_EQ(table("events").ledger, (Ledger{{{"t", 0}, 22}}));
  ExpectExactlyOnce(22);
}

TEST_F(RoutedWriterTest, NewNamesBeyondTheCapGoToTheFallbackButExistingTablesAreAlwaysUsed) {
  route_.max_tables = 2;
  {
    RoutedWriter writer(config_, route_, catalog_.get());
    ASSERT_OK_AND_ASSIGN(const RoutedOutcome outcome, writer.Write(Flush(0, 20)));
    EXPECT_EQ(outcome.routed_rows.size(), 2u);
    EXPECT_FALSE(catalog_->exists("main.events_c"));
    // c: 2, 5, 8, 11, 14, 17.
    EXPECT_EQ(outcome.fallback_reasons.at("over_cap"), 6);
    EXPECT_EQ(Ids("events_a"), Expected(0, 20, "a"));
  }
  // Another writer made events_c meanwhile: a restarted writer beyond its cap still uses it.
  RouteConfig roomy = route_;
  roomy.max_tables = 3;
  RoutedWriter other(config_, roomy, catalog_.get());
  ASSERT_OK(other.Write(Flush(20, 27)).status());  // 23 is c
  ASSERT_TRUE(catalog_->exists("main.events_c"));
  RoutedWriter restarted(config_, route_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const RoutedOutcome outcome, restarted.Write(Flush(27, 35)));
  EXPECT_EQ(outcome.routed_rows.size(), 3u);
  EXPECT_EQ(outcome.fallback_reasons.count("over_cap"), 0u);
}

}  // namespace
}  // namespace weir::ingest
