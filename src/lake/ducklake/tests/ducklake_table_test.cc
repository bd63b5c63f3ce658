// The DuckLake writer against real catalogs (SQLite file, harness PostgreSQL), read back by
// DuckDB's own ducklake extension: create, commit with the ledger, fence, add columns, race.
#include <thread>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/sql_quote.h"
#include "base/uuid_arrow.h"
#include "harness_env.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/ducklake_table.h"
#include "lake/ducklake/stats_text.h"
#include "postgres_database.h"

namespace weir::lake::ducklake {
namespace {

constexpr int64_t kInsertedAt = 1710000000123456;  // 2024-03-09 16:00:00.123456 UTC

// One commit, retrying lost races the way DatasetWriter does (Commit itself never retries).
Result<CommitResult> CommitRetryingConflicts(Table& table, const CommitRequest& request,
                                             int* conflicts = nullptr) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    auto result = table.Commit(request);
    if (!result.ok() || result->status != CommitStatus::kConflict) return result;
    if (conflicts != nullptr) ++*conflicts;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Status::IOError("500 conflicts in a row");
}

CommitRequest Request(std::vector<DataFile> files, std::vector<OffsetRange> offsets,
                      std::string writer) {
  CommitRequest request;
  request.files = std::move(files);
  request.offsets = std::move(offsets);
  request.writer = std::move(writer);
  return request;
}

class DuckLakeTableTest : public ::testing::TestWithParam<SqlDialect> {
 protected:
  void SetUp() override {
    dir_ = testing::TestOutputDir(std::string("ducklake_table_") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    config_.kind = GetParam();
    config_.data_path = (dir_ / "data").string();
    config_.extension_directory = DefaultExtensionDirectory();
    if (GetParam() == SqlDialect::kSqlite) {
      config_.sqlite_path = (dir_ / "catalog.sqlite").string();
    } else {
      WEIR_HARNESS_SETTING(dsn, "WEIR_TEST_PG_DSN");
      std::string name = "lake_" + std::to_string(::getpid()) + "_" +
                         std::to_string(std::hash<std::string>()(dir_.string()) % 100000);
      config_.postgres_conninfo = testing::FreshPostgresDatabase(dsn, name);
    }
  }

  // DuckDB with the lake attached read-only, as a user would read it.
  std::unique_ptr<DuckDbEngine> Reader() {
    auto engine = DuckDbEngine::Open(
        {DefaultExtensionDirectory(),
         {"ducklake", GetParam() == SqlDialect::kSqlite ? "sqlite_scanner" : "postgres_scanner"}});
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    const std::string target = GetParam() == SqlDialect::kSqlite
                                   ? "ducklake:sqlite:" + config_.sqlite_path
                                   : "ducklake:postgres:" + config_.postgres_conninfo;
    auto attached = (*engine)->Run("ATTACH " + QuoteLiteral(target) + " AS lake (READ_ONLY)");
    EXPECT_TRUE(attached.ok()) << attached.ToString();
    return std::move(*engine);
  }

  static std::string Scalar(DuckDbEngine& engine, const std::string& sql) {
    auto rows = engine.Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok() || rows->empty()) return "<none>";
    return (*rows)[0][0].value_or("<null>");
  }

