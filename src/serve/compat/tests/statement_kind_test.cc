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

TEST(LakeWritingCallOf, FindsDuckLakeMaintenanceInEveryCallPosition) {
  EXPECT_EQ(LakeWritingCallOf("CALL ducklake_merge_adjacent_files('lake')"),
            "ducklake_merge_adjacent_files");
  EXPECT_EQ(LakeWritingCallOf("SELECT * FROM ducklake_cleanup_old_files('lake')"),
            "ducklake_cleanup_old_files");
  // DuckDB syntax PostgreSQL cannot parse, names qualified, quoted, in any case, in comments'
  // company and inside prepared statements and subqueries.
  EXPECT_EQ(LakeWritingCallOf("FROM ducklake_rewrite_data_files('lake', 't')"),
            "ducklake_rewrite_data_files");
  EXPECT_EQ(LakeWritingCallOf("CALL system.main.DuckLake_Flush_Inlined_Data('lake')"),
            "ducklake_flush_inlined_data");
  EXPECT_EQ(LakeWritingCallOf("CALL \"DUCKLAKE_EXPIRE_SNAPSHOTS\" /* x */ ('lake')"),
            "ducklake_expire_snapshots");
  EXPECT_EQ(LakeWritingCallOf("PREPARE p AS SELECT count(*) FROM "
                              "(SELECT * FROM ducklake_delete_orphaned_files('lake'))"),
            "ducklake_delete_orphaned_files");
  EXPECT_EQ(LakeWritingCallOf("CALL ducklake_some_future_function('lake')"),
            "ducklake_some_future_function");
  // Functions that run SQL given as text, and CHECKPOINT.
  EXPECT_EQ(LakeWritingCallOf("SELECT * FROM query('CALL x()')"), "query");
  EXPECT_EQ(LakeWritingCallOf("FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))"),
            "json_execute_serialized_sql");
  // The answer an Iceberg REST catalog gives carries its vended storage credentials.
  EXPECT_EQ(LakeWritingCallOf("SELECT config FROM Iceberg_Load_Table_Response('lake.main.t')"),
            "iceberg_load_table_response");
  EXPECT_EQ(LakeWritingCallOf("checkpoint lake"), "CHECKPOINT");
  EXPECT_EQ(LakeWritingCallOf("CALL force_checkpoint()"), "force_checkpoint");
  EXPECT_EQ(LakeWritingCallOf("SELECT U&\"d\\0075cklake_merge_adjacent_files\"('lake')"),
            "(a U& identifier)");
  EXPECT_EQ(LakeWritingCallOf("SELECT 'unterminated"), "(unscannable text)");
}

TEST(LakeWritingCallOf, LeavesReadsAlone) {
  EXPECT_EQ(LakeWritingCallOf("SELECT * FROM iceberg_snapshots('lake.main.t')"), "");
  EXPECT_EQ(LakeWritingCallOf("SELECT * FROM iceberg_metadata('lake.main.t')"), "");
  EXPECT_EQ(LakeWritingCallOf("SELECT * FROM ducklake_snapshots('lake')"), "");
  EXPECT_EQ(LakeWritingCallOf("FROM ducklake_table_info('lake')"), "");
  EXPECT_EQ(LakeWritingCallOf("SELECT * FROM ducklake_list_files('lake', 't')"), "");
  // Names that are not in call position, strings and comments.
  EXPECT_EQ(LakeWritingCallOf("SELECT query, state FROM pg_stat_activity"), "");
  EXPECT_EQ(LakeWritingCallOf("SELECT 'CALL ducklake_merge_adjacent_files(1)' AS s"), "");
  EXPECT_EQ(LakeWritingCallOf("SELECT 1 -- ducklake_merge_adjacent_files('lake')"), "");
  EXPECT_EQ(LakeWritingCallOf("SELECT ducklake_merge_adjacent_files FROM t"), "");
}

}  // namespace
}  // namespace weir::serve::compat
