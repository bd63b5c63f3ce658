// DatasetWriter against the scripted lake (lake/testing): every commit outcome the lake
// interface can give — committed, fenced, conflict, table changed, outcome unknown (landed or
// not), retriable and fatal errors, a stop during a backoff — and what must become of the flush
// and its files in each case. Exactly once is asserted on the fake's ledger and snapshots.
#include "ingest/dataset_writer.h"

#include <filesystem>
#include <set>
#include <thread>

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "harness_env.h"
#include "lake/testing/fake_table.h"
#include "writer_fixture.h"

namespace weir::ingest {
namespace {

using lake::CommitStatus;
using lake::testing::FakeCatalog;
using lake::testing::FakeStep;
using lake::testing::FakeTableState;
using std::chrono::milliseconds;

// `rows` rows: id (from `first`) and team ("a" for even ids, "b" for odd ones).
std::shared_ptr<arrow::RecordBatch> Batch(int64_t first, int64_t rows) {
  arrow::Int64Builder ids;
  arrow::StringBuilder teams;
  for (int64_t i = first; i < first + rows; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE(teams.Append(i % 2 == 0 ? "a" : "b").ok());
  }
  return arrow::RecordBatch::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("team", arrow::utf8())}),
      rows, {ids.Finish().ValueOrDie(), teams.Finish().ValueOrDie()});
}

SealedFlush Flush(int64_t start, int64_t end) {
  SealedFlush flush;
  flush.batch = Batch(start, end - start);
  flush.offsets = {{"t", 0, start, end}};
  flush.records = end - start;
  return flush;
}

class DatasetWriterTest : public WriterFixture {
 protected:
  void SetUp() override { SetUpWriter("dataset_writer_"); }
};

TEST_F(DatasetWriterTest, ACommittedFlushLandsOnceAndMovesTheLedger) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_FALSE(outcome.fenced);
  EXPECT_EQ(outcome.snapshot_id, 1);
  EXPECT_EQ(outcome.rows, 10);
  EXPECT_EQ(outcome.commit_attempts, 1);
  ASSERT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(events().ledger, (std::map<std::pair<std::string, int32_t>, int64_t>{{{"t", 0}, 10}}));
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
  // The table was created with the batch's columns and _inserted_at.
  std::vector<std::string> names;
  for (const auto& column : events().columns) names.push_back(column.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "team", "_inserted_at"}));
}

TEST_F(DatasetWriterTest, AFencedCommitDeletesItsFilesAndLandsNothing) {
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK(writer.Write(Flush(0, 10)).status());
  // Another writer took the partition and committed up to 25.
  events().ledger[{"t", 0}] = 25;
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(10, 20)));
  EXPECT_TRUE(outcome.fenced);
  EXPECT_EQ(outcome.orphaned_files, 1);
  EXPECT_EQ(outcome.rows, 0);
  EXPECT_EQ(events().commit_calls, 2) << "a fence is final: no retry";
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the fenced flush's file is deleted";
}

TEST_F(DatasetWriterTest, ConflictsAreRetriedWithTheSameFilesUntilTheCommitLands) {
  events().script = {FakeStep::kConflict, FakeStep::kConflict, FakeStep::kLand};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.conflicts, 2);
  EXPECT_EQ(outcome.commit_attempts, 3);
  ASSERT_EQ(events().requests.size(), 3u);
  for (const auto& request : events().requests) {
    EXPECT_EQ(request.writer, events().requests[0].writer);
    ASSERT_EQ(request.files.size(), 1u);
    EXPECT_EQ(request.files[0].info.path, events().requests[0].files[0].info.path);
  }
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterTest, ATableChangedReloadsTheTableAndWritesTheFlushAgain) {
  events().script = {FakeStep::kTableChanged};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.reloads, 1);
  EXPECT_EQ(events().opens, 2) << "the table was opened again";
  ASSERT_EQ(events().requests.size(), 2u);
  EXPECT_NE(events().requests[0].writer, events().requests[1].writer)
      << "files written again are a new commit";
  EXPECT_NE(events().requests[0].files[0].info.path, events().requests[1].files[0].info.path);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the first attempt's files are deleted";
}