  // Writes rows [first, first + count) with id, id * 0.5, "s<id>", id % 2 == 0 and the flush
  // timestamp, as one Parquet file of `table`.
  DataFile WriteFile(Table& table, int64_t first, int64_t count) {
    std::vector<std::shared_ptr<arrow::Field>> fields;
    std::vector<std::shared_ptr<arrow::Array>> arrays;
    std::vector<int> ids;
    arrow::Int64Builder id_builder;
    arrow::DoubleBuilder half_builder;
    arrow::StringBuilder text_builder;
    arrow::BooleanBuilder even_builder;
    arrow::TimestampBuilder at_builder(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                                       arrow::default_memory_pool());
    for (int64_t i = first; i < first + count; ++i) {
      EXPECT_TRUE(id_builder.Append(i).ok());
      EXPECT_TRUE(half_builder.Append(static_cast<double>(i) * 0.5).ok());
      EXPECT_TRUE(text_builder.Append("s" + std::to_string(i)).ok());
      EXPECT_TRUE(even_builder.Append(i % 2 == 0).ok());
      EXPECT_TRUE(at_builder.Append(kInsertedAt).ok());
    }
    const std::map<std::string, std::shared_ptr<arrow::Array>> by_name = {
        {"id", id_builder.Finish().ValueOrDie()},
        {"half", half_builder.Finish().ValueOrDie()},
        {"text", text_builder.Finish().ValueOrDie()},
        {"even", even_builder.Finish().ValueOrDie()},
        {"_inserted_at", at_builder.Finish().ValueOrDie()}};
    for (const auto& column : table.columns()) {
      auto array = by_name.at(column.name);
      fields.push_back(arrow::field(column.name, array->type()));
      arrays.push_back(array);
      ids.push_back(static_cast<int>(column.id));
    }
    auto schema = files::WithFieldIds(*arrow::schema(fields), ids).ValueOrDie();
    std::vector<std::optional<std::string>> values;
    for (const auto& key : table.partitioning()) {
      values.push_back(TimestampPartitionValue(key.transform.kind, kInsertedAt));
    }
    DataFile file;
    file.relative_path = table.NewFilePath(values);
    file.partition_values = values;
    auto writer = files::ParquetFileWriter::Create(
                      table.filesystem(), table.DataDirectory() + file.relative_path, schema, {})
                      .ValueOrDie();
    EXPECT_TRUE(writer->Append(*arrow::RecordBatch::Make(schema, count, arrays)).ok());
    file.info = writer->Finish().ValueOrDie();
    return file;
  }

  std::unique_ptr<Table> OpenEvents(DuckLakeCatalog& catalog,
                                    std::vector<PartitionKey> partitioning = {}) {
    auto opened = catalog.OpenTable(TableSpec{"main",
                                              "events",
                                              {{"id", ColumnType::kBigint},
                                               {"half", ColumnType::kDouble},
                                               {"text", ColumnType::kVarchar},
                                               {"even", ColumnType::kBoolean},
                                               {"_inserted_at", ColumnType::kTimestampTz}},
                                              partitioning,
                                              {}},
                                    OpenMode::kOpenOrCreate);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ(opened->status, OpenStatus::kOpened);
    return std::move(opened->table);
  }

  std::filesystem::path dir_;
  CatalogConfig config_;
};

TEST_P(DuckLakeTableTest, CommitsAreReadByDuckDbWithExactValuesAndLedger) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(*catalog, {{"_inserted_at", {TransformKind::kYear}},
                                     {"_inserted_at", {TransformKind::kMonth}}});
  ASSERT_EQ(table->columns().size(), 5u);
  EXPECT_EQ(table->columns()[0].name, "id");
  EXPECT_EQ(table->partitioning().size(), 2u);

  // Two files in one commit, then one more commit continuing the ledger.
  CommitRequest first = Request({WriteFile(*table, 0, 600), WriteFile(*table, 600, 400)},
                                {{"topic-a", 0, 0, 600}, {"topic-a", 1, 0, 400}}, "writer-1");
  auto r1 = table->Commit(first);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_EQ(r1->status, CommitStatus::kCommitted);
  CommitRequest second =
      Request({WriteFile(*table, 1000, 500)}, {{"topic-a", 0, 600, 1100}}, "writer-2");
  auto r2 = table->Commit(second);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->snapshot_id, r1->snapshot_id + 1);

  auto ledger = table->ReadLedger("topic-a").ValueOrDie();
  EXPECT_EQ(ledger, (std::map<int32_t, int64_t>{{0, 1100}, {1, 400}}));

  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events"), "1500");
  EXPECT_EQ(Scalar(*duck, "SELECT count(DISTINCT id) FROM lake.events"), "1500");
  EXPECT_EQ(Scalar(*duck, "SELECT sum(id) FROM lake.events"), "1124250");
  EXPECT_EQ(Scalar(*duck, "SELECT sum(half) FROM lake.events"), "562125.0");
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events WHERE even"), "750");
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events WHERE text = 's1234' AND id = 1234"),
            "1");
  EXPECT_EQ(Scalar(*duck, "SELECT min(_inserted_at)::VARCHAR FROM lake.events"),
            "2024-03-09 16:00:00.123456+00");
  // Statistics-driven filters and row ids behave.
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events WHERE id BETWEEN 599 AND 600"), "2");
  EXPECT_EQ(Scalar(*duck, "SELECT count(DISTINCT rowid) FROM lake.events"), "1500");
  // Table statistics merged over both commits, as DuckDB's planner reads them.
  EXPECT_EQ(Scalar(*duck,
                   "SELECT s.min_value || '..' || s.max_value || ' ' || s.contains_null::INT "
                   "FROM __ducklake_metadata_lake.ducklake_table_column_stats s JOIN "
                   "__ducklake_metadata_lake.ducklake_column c USING (table_id, column_id) "
                   "WHERE c.column_name = 'id'"),
            "0..1499 0");
  EXPECT_EQ(Scalar(*duck,
                   "SELECT record_count || ' ' || next_row_id FROM "
                   "__ducklake_metadata_lake.ducklake_table_stats"),
            "1500 1500");
  // Time travel to the first commit.
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events AT (VERSION => " +
                              std::to_string(r1->snapshot_id) + ")"),
            "1000");
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM ducklake_list_files('lake', 'events')"), "3");
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events WHERE month(_inserted_at) = 3"),
            "1500");
}

