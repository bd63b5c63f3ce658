#include "lake/duckdb_handles.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace weir::lake {
namespace {

class DuckDbHandlesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    duckdb_database db = nullptr;
    ASSERT_EQ(duckdb_open(nullptr, &db), DuckDBSuccess);
    db_.reset(db);
    duckdb_connection conn = nullptr;
    ASSERT_EQ(duckdb_connect(db_.get(), &conn), DuckDBSuccess);
    conn_.reset(conn);
  }
  // Declared in this order: the connection is closed before its database.
  DuckDbDatabase db_;
  DuckDbConnection conn_;
};

TEST_F(DuckDbHandlesTest, AFailedQueryKeepsItsErrorUntilTheResultGoes) {
  DuckDbResult result;
  ASSERT_NE(duckdb_query(conn_.get(), "SELECT * FROM no_such_table", result.out()), DuckDBSuccess);
  EXPECT_EQ(duckdb_result_error_type(result.get()), DUCKDB_ERROR_CATALOG);
  EXPECT_NE(std::string(duckdb_result_error(result.get())).find("no_such_table"),
            std::string::npos);
  // Reusing the object for the next query destroys the previous result first.
  ASSERT_EQ(duckdb_query(conn_.get(), "SELECT 42", result.out()), DuckDBSuccess);
  EXPECT_EQ(duckdb_value_int64(result.get(), 0, 0), 42);
}

TEST_F(DuckDbHandlesTest, AResultMovesAndTheMovedFromOneIsEmpty) {
  DuckDbResult first;
  ASSERT_EQ(duckdb_query(conn_.get(), "SELECT 'moved' AS v", first.out()), DuckDBSuccess);
  DuckDbResult second(std::move(first));
  const DuckDbString text(duckdb_value_varchar(second.get(), 0, 0));
  EXPECT_EQ(text.view(), "moved");
  EXPECT_EQ(duckdb_column_count(first.get()), 0u);  // NOLINT(bugprone-use-after-move)
  DuckDbResult third;
  third = std::move(second);
  EXPECT_EQ(duckdb_row_count(third.get()), 1u);
}

TEST_F(DuckDbHandlesTest, AFailedPrepareIsOwnedAndCarriesItsError) {
  duckdb_prepared_statement raw = nullptr;
  ASSERT_NE(duckdb_prepare(conn_.get(), "SELEC 1", &raw), DuckDBSuccess);
  const DuckDbPrepared prepared(raw);
  ASSERT_NE(prepared, nullptr);
  EXPECT_NE(std::string(duckdb_prepare_error(prepared.get())).find("syntax error"),
            std::string::npos);
}

TEST_F(DuckDbHandlesTest, AnAppenderAndItsTypesAreReleased) {
  DuckDbResult created;
  ASSERT_EQ(duckdb_query(conn_.get(), "CREATE TABLE t (i INTEGER)", created.out()), DuckDBSuccess);
  {
    duckdb_appender raw = nullptr;
    ASSERT_EQ(duckdb_appender_create(conn_.get(), nullptr, "t", &raw), DuckDBSuccess);
    const DuckDbAppender appender(raw);
    const DuckDbValue value(duckdb_create_int32(7));
    ASSERT_EQ(duckdb_append_value(appender.get(), value.get()), DuckDBSuccess);
    ASSERT_EQ(duckdb_appender_end_row(appender.get()), DuckDBSuccess);
  }  // destroying the appender flushes it
  DuckDbResult counted;
  ASSERT_EQ(duckdb_query(conn_.get(), "SELECT sum(i) FROM t", counted.out()), DuckDBSuccess);
  EXPECT_EQ(duckdb_value_int64(counted.get(), 0, 0), 7);
  const DuckDbLogicalType type(duckdb_create_logical_type(DUCKDB_TYPE_INTEGER));
  EXPECT_EQ(duckdb_get_type_id(type.get()), DUCKDB_TYPE_INTEGER);
}

}  // namespace
}  // namespace weir::lake