TEST_F(DatasetWriterTest, AnUnknownOutcomeThatHadLandedIsFoundByReadingBackAndNotCommittedAgain) {
  events().script = {FakeStep::kLandUnknown};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.unknown_outcomes, 1);
  EXPECT_TRUE(outcome.already_committed);
  EXPECT_EQ(outcome.snapshot_id, 1);
  EXPECT_EQ(outcome.rows, 10);
  EXPECT_EQ(events().find_calls, 1);
  EXPECT_EQ(events().commit_calls, 1) << "resolved by reading back, not by committing again";
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(FilesOnDisk(), FilesLanded()) << "the landed files are kept";
  EXPECT_EQ(FilesOnDisk().size(), 1u);
}

TEST_F(DatasetWriterTest, AnUnknownOutcomeThatHadNotLandedIsCommittedAgainWithTheSameWriterId) {
  events().script = {FakeStep::kLostUnknown};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.unknown_outcomes, 1);
  EXPECT_FALSE(outcome.already_committed);
  EXPECT_EQ(events().find_calls, 1);
  ASSERT_EQ(events().requests.size(), 2u);
  EXPECT_EQ(events().requests[0].writer, events().requests[1].writer);
  EXPECT_EQ(events().requests[0].files[0].info.path, events().requests[1].files[0].info.path);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(events().LandedRows(), 10);
  EXPECT_EQ(events().ledger.at(std::pair<std::string, int32_t>("t", 0)), 10);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterTest, AReadBackThatFailsRetriablyIsRetried) {
  events().script = {FakeStep::kLandUnknown};
  events().find_errors = {ClassifiedError(ErrorClass::kRetriable, "fake", "down", "down")};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_TRUE(outcome.already_committed);
  EXPECT_EQ(events().find_calls, 2);
  EXPECT_EQ(events().commit_calls, 1);
  EXPECT_EQ(events().snapshots.size(), 1u);
}

TEST_F(DatasetWriterTest, AnUnknownOutcomeNeverResolvedFailsTheFlushAndKeepsItsFiles) {
  events().script = {FakeStep::kLandUnknown};
  for (int i = 0; i < 10; ++i) {
    events().find_errors.push_back(
        ClassifiedError(ErrorClass::kRetriable, "fake", "down", "catalog down"));
  }
  DatasetWriter writer(config_, catalog_.get());
  const auto outcome = writer.Write(Flush(0, 10));
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("retry budget of 3 attempts spent"), std::string::npos)
      << outcome.status().ToString();
  EXPECT_EQ(events().find_calls, 4);
  EXPECT_EQ(events().commit_calls, 1);
  // A snapshot references the file (the commit had landed): it must not be deleted.
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
  EXPECT_EQ(FilesOnDisk().size(), 1u);
}

TEST_F(DatasetWriterTest, RetriableErrorsAreRetriedUpToTheBudgetAndThenFailWithNothingLanded) {
  events().script = {FakeStep::kRetriableError, FakeStep::kRetriableError,
                     FakeStep::kRetriableError, FakeStep::kRetriableError};
  DatasetWriter writer(config_, catalog_.get());
  const auto outcome = writer.Write(Flush(0, 10));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(ClassOf(outcome.status()), ErrorClass::kRetriable);
  EXPECT_NE(outcome.status().message().find("retry budget of 3 attempts spent"), std::string::npos)
      << outcome.status().ToString();
  EXPECT_EQ(events().commit_calls, 4);
  EXPECT_TRUE(events().snapshots.empty());
  EXPECT_TRUE(FilesOnDisk().empty()) << "no attempt landed: the files are deleted";
}

TEST_F(DatasetWriterTest, ARetriableErrorThenSuccessLandsOnce) {
  events().script = {FakeStep::kRetriableError, FakeStep::kLand};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.commit_attempts, 2);
  EXPECT_EQ(events().snapshots.size(), 1u);
  EXPECT_EQ(FilesOnDisk(), FilesLanded());
}

TEST_F(DatasetWriterTest, AFatalErrorIsNotRetried) {
  events().script = {FakeStep::kFatalError};
  DatasetWriter writer(config_, catalog_.get());
  const auto outcome = writer.Write(Flush(0, 10));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(ClassOf(outcome.status()), ErrorClass::kFatal);
  EXPECT_EQ(outcome.status().message(), "dataset events: permission denied");
  EXPECT_EQ(events().commit_calls, 1);
}