TEST_P(DuckLakeTableTest, FencedCommitWritesNothing) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(*catalog);
  ASSERT_TRUE(table->Commit(Request({WriteFile(*table, 0, 10)}, {{"t", 3, 0, 10}}, "owner")).ok());
  // A zombie that started from offset 0 again (its partition was reassigned) must be refused.
  auto zombie = table->Commit(Request({WriteFile(*table, 0, 10)}, {{"t", 3, 0, 10}}, "zombie"));
  ASSERT_TRUE(zombie.ok()) << zombie.status().ToString();
  EXPECT_EQ(zombie->status, CommitStatus::kFenced);
  ASSERT_EQ(zombie->fenced_ranges.size(), 1u);
  EXPECT_EQ(zombie->fenced_ranges[0].partition, 3);
  // The owner continues from its end.
  auto next = table->Commit(Request({WriteFile(*table, 10, 5)}, {{"t", 3, 10, 15}}, "owner"));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->status, CommitStatus::kCommitted);
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events"), "15");
  EXPECT_EQ(Scalar(*duck, "SELECT count(DISTINCT id) FROM lake.events"), "15");
  EXPECT_EQ(table->ReadLedger("t").ValueOrDie(), (std::map<int32_t, int64_t>{{3, 15}}));
}

TEST_P(DuckLakeTableTest, RetryAfterUnknownOutcomeRecognisesItsOwnCommit) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(*catalog);
  const auto request = Request({WriteFile(*table, 0, 10)}, {{"t", 0, 0, 10}}, "host/1/commit-7");
  auto first = table->Commit(request);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // The same commit again, as after a connection lost at COMMIT: it reports the earlier
  // snapshot instead of committing twice or calling itself fenced.
  auto again = table->Commit(request);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->status, CommitStatus::kAlreadyCommitted);
  EXPECT_EQ(again->snapshot_id, first->snapshot_id);
  // Reading it back finds the same snapshot.
  ASSERT_OK_AND_ASSIGN(const auto found, table->FindCommit(request));
  EXPECT_EQ(found, std::optional<int64_t>(first->snapshot_id));
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events"), "10");
}

