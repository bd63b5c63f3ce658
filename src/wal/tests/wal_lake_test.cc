// The WAL's segments, uploaded and committed by WalCommitter into real tables — DuckLake (SQLite
// catalog, local data path, read back by DuckDB's own ducklake extension) and Iceberg (the
// embedded SQL catalog, checked through the table's own inspection): the files the WAL writes
// are lake data files, the ranges move the ledger, and recovery's probe sees the files in the
// table afterwards.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/sql_quote.h"
#include "harness_env.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "wal/committer.h"
#include "wal/lake_probe.h"
#include "wal/segment_metadata.h"
#include "wal/segment_rotator.h"
#include "wal/wal_directory.h"

namespace weir::wal {
namespace {

constexpr int64_t kInsertedAt = 1710000000123456;

std::shared_ptr<arrow::RecordBatch> Batch(const lake::Table& table, int64_t first, int64_t count) {
  arrow::Int64Builder ids;
  arrow::StringBuilder teams;
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE(teams.Append("t" + std::to_string(i % 3)).ok());
    EXPECT_TRUE(at.Append(kInsertedAt).ok());
  }
  const std::map<std::string, std::shared_ptr<arrow::Array>> by_name = {
      {"id", *ids.Finish()}, {"team", *teams.Finish()}, {"_inserted_at", *at.Finish()}};
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  std::vector<int> field_ids;
  for (const auto& column : table.columns()) {
    auto array = by_name.at(column.name);
    fields.push_back(arrow::field(column.name, array->type()));
    arrays.push_back(array);
    field_ids.push_back(static_cast<int>(column.id));
  }
  auto schema = *files::WithFieldIds(*arrow::schema(fields), field_ids);
  return arrow::RecordBatch::Make(schema, count, arrays);
}

// Rotates 1,400 rows of two partitions into three ready files under `dir`/wal, uploads and
// commits them into `table` in one commit; returns the files as they were before the commit.
void RotateAndCommit(lake::Table& table, const std::filesystem::path& dir,
                     std::vector<SegmentEntry>* files) {
  const std::string wal = (dir / "wal").string();
  std::filesystem::create_directories(wal);
  const ManualClock clock(
      std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000)));
  SegmentRotator rotator(wal, {}, {}, {}, clock, 3);
  // Partition 0: two rotations (offsets 0-599, 600-999); partition 1: one (0-399).
  ASSERT_OK(rotator.Assign("topic-a", 0, 0));
  ASSERT_OK(rotator.Assign("topic-a", 1, 0));
  const auto meta = PartitionMetadata({});
  ASSERT_OK_AND_ASSIGN(auto done,
                       rotator.Append("topic-a", 0, {{"", meta, Batch(table, 0, 600)}}, 599));
  ASSERT_OK_AND_ASSIGN(auto r1, rotator.Rotate("topic-a", 0));
  ASSERT_OK_AND_ASSIGN(done,
                       rotator.Append("topic-a", 0, {{"", meta, Batch(table, 600, 400)}}, 999));
  ASSERT_OK_AND_ASSIGN(done,
                       rotator.Append("topic-a", 1, {{"", meta, Batch(table, 1000, 400)}}, 399));
  ASSERT_OK_AND_ASSIGN(auto all, rotator.RotateAll());
  EXPECT_EQ(all.size(), 2u);
  ASSERT_OK_AND_ASSIGN(const auto before, ListSegments(wal));
  EXPECT_EQ(before.size(), 3u);

  WalCommitter committer(wal, &table, "test-host/1", clock, 5);
  ASSERT_OK_AND_ASSIGN(const auto upload, committer.Upload());
  EXPECT_EQ(upload.uploaded, 3);
  EXPECT_EQ(upload.failed, 0) << upload.first_error.ToString();
  ASSERT_OK_AND_ASSIGN(const auto result,
                       committer.CommitOnce({{{"topic-a", 0}, 0}, {{"topic-a", 1}, 0}}));
  EXPECT_TRUE(result.committed) << lake::ToString(result.status);
  EXPECT_EQ(result.files, 3);
  EXPECT_EQ(result.rows, 1400);
  ASSERT_OK_AND_ASSIGN(const auto ledger, table.ReadLedger("topic-a"));
  EXPECT_EQ(ledger, (std::map<int32_t, int64_t>{{0, 1000}, {1, 400}}));
  ASSERT_OK_AND_ASSIGN(const auto after, ListSegments(wal));
  EXPECT_TRUE(after.empty());

  *files = before;
}

