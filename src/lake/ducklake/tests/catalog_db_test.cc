// The SQLite catalog's journal mode: a catalog made with a rollback journal (DuckDB's default)
// is switched to write-ahead logging by whichever weir command opens it first.
#include "lake/ducklake/catalog_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace weir::lake::ducklake {
namespace {

std::string JournalModeOf(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &statement, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(statement), SQLITE_ROW);
  std::string mode = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return mode;
}

std::string RollbackJournalDatabase(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("weir-catalog-db-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "catalog.sqlite").string();
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=DELETE; CREATE TABLE t (x INTEGER)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(JournalModeOf(path), "delete");
  return path;
}

TEST(CatalogDbTest, EnsureSqliteWalSwitchesARollbackJournalCatalogOnce) {
  const std::string path = RollbackJournalDatabase("ensure");
  const Status switched = EnsureSqliteWal(path);
  ASSERT_TRUE(switched.ok()) << switched.ToString();
  EXPECT_EQ(JournalModeOf(path), "wal");
  const Status again = EnsureSqliteWal(path);
  EXPECT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(JournalModeOf(path), "wal");
}

TEST(CatalogDbTest, OpeningACatalogForIngestSwitchesItToWal) {
  const std::string path = RollbackJournalDatabase("open");
  auto db = CatalogDb::OpenSqlite(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(JournalModeOf(path), "wal");
}

TEST(CatalogDbTest, EnsureSqliteWalOfAMissingFileNamesIt) {
  const Status missing = EnsureSqliteWal("/nonexistent-weir-dir/catalog.sqlite");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("/nonexistent-weir-dir/catalog.sqlite"), std::string::npos)
      << missing.ToString();
}

}  // namespace
}  // namespace weir::lake::ducklake