TEST_P(DuckLakeTableTest, CompanionTableCommitsInTheSameSnapshot) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(*catalog);
  auto opened =
      catalog->OpenTable(TableSpec{"main", "events_rejects", {{"id", ColumnType::kBigint}}, {}, {}},
                         OpenMode::kOpenOrCreate);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  auto* rejects = &opened->table;
  auto schema = files::WithFieldIds(*arrow::schema({arrow::field("id", arrow::int64())}),
                                    {static_cast<int>((*rejects)->columns()[0].id)})
                    .ValueOrDie();
  arrow::Int64Builder ids;
  ASSERT_TRUE(ids.AppendValues({7, 8, 9}).ok());
  DataFile reject_file;
  reject_file.relative_path = (*rejects)->NewFilePath({});
  auto writer = files::ParquetFileWriter::Create(
                    (*rejects)->filesystem(),
                    (*rejects)->DataDirectory() + reject_file.relative_path, schema, {})
                    .ValueOrDie();
  ASSERT_TRUE(
      writer->Append(*arrow::RecordBatch::Make(schema, 3, {ids.Finish().ValueOrDie()})).ok());
  reject_file.info = writer->Finish().ValueOrDie();
  auto request = Request({WriteFile(*table, 0, 10)}, {{"t", 0, 0, 13}}, "w");
  request.companion = rejects->get();
  request.companion_files = {reject_file};
  auto result = table->Commit(request);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events"), "10");
  EXPECT_EQ(Scalar(*duck, "SELECT sum(id) FROM lake.events_rejects"), "24");
  EXPECT_EQ(Scalar(*duck, "SELECT changes::VARCHAR FROM lake.snapshots() WHERE snapshot_id = " +
                              std::to_string(result->snapshot_id)),
            "{tables_inserted_into=[1, 2]}");
}

TEST_P(DuckLakeTableTest, AddedColumnsAreNullInOlderFiles) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(*catalog);
  ASSERT_TRUE(table->Commit(Request({WriteFile(*table, 0, 10)}, {}, "w")).ok());
  ASSERT_OK_AND_ASSIGN(const auto evolved,
                       table->Evolve(SchemaChange{{{"extra", ColumnType::kVarchar}}, {}}));
  ASSERT_EQ(evolved.status, EvolveStatus::kEvolved);
  ASSERT_EQ(table->columns().size(), 6u);
  EXPECT_EQ(table->columns()[5].name, "extra");
  // A reopened table sees the same columns (ids are stable).
  auto again = OpenEvents(*catalog);
  EXPECT_EQ(again->columns()[5].id, table->columns()[5].id);
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events WHERE extra IS NULL"), "10");
}

TEST_P(DuckLakeTableTest, ConcurrentWritersAndDuckDbKeepDenseSnapshots) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  { OpenEvents(*catalog); }
  constexpr int kWriters = 3, kCommits = 8;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto own = DuckLakeCatalog::Open(config_).ValueOrDie();
      auto table = OpenEvents(*own);
      for (int c = 0; c < kCommits; ++c) {
        const int64_t first = (w * kCommits + c) * 100;
        auto result = CommitRetryingConflicts(
            *table, Request({WriteFile(*table, first, 100)}, {{"t", w, c * 100, (c + 1) * 100}},
                            "w" + std::to_string(w) + "-" + std::to_string(c)));
        if (!result.ok() || result->status != CommitStatus::kCommitted) ++failures;
      }
    });
  }
  // A DuckDB writer inserts through the ducklake extension at the same time.
  {
    auto engine = DuckDbEngine::Open(
        {DefaultExtensionDirectory(),
         {"ducklake", GetParam() == SqlDialect::kSqlite ? "sqlite_scanner" : "postgres_scanner"}});
    ASSERT_TRUE(engine.ok());
    const std::string target = GetParam() == SqlDialect::kSqlite
                                   ? "ducklake:sqlite:" + config_.sqlite_path
                                   : "ducklake:postgres:" + config_.postgres_conninfo;
    ASSERT_TRUE((*engine)->Run("ATTACH " + QuoteLiteral(target) + " AS lake").ok());
    ASSERT_TRUE((*engine)->Run("SET ducklake_max_retry_count = 100").ok());
    for (int i = 0; i < 5; ++i) {
      // DuckDB's SQLite scanner sets no busy timeout, so a DuckDB writer sharing a SQLite
      // catalog retries a commit that met the lock, as its users do.
      Status inserted;
      for (int attempt = 0; attempt < 100; ++attempt) {
        inserted = (*engine)->Run(
            "INSERT INTO lake.events (id, half, text, even, _inserted_at) SELECT 100000 + range, "
            "0.5, 'duck', true, now() FROM range(" +
            std::to_string(i * 10) + ", " + std::to_string(i * 10 + 10) + ")");
        if (inserted.ok()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      EXPECT_TRUE(inserted.ok()) << inserted.ToString();
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.events"),
            std::to_string(kWriters * kCommits * 100 + 50));
  EXPECT_EQ(Scalar(*duck, "SELECT count(DISTINCT id) FROM lake.events"),
            std::to_string(kWriters * kCommits * 100 + 50));
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) = max(snapshot_id) + 1 FROM lake.snapshots()"), "true");
}

TEST_P(DuckLakeTableTest, FindCommitFindsALandedCommitEvenAfterTheLedgerMovedOn) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(*catalog);
  const auto mine = Request({WriteFile(*table, 0, 10)}, {{"t", 0, 0, 10}}, "host/1/mine");
  ASSERT_OK_AND_ASSIGN(const auto landed, table->Commit(mine));
  ASSERT_EQ(landed.status, CommitStatus::kCommitted);
  // A later owner of the partition moves the ledger past this commit's range.
  const auto later = Request({WriteFile(*table, 10, 5)}, {{"t", 0, 10, 15}}, "host/2/later");
  ASSERT_OK_AND_ASSIGN(const auto moved, table->Commit(later));
  ASSERT_EQ(moved.status, CommitStatus::kCommitted);
  ASSERT_OK_AND_ASSIGN(const auto found, table->FindCommit(mine));
  EXPECT_EQ(found, std::optional<int64_t>(landed.snapshot_id)) << "found by its file";
  // A commit that never happened is not found.
  const auto never = Request({WriteFile(*table, 20, 5)}, {{"t", 0, 15, 20}}, "host/3/never");
  ASSERT_OK_AND_ASSIGN(const auto absent, table->FindCommit(never));
  EXPECT_EQ(absent, std::nullopt);
}

