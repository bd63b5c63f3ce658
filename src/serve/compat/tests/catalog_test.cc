// The catalog on a real DuckDB: an in-memory database with an in-memory `lake` attached, the
// objects installed once and the sandbox locked as the engine does, then clients' queries
// (rewritten as the engine does) from a second connection.
#include <duckdb.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "serve/compat/compat.h"
#include "serve/compat/names.h"

namespace weir::serve::compat {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// What serve registers as weir_stat_activity() (engine_activity.cc), with one session.
constexpr const char* kStatActivityStandIn =
    "CREATE MACRO lake.main.weir_stat_activity() AS TABLE SELECT 1000 AS pid, 'weir' AS usename, "
    "'psql' AS application_name, '127.0.0.1' AS client_addr, 5000 AS client_port, "
    "TIMESTAMPTZ '2026-01-01 00:00:00+00' AS backend_start, "
    "CAST(NULL AS TIMESTAMPTZ) AS xact_start, TIMESTAMPTZ '2026-01-01 00:00:01+00' AS "
    "query_start, TIMESTAMPTZ '2026-01-01 00:00:02+00' AS state_change, 'idle' AS state, "
    "'SELECT 1' AS query, true AS visible";

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(duckdb_open(nullptr, &db_), DuckDBSuccess);
    ASSERT_EQ(duckdb_connect(db_, &setup_), DuckDBSuccess);
    Exec(setup_,
         "ATTACH ':memory:' AS lake; USE lake; "
         "CREATE TABLE events (id BIGINT NOT NULL, name VARCHAR, even BOOLEAN, score DOUBLE, "
         "ts TIMESTAMPTZ, amount DECIMAL(18,3), tags INTEGER[], small SMALLINT, tiny TINYINT, "
         "i INTEGER, r FLOAT, d DATE, t TIME, plain TIMESTAMP, iv INTERVAL, u UUID, b BLOB, "
         "names VARCHAR[], big HUGEINT, s STRUCT(a INT), grid INTEGER[][], j JSON, "
         "tz TIMETZ, amounts DECIMAL(9,2)[], fixed DOUBLE[3], structs STRUCT(a INT)[]); "
         "COMMENT ON TABLE events IS 'what happened'; "
         "CREATE SCHEMA other; CREATE TABLE other.o2 (x INTEGER); "
         "CREATE VIEW v1 AS SELECT 1 AS one");
    Exec(setup_, kStatActivityStandIn);
    auto installed = InstallCatalog(setup_);
    ASSERT_TRUE(installed.ok()) << installed.ToString();
    Exec(setup_,
         "SET allowed_directories = ['/nonexistent-weir']; SET enable_external_access = false; "
         "SET lock_configuration = true");
    ASSERT_EQ(duckdb_connect(db_, &session_), DuckDBSuccess);
    Exec(session_, "USE lake");
  }
  void TearDown() override {
    duckdb_disconnect(&session_);
    duckdb_disconnect(&setup_);
    duckdb_close(&db_);
  }

  static void Exec(duckdb_connection connection, const std::string& sql) {
    duckdb_result result;
    const bool ok = duckdb_query(connection, sql.c_str(), &result) == DuckDBSuccess;
    EXPECT_TRUE(ok) << sql << ": " << duckdb_result_error(&result);
    duckdb_destroy_result(&result);
  }

  // Runs `sql` as a client's statement (rewritten first); values as text, NULL as "NULL".
  Rows Query(const std::string& sql) {
    const std::string rewritten = RewriteForDuckDb(sql);
    duckdb_result result;
    Rows rows;
    if (duckdb_query(session_, rewritten.c_str(), &result) != DuckDBSuccess) {
      ADD_FAILURE() << rewritten << ": " << duckdb_result_error(&result);
      duckdb_destroy_result(&result);
      return rows;
    }
    for (idx_t r = 0; r < duckdb_row_count(&result); ++r) {
      std::vector<std::string> row;
      for (idx_t c = 0; c < duckdb_column_count(&result); ++c) {
        char* text = duckdb_value_varchar(&result, c, r);
        row.push_back(text == nullptr ? "NULL" : text);
        duckdb_free(text);
      }
      rows.push_back(row);
    }
    duckdb_destroy_result(&result);
    return rows;
  }

  // Runs `sql` as it is; the type of DuckDB's error (DUCKDB_ERROR_INVALID on success).
  duckdb_error_type ErrorOf(const std::string& sql) {
    duckdb_result result;
    const bool ok = duckdb_query(session_, sql.c_str(), &result) == DuckDBSuccess;
    const duckdb_error_type type = ok ? DUCKDB_ERROR_INVALID : duckdb_result_error_type(&result);
    duckdb_destroy_result(&result);
    return type;
  }

  duckdb_database db_ = nullptr;
  duckdb_connection setup_ = nullptr;
  duckdb_connection session_ = nullptr;
};