TEST_F(DatasetWriterTest, AStopRequestCutsABackoffShortAndFailsTheFlushWithNothingLanded) {
  config_.backoff = BackoffPolicy{};  // 1 s, then 2 s, ...: the stop must not wait for them
  config_.commit_max_attempts = 10;
  events().script = {FakeStep::kRetriableError, FakeStep::kLand};
  std::stop_source stop;
  DatasetWriter writer(config_, catalog_.get(), stop.get_token());
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    stop.request_stop();
  });
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = writer.Write(Flush(0, 10));
  const auto took = std::chrono::steady_clock::now() - started;
  stopper.join();
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("stopping"), std::string::npos)
      << outcome.status().ToString();
  EXPECT_EQ(events().commit_calls, 1) << "no attempt after the stop";
  EXPECT_LT(took, milliseconds(900)) << "the first backoff alone is at least 1 s";
  EXPECT_TRUE(events().snapshots.empty());
}

TEST_F(DatasetWriterTest, LostRacesAreStillRetriedAfterAStop) {
  // A drain at SIGTERM must not fail because another writer of the catalog committed first.
  events().script = {FakeStep::kConflict, FakeStep::kLand};
  std::stop_source stop;
  stop.request_stop();
  DatasetWriter writer(config_, catalog_.get(), stop.get_token());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.conflicts, 1);
  EXPECT_EQ(events().snapshots.size(), 1u);
}

TEST_F(DatasetWriterTest, AColumnTheCatalogRefusesIsLeftOutAndItsValuesCounted) {
  events().refused_names = {"team"};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(outcome.fields_dropped, (std::map<std::string, int64_t>{{"refused_by_catalog", 10}}));
  std::vector<std::string> names;
  for (const auto& column : events().columns) names.push_back(column.name);
  EXPECT_EQ(names, (std::vector<std::string>{"_inserted_at", "id"}));
  EXPECT_EQ(events().LandedRows(), 10);
}

TEST_F(DatasetWriterTest, ANarrowIntegerColumnIsWidenedBeforeBigintValuesLand) {
  auto& state = events();
  state.columns = {{1, "id", lake::ColumnType::kInteger},
                   {2, "_inserted_at", lake::ColumnType::kTimestampTz}};
  state.next_column_id = 3;
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 10)));
  EXPECT_EQ(state.columns[0].type, lake::ColumnType::kBigint);
  EXPECT_EQ(outcome.values_nulled, 0);
  ASSERT_EQ(state.snapshots.size(), 1u);
  const auto& stats = state.snapshots[0].files[0].info.columns;
  const auto id =
      std::find_if(stats.begin(), stats.end(), [](const auto& c) { return c.field_id == 1; });
  ASSERT_NE(id, stats.end());
  EXPECT_EQ(id->value_count - id->null_count, 10) << "the ids were written, not nulled";
}

TEST_F(DatasetWriterTest, RowsAreSplitByTheTablesPartitionValues) {
  config_.partitioning = {{"team", {lake::TransformKind::kIdentity}}};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(Flush(0, 9)));
  EXPECT_EQ(outcome.files, 2);
  ASSERT_EQ(events().snapshots.size(), 1u);
  std::map<std::string, int64_t> rows_of;
  for (const auto& file : events().snapshots[0].files) {
    ASSERT_EQ(file.partition_values.size(), 1u);
    rows_of[file.partition_values[0].value_or("null")] += file.info.rows;
  }
  EXPECT_EQ(rows_of, (std::map<std::string, int64_t>{{"a", 5}, {"b", 4}}));
}

TEST_F(DatasetWriterTest, RejectsCommitInTheSameSnapshotAsTheRows) {
  SealedFlush flush = Flush(0, 10);
  RejectRecord reject;
  reject.topic = "t";
  reject.offset = 10;
  reject.payload = "{oops";
  reject.reason = "invalid_json";
  flush.rejects = {reject};
  flush.offsets = {{"t", 0, 0, 11}};
  DatasetWriter writer(config_, catalog_.get());
  ASSERT_OK_AND_ASSIGN(const FlushOutcome outcome, writer.Write(flush));
  EXPECT_EQ(outcome.rejects, 1);
  ASSERT_EQ(events().snapshots.size(), 1u);
  ASSERT_EQ(events().snapshots[0].companion_files.size(), 1u);
  EXPECT_EQ(events().snapshots[0].companion_files[0].info.rows, 1);
  EXPECT_TRUE(catalog_->exists("main.events_rejects"));
}

}  // namespace
}  // namespace weir::ingest