TEST_P(DuckLakeTableTest, PartitionSplitsRowsWithDuckLakeTransformSemantics) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto table = OpenEvents(
      *catalog, {{"even", {TransformKind::kIdentity}}, {"_inserted_at", {TransformKind::kMonth}}});
  arrow::BooleanBuilder even;
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE((i == 4 ? even.AppendNull() : even.Append(i % 2 == 0)).ok());
    ASSERT_TRUE(at.Append(kInsertedAt).ok());
  }
  auto rows = arrow::RecordBatch::Make(
      arrow::schema(
          {arrow::field("even", arrow::boolean()),
           arrow::field("_inserted_at", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))}),
      5, {even.Finish().ValueOrDie(), at.Finish().ValueOrDie()});
  ASSERT_OK_AND_ASSIGN(const auto groups, table->Partition(*rows));
  std::map<std::vector<PartitionValue>, std::vector<int64_t>> got;
  for (const auto& group : groups) got[group.values] = group.rows;
  EXPECT_EQ(got,
            (std::map<std::vector<PartitionValue>, std::vector<int64_t>>{
                {{std::nullopt, "3"}, {4}}, {{"false", "3"}, {1, 3}}, {{"true", "3"}, {0, 2}}}));
}

TEST_P(DuckLakeTableTest, AUuidColumnIsReadByDuckDbAsUuidWithItsPartitionsAndStatistics) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto opened,
                       catalog->OpenTable(TableSpec{"main",
                                                    "ids",
                                                    {{"u", ColumnType::kUuid},
                                                     {"_inserted_at", ColumnType::kTimestampTz}},
                                                    {{"u", {TransformKind::kIdentity}}},
                                                    {}},
                                          OpenMode::kOpenOrCreate));
  auto& table = *opened.table;
  EXPECT_EQ(table.columns()[0].type, ColumnType::kUuid);
  const std::vector<std::string> texts = {"ffffffff-0000-0000-0000-000000000001",
                                          "0123abcd-4567-89ef-0123-456789abcdef",
                                          "ffffffff-0000-0000-0000-000000000001"};
  arrow::FixedSizeBinaryBuilder storage(arrow::fixed_size_binary(16));
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (const auto& text : texts) {
    ASSERT_OK(storage.Append(Uuid::Parse(text)->bytes.data()));
    ASSERT_OK(at.Append(kInsertedAt));
  }
  ASSERT_OK(storage.AppendNull());
  ASSERT_OK(at.Append(kInsertedAt));
  ASSERT_OK_AND_ASSIGN(auto uuids, UuidArrayOf(storage.Finish().ValueOrDie()));
  ASSERT_OK_AND_ASSIGN(
      auto schema, files::WithFieldIds(*arrow::schema({arrow::field("u", uuids->type()),
                                                       arrow::field("_inserted_at", at.type())}),
                                       {static_cast<int>(table.columns()[0].id),
                                        static_cast<int>(table.columns()[1].id)}));
  const auto rows = arrow::RecordBatch::Make(schema, 4, {uuids, at.Finish().ValueOrDie()});
  ASSERT_OK_AND_ASSIGN(const auto groups, table.Partition(*rows));
  std::vector<DataFile> files;
  for (const auto& group : groups) {
    arrow::Int64Builder indices;
    ASSERT_OK(indices.AppendValues(group.rows));
    ASSERT_OK_AND_ASSIGN(auto index, indices.Finish());
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (const auto& column : rows->columns()) {
      columns.push_back(arrow::compute::Take(*column, *index).ValueOrDie());
    }
    DataFile file;
    file.relative_path = table.NewFilePath(group.values);
    file.partition_values = group.values;
    auto writer = files::ParquetFileWriter::Create(
                      table.filesystem(), table.DataDirectory() + file.relative_path, schema, {})
                      .ValueOrDie();
    ASSERT_OK(writer->Append(*arrow::RecordBatch::Make(schema, group.rows.size(), columns)));
    file.info = writer->Finish().ValueOrDie();
    files.push_back(std::move(file));
  }
  ASSERT_EQ(files.size(), 3u);  // two uuids and the null
  ASSERT_OK_AND_ASSIGN(auto committed, table.Commit(Request(files, {{"t", 0, 0, 4}}, "w-uuid")));
  ASSERT_EQ(committed.status, CommitStatus::kCommitted);

  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck, "SELECT DISTINCT typeof(u) FROM lake.ids WHERE u IS NOT NULL"), "UUID");
  EXPECT_EQ(Scalar(*duck, "SELECT string_agg(u::VARCHAR, ',' ORDER BY u) FROM lake.ids"),
            texts[1] + "," + texts[0] + "," + texts[0]);
  // Filters prune by the partition values and statistics, which must agree with the data.
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.ids WHERE u = '" + texts[0] + "'::UUID"), "2");
  EXPECT_EQ(Scalar(*duck, "SELECT count(*) FROM lake.ids WHERE u < '" + texts[0] + "'::UUID"), "1");
  EXPECT_EQ(Scalar(*duck,
                   "SELECT s.min_value || '..' || s.max_value FROM "
                   "__ducklake_metadata_lake.ducklake_table_column_stats s JOIN "
                   "__ducklake_metadata_lake.ducklake_column c USING (table_id, column_id) "
                   "WHERE c.column_name = 'u'"),
            texts[1] + ".." + texts[0]);
  EXPECT_EQ(Scalar(*duck,
                   "SELECT string_agg(partition_value, ',' ORDER BY partition_value) FROM "
                   "__ducklake_metadata_lake.ducklake_file_partition_value"),
            texts[1] + "," + texts[0]);
}