TEST_F(CatalogTest, EveryNamedObjectExists) {
  for (std::string_view name : PgCatalogRelations()) {
    EXPECT_EQ(Query("SELECT count(*) FROM duckdb_views() WHERE database_name = 'weir_catalog' AND "
                    "schema_name = 'weir_pg_catalog' AND view_name = '" +
                    std::string(name) + "'"),
              (Rows{{"1"}}))
        << name;
  }
  for (std::string_view name : InformationSchemaRelations()) {
    EXPECT_EQ(Query("SELECT count(*) FROM duckdb_views() WHERE database_name = 'weir_catalog' AND "
                    "schema_name = 'weir_information_schema' AND view_name = '" +
                    std::string(name) + "'"),
              (Rows{{"1"}}))
        << name;
  }
  for (std::string_view name : PgCatalogFunctions()) {
    EXPECT_EQ(Query("SELECT count(DISTINCT function_name) FROM duckdb_functions() WHERE "
                    "database_name = 'weir_catalog' AND schema_name = 'weir_pg_catalog' AND "
                    "function_name = '" +
                    std::string(name) + "'"),
              (Rows{{"1"}}))
        << name;
  }
  for (std::string_view name : InformationSchemaFunctions()) {
    EXPECT_EQ(
        Query("SELECT count(DISTINCT function_name) FROM duckdb_functions() WHERE "
              "database_name = 'weir_catalog' AND schema_name = 'weir_information_schema' AND "
              "function_name = '" +
              std::string(name) + "'"),
        (Rows{{"1"}}))
        << name;
  }
  // Every view binds and answers (empty ones included).
  for (std::string_view name : PgCatalogRelations()) {
    Query("SELECT * FROM pg_catalog." + std::string(name));
  }
  for (std::string_view name : InformationSchemaRelations()) {
    Query("SELECT * FROM information_schema." + std::string(name));
  }
}

