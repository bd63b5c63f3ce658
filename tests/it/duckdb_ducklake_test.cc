// libduckdb with the ducklake and sqlite extensions loaded from local files (no download):
// create a DuckLake with a SQLite catalog and local data, insert rows, read them back, and check
// the catalog and the data files from outside DuckDB.
#include <duckdb.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness_env.h"

namespace weir {
namespace {

// DuckDB's extension directory as laid out by scripts/setup (v<version>/linux_amd64).
const std::filesystem::path kExtensions = WEIR_TEST_DUCKDB_EXTENSIONS;

class DuckDb {
 public:
  DuckDb() {
    duckdb_config config = nullptr;
    EXPECT_EQ(duckdb_create_config(&config), DuckDBSuccess);
    // Nothing may be fetched at run time: every extension is loaded from a local file.
    duckdb_set_config(config, "autoinstall_known_extensions", "false");
    duckdb_set_config(config, "autoload_known_extensions", "false");
    char* error = nullptr;
    EXPECT_EQ(duckdb_open_ext(nullptr, &db_, config, &error), DuckDBSuccess) << error;
    duckdb_free(error);
    duckdb_destroy_config(&config);
    EXPECT_EQ(duckdb_connect(db_, &conn_), DuckDBSuccess);
  }
  ~DuckDb() {
    duckdb_disconnect(&conn_);
    duckdb_close(&db_);
  }
  DuckDb(const DuckDb&) = delete;
  DuckDb& operator=(const DuckDb&) = delete;

  // Runs `sql`; returns "" on success, else DuckDB's error.
  std::string Run(const std::string& sql) {
    duckdb_result result;
    const bool ok = duckdb_query(conn_, sql.c_str(), &result) == DuckDBSuccess;
    std::string error = ok ? "" : duckdb_result_error(&result);
    duckdb_destroy_result(&result);
    return error;
  }

  // The single BIGINT (or castable) value of `sql`.
  int64_t Scalar(const std::string& sql) {
    duckdb_result result;
    EXPECT_EQ(duckdb_query(conn_, sql.c_str(), &result), DuckDBSuccess)
        << duckdb_result_error(&result);
    const int64_t value = duckdb_value_int64(&result, 0, 0);
    duckdb_destroy_result(&result);
    return value;
  }

  std::string Text(const std::string& sql) {
    duckdb_result result;
    EXPECT_EQ(duckdb_query(conn_, sql.c_str(), &result), DuckDBSuccess)
        << duckdb_result_error(&result);
    char* value = duckdb_value_varchar(&result, 0, 0);
    std::string text = value != nullptr ? value : "<null>";
    duckdb_free(value);
    duckdb_destroy_result(&result);
    return text;
  }

 private:
  duckdb_database db_ = nullptr;
  duckdb_connection conn_ = nullptr;
};

TEST(DuckDbDuckLakeTest, SqliteCatalogLakeWithLocalDataRoundTrips) {
  const auto dir = testing::TestOutputDir("ducklake");
  DuckDb duck;
  EXPECT_EQ(duck.Text("SELECT library_version FROM pragma_version()"), "v1.5.5");
  for (const char* name : {"ducklake", "sqlite_scanner"}) {
    const auto file = kExtensions / (std::string(name) + ".duckdb_extension");
    ASSERT_TRUE(std::filesystem::exists(file)) << file << ": run scripts/setup";
    ASSERT_EQ(duck.Run("LOAD '" + file.string() + "'"), "") << name;
  }
  EXPECT_EQ(duck.Scalar("SELECT count(*) FROM duckdb_extensions() WHERE loaded AND "
                        "extension_name IN ('ducklake', 'sqlite_scanner')"),
            2);

  const auto catalog = dir / "catalog.sqlite";
  ASSERT_EQ(duck.Run("ATTACH 'ducklake:sqlite:" + catalog.string() + "' AS lake (DATA_PATH '" +
                     (dir / "data").string() + "/')"),
            "");
  ASSERT_EQ(duck.Run("CREATE TABLE lake.events (id BIGINT, name VARCHAR, score DOUBLE)"), "");
  ASSERT_EQ(duck.Run("INSERT INTO lake.events SELECT i, 'event-' || (i % 100), i / 4 "
                     "FROM range(10000) t(i)"),
            "");
  ASSERT_EQ(duck.Run("INSERT INTO lake.events VALUES (10000, NULL, -1.5)"), "");

  EXPECT_EQ(duck.Scalar("SELECT count(*) FROM lake.events"), 10001);
  EXPECT_EQ(duck.Scalar("SELECT count(DISTINCT id) FROM lake.events"), 10001);
  EXPECT_EQ(duck.Scalar("SELECT sum(id) FROM lake.events"), 10000LL * 10001 / 2);
  EXPECT_EQ(duck.Scalar("SELECT count(DISTINCT name) FROM lake.events"), 100);
  EXPECT_EQ(duck.Text("SELECT name FROM lake.events WHERE id = 4321"), "event-21");
  EXPECT_EQ(duck.Text("SELECT score FROM lake.events WHERE id = 10000"), "-1.5");
  EXPECT_EQ(duck.Text("SELECT name FROM lake.events WHERE id = 10000"), "<null>");
  // Time travel to the snapshot before the second insert.
  EXPECT_EQ(duck.Scalar("SELECT count(*) FROM lake.events AT (VERSION => 2)"), 10000);
  ASSERT_EQ(duck.Run("DETACH lake"), "");

  // The catalog is a plain SQLite database following the DuckLake schema, and the rows of the
  // large insert are in Parquet files under the data path.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(catalog.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(raw, &sqlite3_close);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db.get(),
                               "SELECT sum(record_count) FROM ducklake_data_file "
                               "WHERE end_snapshot IS NULL",
                               -1, &stmt, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db.get());
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  const int64_t rows_in_files = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  EXPECT_GE(rows_in_files, 10000);
  int parquet_files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "data")) {
    parquet_files += entry.path().extension() == ".parquet";
  }
  EXPECT_GE(parquet_files, 1);
}

}  // namespace
}  // namespace weir