TEST_P(DuckLakeTableTest, EvolvePromotesIntegerToBigintAndRefusesWhatDuckLakeCannotWiden) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  auto opened = catalog->OpenTable(
      TableSpec{
          "main",
          "narrow",
          {{"n", ColumnType::kInteger}, {"f", ColumnType::kFloat}, {"s", ColumnType::kVarchar}},
          {},
          {}},
      OpenMode::kOpenOrCreate);
  ASSERT_OK(opened.status());
  auto& table = *opened->table;
  ASSERT_EQ(table.columns()[0].type, ColumnType::kInteger);
  ASSERT_EQ(table.columns()[1].type, ColumnType::kFloat);
  ASSERT_OK_AND_ASSIGN(
      const auto widened,
      table.Evolve(SchemaChange{{}, {{"n", ColumnType::kBigint}, {"f", ColumnType::kDouble}}}));
  EXPECT_EQ(widened.status, EvolveStatus::kEvolved) << widened.reason;
  EXPECT_EQ(table.columns()[0].type, ColumnType::kBigint);
  EXPECT_EQ(table.columns()[1].type, ColumnType::kDouble);
  ASSERT_OK_AND_ASSIGN(const auto refused,
                       table.Evolve(SchemaChange{{}, {{"s", ColumnType::kBigint}}}));
  EXPECT_EQ(refused.status, EvolveStatus::kRefused);
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck,
                   "SELECT data_type FROM information_schema.columns WHERE table_catalog "
                   "= 'lake' AND table_name = 'narrow' AND column_name = 'n'"),
            "BIGINT");
}