// The catalog lives in a database attached read-only: whatever a session writes to it fails
// with DuckDB's read-only error (InvalidInput), and the catalog answers as before.
TEST_F(CatalogTest, SessionsCannotChangeTheCatalog) {
  for (const std::string sql : {
           "DROP VIEW weir_catalog.weir_pg_catalog.pg_class",
           "DROP VIEW IF EXISTS \"weir_catalog\".\"weir_pg_catalog\".\"pg_namespace\"",
           "DROP SCHEMA weir_catalog.weir_pg_catalog CASCADE",
           "DROP SCHEMA weir_catalog.weir_information_schema CASCADE",
           "CREATE OR REPLACE VIEW weir_catalog.weir_pg_catalog.pg_class AS SELECT 1 AS oid",
           "CREATE TABLE weir_catalog.weir_information_schema.x (i INTEGER)",
           "CREATE SCHEMA weir_catalog.extra",
           "CREATE OR REPLACE MACRO weir_catalog.weir_pg_catalog.version() AS 'x'",
           "DROP MACRO weir_catalog.weir_pg_catalog.format_type",
           "ALTER VIEW weir_catalog.weir_pg_catalog.pg_class RENAME TO gone",
           "COMMENT ON VIEW weir_catalog.weir_pg_catalog.pg_class IS 'x'",
           "CREATE TABLE weir_catalog.main.t (i INTEGER)",
       }) {
    EXPECT_EQ(ErrorOf(sql), DUCKDB_ERROR_INVALID_INPUT) << sql;
  }
  // With the catalog as the session's default schema, unqualified names are refused the same.
  EXPECT_EQ(ErrorOf("USE weir_catalog.weir_pg_catalog"), DUCKDB_ERROR_INVALID);
  EXPECT_EQ(ErrorOf("DROP VIEW pg_type"), DUCKDB_ERROR_INVALID_INPUT);
  EXPECT_EQ(ErrorOf("CREATE VIEW pg_extra AS SELECT 1"), DUCKDB_ERROR_INVALID_INPUT);
  EXPECT_EQ(ErrorOf("USE lake"), DUCKDB_ERROR_INVALID);
  // What clients write, rewritten: DDL on pg_catalog names is never sent to weir's catalog.
  EXPECT_NE(ErrorOf(RewriteForDuckDb("DROP VIEW pg_catalog.pg_class")), DUCKDB_ERROR_INVALID);
  EXPECT_NE(ErrorOf(RewriteForDuckDb("CREATE OR REPLACE VIEW pg_catalog.pg_class AS SELECT 1")),
            DUCKDB_ERROR_INVALID);
  EXPECT_EQ(Query("SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                  "ON n.oid = c.relnamespace WHERE n.nspname = 'public'"),
            (Rows{{"2"}}));
  EXPECT_EQ(Query("SELECT count(*) FROM information_schema.tables WHERE table_name = 'events'"),
            (Rows{{"1"}}));
}

// The database file exists only while the catalog is built: what is left in the temporary
// directory afterwards is nothing, and the attached catalog still answers.
TEST(InstallCatalog, LeavesNothingInTheTemporaryDirectory) {
  const std::filesystem::path temp =
      std::filesystem::temp_directory_path() / ("weir-catalog-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(temp);
  const char* previous = getenv("TMPDIR");
  const std::string saved = previous == nullptr ? "" : previous;
  setenv("TMPDIR", temp.c_str(), 1);
  duckdb_database db = nullptr;
  duckdb_connection conn = nullptr;
  ASSERT_EQ(duckdb_open(nullptr, &db), DuckDBSuccess);
  ASSERT_EQ(duckdb_connect(db, &conn), DuckDBSuccess);
  duckdb_result result;
  ASSERT_EQ(duckdb_query(conn, "ATTACH ':memory:' AS lake", &result), DuckDBSuccess);
  duckdb_destroy_result(&result);
  ASSERT_EQ(duckdb_query(conn, "USE lake", &result), DuckDBSuccess);
  duckdb_destroy_result(&result);
  ASSERT_EQ(duckdb_query(conn, kStatActivityStandIn, &result), DuckDBSuccess);
  duckdb_destroy_result(&result);
  const Status installed = InstallCatalog(conn);
  if (previous == nullptr) {
    unsetenv("TMPDIR");
  } else {
    setenv("TMPDIR", saved.c_str(), 1);
  }
  EXPECT_TRUE(installed.ok()) << installed.ToString();
  EXPECT_TRUE(std::filesystem::is_empty(temp));
  const std::string sql =
      RewriteForDuckDb("SELECT count(*) FROM pg_catalog.pg_type WHERE typname = 'int4'");
  ASSERT_EQ(duckdb_query(conn, sql.c_str(), &result), DuckDBSuccess)
      << duckdb_result_error(&result);
  EXPECT_EQ(duckdb_value_int64(&result, 0, 0), 1);
  duckdb_destroy_result(&result);
  duckdb_disconnect(&conn);
  duckdb_close(&db);
  std::filesystem::remove_all(temp);
}

TEST_F(CatalogTest, TablesAndSchemasAsPsqlListsThem) {
  // psql's \dt
  EXPECT_EQ(Query(R"(SELECT n.nspname as "Schema",
  c.relname as "Name",
  CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' END as "Type",
  pg_catalog.pg_get_userbyid(c.relowner) as "Owner"
FROM pg_catalog.pg_class c
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam
WHERE c.relkind IN ('r','p','v','')
      AND n.nspname <> 'pg_catalog'
      AND n.nspname !~ '^pg_toast'
      AND n.nspname <> 'information_schema'
  AND pg_catalog.pg_table_is_visible(c.oid)
ORDER BY 1,2)"),
            (Rows{{"public", "events", "table", "weir"}, {"public", "v1", "view", "weir"}}));
  // psql's \dn
  EXPECT_EQ(Query("SELECT n.nspname AS \"Name\", pg_catalog.pg_get_userbyid(n.nspowner) AS "
                  "\"Owner\" FROM pg_catalog.pg_namespace n WHERE n.nspname !~ '^pg_' AND "
                  "n.nspname <> 'information_schema' ORDER BY 1"),
            (Rows{{"other", "weir"}, {"public", "weir"}}));
  // psql's \l
  EXPECT_EQ(Query("SELECT d.datname, pg_catalog.pg_get_userbyid(d.datdba), "
                  "pg_catalog.pg_encoding_to_char(d.encoding), d.datcollate, d.datctype, "
                  "d.daticulocale, CASE d.datlocprovider WHEN 'c' THEN 'libc' END, "
                  "pg_catalog.array_to_string(d.datacl, E'\\n') FROM pg_catalog.pg_database d "
                  "ORDER BY 1"),
            (Rows{{"lake", "weir", "UTF8", "C", "C", "NULL", "libc", "NULL"}}));
}

TEST_F(CatalogTest, ColumnsWithPostgresTypeNames) {
  const Rows oid = Query(
      "SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) "
      "'^(events)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid)");
  ASSERT_EQ(oid.size(), 1u);
  EXPECT_EQ(Query("SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), "
                  "a.attnotnull FROM pg_catalog.pg_attribute a WHERE a.attrelid = '" +
                  oid[0][0] + "' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"),
            (Rows{{"id", "bigint", "true"},
                  {"name", "text", "false"},
                  {"even", "boolean", "false"},
                  {"score", "double precision", "false"},
                  {"ts", "timestamp with time zone", "false"},
                  {"amount", "numeric(18,3)", "false"},
                  {"tags", "integer[]", "false"},
                  {"small", "smallint", "false"},
                  {"tiny", "smallint", "false"},
                  {"i", "integer", "false"},
                  {"r", "real", "false"},
                  {"d", "date", "false"},
                  {"t", "time without time zone", "false"},
                  {"plain", "timestamp without time zone", "false"},
                  {"iv", "interval", "false"},
                  {"u", "uuid", "false"},
                  {"b", "bytea", "false"},
                  {"names", "text[]", "false"},
                  {"big", "numeric", "false"},
                  {"s", "text", "false"},
                  {"grid", "integer[]", "false"},
                  {"j", "json", "false"},
                  {"tz", "time with time zone", "false"},
                  {"amounts", "numeric(9,2)[]", "false"},
                  {"fixed", "double precision[]", "false"},
                  {"structs", "text[]", "false"}}));
  // A literal names an object (its OID); any other expression is shown as the object's name.
  EXPECT_EQ(Query("SELECT obj_description('public.events'::regclass, 'pg_class'), "
                  "'events'::regclass = " +
                  oid[0][0] +
                  ", c.oid::regclass, "
                  "'pg_catalog.pg_class'::regclass FROM pg_class c WHERE c.oid = " +
                  oid[0][0]),
            (Rows{{"what happened", "true", "events", "1259"}}));
}

TEST_F(CatalogTest, MacroArgumentsAreNotCapturedByTheirSubqueries) {
  // The macros' subqueries have relations with columns named like the callers' (oid, c.oid);
  // the arguments still mean the caller's columns.
  EXPECT_EQ(Query("SELECT relname, oid::regclass, obj_description(oid, 'pg_class') FROM pg_class "
                  "WHERE pg_table_is_visible(oid) AND relnamespace = 2200 ORDER BY 1"),
            (Rows{{"events", "events", "what happened"}, {"v1", "v1", "NULL"}}));
  EXPECT_EQ(Query("SELECT c.relname, pg_get_userbyid(c.relowner) FROM pg_class c "
                  "WHERE pg_table_is_visible(c.oid) AND c.relname = 'o2'"),
            (Rows{}));
}

TEST_F(CatalogTest, InformationSchemaShowsPublic) {
  EXPECT_EQ(Query("SELECT table_schema, table_name, table_type FROM information_schema.tables "
                  "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 2"),
            (Rows{{"public", "events", "BASE TABLE"},
                  {"other", "o2", "BASE TABLE"},
                  {"public", "v1", "VIEW"}}));
  EXPECT_EQ(Query("SELECT column_name, data_type, udt_name, numeric_precision, numeric_scale "
                  "FROM information_schema.columns WHERE table_schema = 'public' AND "
                  "table_name = 'events' AND ordinal_position IN (1, 6, 7) ORDER BY 1"),
            (Rows{{"amount", "numeric", "numeric", "18", "3"},
                  {"id", "bigint", "int8", "64", "0"},
                  {"tags", "ARRAY", "_int4", "NULL", "NULL"}}));
  EXPECT_EQ(Query("SELECT schema_name FROM information_schema.schemata ORDER BY 1"),
            (Rows{{"information_schema"}, {"other"}, {"pg_catalog"}, {"public"}}));
}

TEST_F(CatalogTest, SessionSettingsAndFunctions) {
  EXPECT_EQ(Query("SELECT current_schema(), (pg_catalog.current_schemas(true))[1]"),
            (Rows{{"public", "pg_catalog"}}));
  Query("SET application_name = 'psql'");
  EXPECT_EQ(Query("SHOW application_name"), (Rows{{"psql"}}));
  EXPECT_EQ(Query("SELECT current_setting('application_name')"), (Rows{{"psql"}}));
  EXPECT_EQ(Query("SHOW search_path"), (Rows{{"\"$user\", public"}}));
  Query("SET search_path TO other, public");
  EXPECT_EQ(Query("SHOW search_path"), (Rows{{"other, public"}}));
  EXPECT_EQ(Query("SELECT count(*) FROM o2"), (Rows{{"0"}}));
  EXPECT_EQ(Query("SHOW transaction isolation level"), (Rows{{"read committed"}}));
  EXPECT_EQ(Query("SELECT typname FROM pg_type WHERE oid = 'int4'::regtype"), (Rows{{"int4"}}));
  EXPECT_EQ(
      Query("SELECT name, current_setting(name) FROM (VALUES ('default_table_access_method'), "
            "('APPLICATION_NAME'), ('threads'), ('no_such_setting')) AS t(name) ORDER BY 1"),
      (Rows{{"APPLICATION_NAME", "psql"},
            {"default_table_access_method", "heap"},
            {"no_such_setting", "NULL"},
            {"threads", Query("SELECT current_setting('threads')")[0][0]}}));
  EXPECT_EQ(Query("SELECT pg_catalog.array_upper(ARRAY[1, 2, 3], 1)"), (Rows{{"3"}}));
  EXPECT_EQ(Query("SELECT starts_with(version(), 'PostgreSQL 15.0')"), (Rows{{"true"}}));
}

}  // namespace
}  // namespace weir::serve::compat
