// Upsert commits (lake/table.h KeyDeletes) against a real SQLite DuckLake catalog, read back by
// DuckDB's own ducklake extension: the older rows of the keys are deleted in the commit's
// snapshot by positional delete files, a data file's delete file is replaced, not stacked, and
// files whose statistics exclude the keys are not read.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/sql_quote.h"
#include "harness_env.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/ducklake_table.h"

namespace weir::lake::ducklake {
namespace {

class DuckLakeUpsertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TestOutputDir(std::string("ducklake_upsert_") +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    config_.kind = SqlDialect::kSqlite;
    config_.data_path = (dir_ / "data").string();
    config_.extension_directory = DefaultExtensionDirectory();
    config_.sqlite_path = (dir_ / "catalog.sqlite").string();
    catalog_ = DuckLakeCatalog::Open(config_).ValueOrDie();
    auto opened = catalog_->OpenTable(
        TableSpec{
            "main",
            "agg",
            {{"k", ColumnType::kBigint}, {"g", ColumnType::kVarchar}, {"v", ColumnType::kBigint}},
            {},
            {}},
        OpenMode::kOpenOrCreate);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    table_ = std::move(opened->table);
  }

  std::string Scalar(const std::string& sql) {
    auto engine = DuckDbEngine::Open({DefaultExtensionDirectory(), {"ducklake", "sqlite_scanner"}});
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    auto attached =
        (*engine)->Run("ATTACH " + QuoteLiteral("ducklake:sqlite:" + config_.sqlite_path) +
                       " AS lake (READ_ONLY)");
    EXPECT_TRUE(attached.ok()) << attached.ToString();
    auto rows = (*engine)->Query(sql);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok() || rows->empty()) return "<none>";
    return (*rows)[0][0].value_or("<null>");
  }

  // A file of keys `keys` (g = "g<k % 3>"), v = k * 10 + version.
  DataFile WriteFile(const std::vector<int64_t>& keys, int64_t version) {
    arrow::Int64Builder k, v;
    arrow::StringBuilder g;
    for (const int64_t key : keys) {
      EXPECT_TRUE(k.Append(key).ok());
      EXPECT_TRUE(g.Append("g" + std::to_string(key % 3)).ok());
      EXPECT_TRUE(v.Append(key * 10 + version).ok());
    }
    std::vector<int> ids;
    for (const auto& column : table_->columns()) ids.push_back(static_cast<int>(column.id));
    auto schema = files::WithFieldIds(*arrow::schema({arrow::field("k", arrow::int64()),
                                                      arrow::field("g", arrow::utf8()),
                                                      arrow::field("v", arrow::int64())}),
                                      ids)
                      .ValueOrDie();
    DataFile file;
    file.relative_path = table_->NewFilePath({});
    auto writer =
        files::ParquetFileWriter::Create(table_->filesystem(),
                                         table_->DataDirectory() + file.relative_path, schema, {})
            .ValueOrDie();
    EXPECT_TRUE(
        writer
            ->Append(*arrow::RecordBatch::Make(
                schema, static_cast<int64_t>(keys.size()),
                {k.Finish().ValueOrDie(), g.Finish().ValueOrDie(), v.Finish().ValueOrDie()}))
            .ok());
    file.info = writer->Finish().ValueOrDie();
    return file;
  }

  // Keys k (int32, as a flush of another width would carry them) with g = "g<k % 3>".
  static std::shared_ptr<KeyDeletes> Keys(const std::vector<int64_t>& keys) {
    arrow::Int32Builder k;
    arrow::StringBuilder g;
    for (const int64_t key : keys) {
      EXPECT_TRUE(k.Append(static_cast<int32_t>(key)).ok());
      EXPECT_TRUE(g.Append("g" + std::to_string(key % 3)).ok());
    }
    auto deletes = std::make_shared<KeyDeletes>();
    deletes->columns = {"K", "g"};
    deletes->keys = arrow::RecordBatch::Make(
        arrow::schema({arrow::field("K", arrow::int32()), arrow::field("g", arrow::utf8())}),
        static_cast<int64_t>(keys.size()), {k.Finish().ValueOrDie(), g.Finish().ValueOrDie()});
    return deletes;
  }