TEST(WalDuckLakeTest, RotatedSegmentsCommitIntoDuckLakeAndDuckDbReadsThemExactly) {
  const auto dir = weir::testing::TestOutputDir("wal_ducklake");
  std::filesystem::remove_all(dir);
  lake::ducklake::CatalogConfig config;
  config.kind = lake::ducklake::SqlDialect::kSqlite;
  config.data_path = (dir / "data").string();
  config.sqlite_path = (dir / "catalog.sqlite").string();
  config.extension_directory = lake::DefaultExtensionDirectory();
  ASSERT_OK_AND_ASSIGN(auto catalog, lake::ducklake::DuckLakeCatalog::Open(config));
  ASSERT_OK_AND_ASSIGN(
      auto opened,
      catalog->OpenTable(lake::TableSpec{"main",
                                         "events",
                                         {{"id", lake::ColumnType::kBigint},
                                          {"team", lake::ColumnType::kVarchar},
                                          {"_inserted_at", lake::ColumnType::kTimestampTz}},
                                         {},
                                         {}},
                         lake::OpenMode::kOpenOrCreate));
  ASSERT_EQ(opened.status, lake::OpenStatus::kOpened);
  lake::Table& table = *opened.table;
  std::vector<SegmentEntry> before;
  ASSERT_NO_FATAL_FAILURE(RotateAndCommit(table, dir, &before));
  ASSERT_EQ(before.size(), 3u);

  // DuckDB reads exactly the rows, through the files the WAL wrote.
  ASSERT_OK_AND_ASSIGN(auto engine, lake::DuckDbEngine::Open({lake::DefaultExtensionDirectory(),
                                                              {"ducklake", "sqlite_scanner"}}));
  ASSERT_OK(engine->Run("ATTACH " + QuoteLiteral("ducklake:sqlite:" + config.sqlite_path) +
                        " AS lake (READ_ONLY)"));
  ASSERT_OK_AND_ASSIGN(const auto rows,
                       engine->Query("SELECT count(*), count(DISTINCT id), sum(id), "
                                     "count(DISTINCT team), min(_inserted_at) IS NOT NULL "
                                     "FROM lake.main.events"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].value_or(""), "1400");
  EXPECT_EQ(rows[0][1].value_or(""), "1400");
  EXPECT_EQ(rows[0][2].value_or(""), std::to_string(1399 * 1400 / 2));
  EXPECT_EQ(rows[0][3].value_or(""), "3");
  EXPECT_EQ(rows[0][4].value_or(""), "true");
  ASSERT_OK_AND_ASSIGN(const auto names,
                       engine->Query("SELECT count(*) FROM ducklake_list_files('lake', 'events') "
                                     "WHERE data_file LIKE '%/wal-%.parquet'"));
  EXPECT_EQ(names[0][0].value_or(""), "3");

  // Recovery's probe sees each committed file in the table (kept snapshot + ledger past it).
  LakeTableProbe probe(&table);
  for (const SegmentEntry& entry : before) {
    // The local copies are gone; probe with a copy of the object under the old name.
    ASSERT_OK_AND_ASSIGN(const auto inspection, table.Inspect());
    bool found = false;
    for (const auto& path : inspection.referenced) {
      if (path.find("wal-" + entry.name->id.ToString()) != std::string::npos) {
        std::filesystem::copy_file(path, entry.path);
        found = true;
      }
    }
    ASSERT_TRUE(found) << entry.file_name;
    ASSERT_OK_AND_ASSIGN(const auto answer, probe.Probe(entry));
    EXPECT_EQ(answer.referenced, std::optional<bool>(true)) << entry.file_name;
    ASSERT_TRUE(answer.ledger.has_value());
    EXPECT_GT(*answer.ledger, entry.name->end);
  }
}

TEST(WalIcebergTest, RotatedSegmentsCommitIntoAnIcebergTableWithTheirRowsAndLedger) {
  const auto dir = weir::testing::TestOutputDir("wal_iceberg");
  std::filesystem::remove_all(dir);
  lake::iceberg::IcebergLakeConfig config;
  config.sqlite_path = (dir / "catalog.db").string();
  config.warehouse = (dir / "warehouse").string();
  ASSERT_OK_AND_ASSIGN(auto catalog, lake::iceberg::IcebergLakeCatalog::Open(config));
  ASSERT_OK_AND_ASSIGN(
      auto opened,
      catalog->OpenTable(lake::TableSpec{"ns",
                                         "events",
                                         {{"id", lake::ColumnType::kBigint},
                                          {"team", lake::ColumnType::kVarchar},
                                          {"_inserted_at", lake::ColumnType::kTimestampTz}},
                                         {},
                                         {}},
                         lake::OpenMode::kOpenOrCreate));
  ASSERT_EQ(opened.status, lake::OpenStatus::kOpened);
  lake::Table& table = *opened.table;
  std::vector<SegmentEntry> before;
  ASSERT_NO_FATAL_FAILURE(RotateAndCommit(table, dir, &before));
  ASSERT_EQ(before.size(), 3u);

  // The current snapshot holds exactly the three WAL objects and their 1,400 rows.
  ASSERT_OK_AND_ASSIGN(const auto inspection, table.Inspect());
  ASSERT_EQ(inspection.live.size(), 3u);
  int64_t rows = 0;
  for (const lake::LakeFile& file : inspection.live) {
    rows += file.record_count;
    EXPECT_NE(file.path.find("/wal-"), std::string::npos) << file.path;
  }
  EXPECT_EQ(rows, 1400);
  LakeTableProbe probe(&table);
  for (const SegmentEntry& entry : before) {
    for (const auto& file : inspection.live) {
      if (file.path.find("wal-" + entry.name->id.ToString()) != std::string::npos) {
        std::filesystem::copy_file(file.path, entry.path);
      }
    }
    ASSERT_OK_AND_ASSIGN(const auto answer, probe.Probe(entry));
    EXPECT_EQ(answer.referenced, std::optional<bool>(true)) << entry.file_name;
    ASSERT_TRUE(answer.ledger.has_value());
    EXPECT_GT(*answer.ledger, entry.name->end);
  }
}

}  // namespace
}  // namespace weir::wal
