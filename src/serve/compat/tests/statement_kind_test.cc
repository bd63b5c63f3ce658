#include "serve/compat/statement_kind.h"

#include <gtest/gtest.h>

namespace weir::serve::compat {
namespace {

TEST(TransactionControlOf, ComesFromTheParseTreeWhateverTheCommentsAndCase) {
  EXPECT_EQ(TransactionControlOf("BEGIN"), TransactionControl::kBegin);
  EXPECT_EQ(TransactionControlOf("begin transaction read write"), TransactionControl::kBegin);
  EXPECT_EQ(TransactionControlOf("START TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
            TransactionControl::kBegin);
  EXPECT_EQ(TransactionControlOf("/**/COMMIT"), TransactionControl::kCommit);
  EXPECT_EQ(TransactionControlOf("-- note\nCOMMIT"), TransactionControl::kCommit);
  EXPECT_EQ(TransactionControlOf("/* a /* nested */ comment */ end"), TransactionControl::kCommit);
  EXPECT_EQ(TransactionControlOf("ROLLBACK"), TransactionControl::kRollback);
  EXPECT_EQ(TransactionControlOf("\n\tAbOrT WORK"), TransactionControl::kRollback);
}

TEST(TransactionControlOf, IsNoneForEverythingElse) {
  EXPECT_EQ(TransactionControlOf("SELECT 1"), TransactionControl::kNone);
  EXPECT_EQ(TransactionControlOf("SELECT 'begin' AS commit_"), TransactionControl::kNone);
  EXPECT_EQ(TransactionControlOf("SAVEPOINT s"), TransactionControl::kNone);
  EXPECT_EQ(TransactionControlOf("ROLLBACK TO SAVEPOINT s"), TransactionControl::kNone);
  EXPECT_EQ(TransactionControlOf("COMMIT; INSERT INTO t VALUES (1)"), TransactionControl::kNone);
  EXPECT_EQ(TransactionControlOf("FROM t SELECT end_"), TransactionControl::kNone);
  EXPECT_EQ(TransactionControlOf("COMMIT garbage"), TransactionControl::kNone);
}

TEST(CommandTagOf, NamesTheObjectKindFromTheParseTree) {
  EXPECT_EQ(CommandTagOf("CREATE TABLE t (i INT)", "CREATE"), "CREATE TABLE");
  EXPECT_EQ(CommandTagOf("/* x */ create or replace view v as select 1", "CREATE"), "CREATE VIEW");
  EXPECT_EQ(CommandTagOf("CREATE TABLE t AS SELECT 1", "CREATE"), "CREATE TABLE");
  EXPECT_EQ(CommandTagOf("CREATE SCHEMA IF NOT EXISTS s", "CREATE"), "CREATE SCHEMA");
  EXPECT_EQ(CommandTagOf("CREATE SEQUENCE q", "CREATE"), "CREATE SEQUENCE");
  EXPECT_EQ(CommandTagOf("CREATE TYPE mood AS ENUM ('a')", "CREATE"), "CREATE TYPE");
  EXPECT_EQ(CommandTagOf("DROP VIEW IF EXISTS v", "DROP"), "DROP VIEW");
  EXPECT_EQ(CommandTagOf("DROP TABLE a, b", "DROP"), "DROP TABLE");
  EXPECT_EQ(CommandTagOf("ALTER TABLE t ADD COLUMN j INT", "ALTER"), "ALTER TABLE");
  EXPECT_EQ(CommandTagOf("ALTER TABLE t RENAME COLUMN j TO k", "ALTER"), "ALTER TABLE");
  EXPECT_EQ(CommandTagOf("ALTER VIEW v RENAME TO w", "ALTER"), "ALTER VIEW");
  EXPECT_EQ(CommandTagOf("COMMENT ON TABLE t IS 'x'", "ALTER"), "COMMENT");
  // DuckDB syntax PostgreSQL cannot parse keeps DuckDB's verb.
  EXPECT_EQ(CommandTagOf("CREATE MACRO m() AS 1", "CREATE"), "CREATE");
}

}  // namespace
}  // namespace weir::serve::compat