  CommitResult Commit(std::vector<DataFile> files, int64_t start, int64_t end,
                      std::shared_ptr<KeyDeletes> keys) {
    CommitRequest request;
    request.files = std::move(files);
    request.offsets = {{"changelog", 0, start, end}};
    request.writer = "w-" + std::to_string(end);
    request.key_deletes = std::move(keys);
    auto result = table_->Commit(request);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->status, CommitStatus::kCommitted) << result->reason;
    return *result;
  }

  static std::vector<int64_t> Range(int64_t from, int64_t to) {
    std::vector<int64_t> out;
    for (int64_t i = from; i < to; ++i) out.push_back(i);
    return out;
  }

  std::filesystem::path dir_;
  CatalogConfig config_;
  std::unique_ptr<DuckLakeCatalog> catalog_;
  std::unique_ptr<Table> table_;
};

TEST_F(DuckLakeUpsertTest, OlderRowsOfTheKeysAreDeletedInTheCommitsSnapshot) {
  ASSERT_TRUE(table_->DeletesByKey());
  const auto first = Commit({WriteFile(Range(0, 100), 0)}, 0, 100, Keys(Range(0, 100)));
  EXPECT_EQ(first.rows_deleted, 0);
  EXPECT_EQ(first.delete_files, 0);
  // Keys 50..59 again, and 500 (never seen): 10 older rows go, 11 new ones come.
  std::vector<int64_t> again = Range(50, 60);
  again.push_back(500);
  const auto second = Commit({WriteFile(again, 1)}, 100, 111, Keys(again));
  EXPECT_EQ(second.rows_deleted, 10);
  EXPECT_EQ(second.delete_files, 1);
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || count(DISTINCT k) || ' ' || sum(v) FROM lake.agg"),
            "101 101 " + std::to_string(4950 * 10 + 5000 + 10 + 1));
  EXPECT_EQ(Scalar("SELECT v FROM lake.agg WHERE k = 55"), "551");
  // The snapshot before still sees the first version (time travel).
  EXPECT_EQ(Scalar("SELECT v FROM lake.agg AT (VERSION => " + std::to_string(first.snapshot_id) +
                   ") WHERE k = 55"),
            "550");
  // Tombstones of 55..64 (rows in both files): the first file's delete file is replaced by one
  // holding all 15 of its deleted positions.
  const auto third = Commit({}, 111, 121, Keys(Range(55, 65)));
  EXPECT_EQ(third.rows_deleted, 10);
  EXPECT_EQ(third.delete_files, 2);
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || count(DISTINCT k) FROM lake.agg"), "91 91");
  EXPECT_EQ(Scalar("SELECT count(*) FROM lake.agg WHERE k BETWEEN 55 AND 64"), "0");
  EXPECT_EQ(Scalar("SELECT count(*) || ' ' || sum(delete_count) FROM "
                   "__ducklake_metadata_lake.ducklake_delete_file WHERE end_snapshot IS NULL"),
            "2 20");
  EXPECT_EQ(Scalar("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_delete_file"), "3");
  EXPECT_EQ(
      Scalar("SELECT changes_made FROM __ducklake_metadata_lake.ducklake_snapshot_changes "
             "WHERE snapshot_id = " +
             std::to_string(third.snapshot_id)),
      "inserted_into_table:" + std::to_string(static_cast<DuckLakeTable&>(*table_).table_id()) +
          ",deleted_from_table:" + std::to_string(static_cast<DuckLakeTable&>(*table_).table_id()));
  // Keys already deleted delete nothing more and write no delete file.
  const auto fourth = Commit({}, 121, 122, Keys(Range(55, 60)));
  EXPECT_EQ(fourth.rows_deleted, 0);
  EXPECT_EQ(fourth.delete_files, 0);
}

TEST_F(DuckLakeUpsertTest, AFencedUpsertWritesNoDeleteFile) {
  Commit({WriteFile(Range(0, 10), 0)}, 0, 10, Keys(Range(0, 10)));
  CommitRequest zombie;
  zombie.files = {WriteFile(Range(0, 10), 1)};
  zombie.offsets = {{"changelog", 0, 0, 10}};
  zombie.writer = "zombie";
  zombie.key_deletes = Keys(Range(0, 10));
  ASSERT_OK_AND_ASSIGN(auto fenced, table_->Commit(zombie));
  EXPECT_EQ(fenced.status, CommitStatus::kFenced);
  EXPECT_EQ(Scalar("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_delete_file"), "0");
  EXPECT_EQ(Scalar("SELECT sum(v) FROM lake.agg"), "450");
}

}  // namespace
}  // namespace weir::lake::ducklake