TEST_P(DuckLakeTableTest, CheckSpecRefusesIcebergOnlyTransformsNamingTheSettingAndTakesSortKeys) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  TableSpec spec{"main", "events", {}, {{"id", {TransformKind::kBucket, 16}}}, {}};
  const Status bucket = catalog->CheckSpec(spec, "datasets[events].partition_by");
  EXPECT_EQ(bucket.message(),
            "datasets[events].partition_by: DuckLake cannot partition by bucket[16](id) (it has "
            "identity, year, month, day and hour; bucket[N] and truncate[W] are Iceberg's)");
  spec.partitioning = {{"_inserted_at", {TransformKind::kDay}}};
  ASSERT_OK(catalog->CheckSpec(spec, "x"));
  spec.sort_keys = {{"id"}};
  ASSERT_OK(catalog->CheckSpec(spec, "x"));  // the writer sorts; the table declares nothing
}

TEST_P(DuckLakeTableTest, OpenOnlyReportsAMissingTableWithoutCreatingIt) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  ASSERT_OK_AND_ASSIGN(
      auto opened,
      catalog->OpenTable(TableSpec{"main", "absent", {{"a", ColumnType::kBigint}}, {}, {}},
                         OpenMode::kOpenOnly));
  EXPECT_EQ(opened.status, OpenStatus::kMissing);
  EXPECT_EQ(opened.table, nullptr);
  auto duck = Reader();
  EXPECT_EQ(Scalar(*duck,
                   "SELECT count(*) FROM information_schema.tables WHERE table_catalog = "
                   "'lake' AND table_name = 'absent'"),
            "0");
}

TEST_P(DuckLakeTableTest, ListTablesNamesTheLiveTablesAndOpenAsIsTakesAnyLayout) {
  auto catalog = DuckLakeCatalog::Open(config_).ValueOrDie();
  ASSERT_OK_AND_ASSIGN(auto empty, catalog->ListTables());
  EXPECT_TRUE(empty.empty());  // the offset ledger is not a table of the lake
  OpenEvents(*catalog, {{"_inserted_at", {TransformKind::kDay}}});
  ASSERT_OK(catalog->RunDdl({"CREATE SCHEMA weir_lake.other",
                             "CREATE TABLE weir_lake.other.b (x INTEGER)",
                             "CREATE TABLE weir_lake.other.a (x INTEGER)",
                             "CREATE TABLE weir_lake.main.gone (x INTEGER)"}));
  ASSERT_OK(catalog->RunDdl({"DROP TABLE weir_lake.main.gone"}));
  ASSERT_OK_AND_ASSIGN(auto names, catalog->ListTables());
  EXPECT_EQ(names, (std::vector<TableName>{{"main", "events"}, {"other", "a"}, {"other", "b"}}));
  // A spec without the partitioning: refused when checked, taken as it is by kOpenAsIs.
  const TableSpec bare{"main", "events", {}, {}, {}};
  EXPECT_FALSE(catalog->OpenTable(bare, OpenMode::kOpenOnly).ok());
  ASSERT_OK_AND_ASSIGN(auto opened, catalog->OpenTable(bare, OpenMode::kOpenAsIs));
  ASSERT_EQ(opened.status, OpenStatus::kOpened);
  EXPECT_EQ(ToString(opened.table->partitioning()), "(day(_inserted_at))");
  ASSERT_OK_AND_ASSIGN(
      auto absent, catalog->OpenTable(TableSpec{"main", "gone", {}, {}, {}}, OpenMode::kOpenAsIs));
  EXPECT_EQ(absent.status, OpenStatus::kMissing);
}

INSTANTIATE_TEST_SUITE_P(Catalogs, DuckLakeTableTest,
                         ::testing::Values(SqlDialect::kSqlite, SqlDialect::kPostgres),
                         [](const auto& param_info) {
                           return param_info.param == SqlDialect::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace weir::lake::ducklake
