#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "serve/compat/compat.h"

namespace weir::serve::compat {
namespace {

// The rewrite rules alone (result columns keep DuckDB's names; NamesColumns tests those).
std::string Rules(const std::string& sql) { return RewriteForDuckDb(sql, ColumnNames::kDuckDb); }

TEST(RewriteForDuckDb, DuckDbNativeStatementsComeBackByteIdentical) {
  for (const std::string sql : {
           "SELECT 1",
           "FROM events",
           "FROM events SELECT id WHERE id > 3",
           "SUMMARIZE events",
           "DESCRIBE events",
           "PIVOT events ON name USING count(*)",
           "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
           "SELECT * EXCLUDE (name) FROM events",
           "SELECT [1, 2, 3] AS l, {'a': 1} AS s",
           "SELECT list_transform([1, 2], x -> x + 1)",
           "INSERT INTO events (id, name) VALUES (1, 'a')",
           "UPDATE events SET name = 'b' WHERE id = 1",
           "CREATE TABLE t AS SELECT range AS id FROM range(10)",
           "SELECT count(*) FROM events WHERE name LIKE 'a%'",
           "SELECT id::VARCHAR, CAST(id AS DOUBLE) FROM events",
           "SHOW TABLES",
           "USE lake",
           "SET VARIABLE x = 1",
           "SELECT current_date, current_timestamp",
           "SELECT 'select pg_class from public' AS text",
       }) {
    EXPECT_EQ(Rules(sql), sql);
  }
}

TEST(RewriteForDuckDb, CatalogRelationsGoToWeirsCatalog) {
  EXPECT_EQ(Rules("SELECT relname FROM pg_catalog.pg_class c WHERE c.relkind = 'r'"),
            "SELECT relname FROM weir_catalog.weir_pg_catalog.pg_class c WHERE c.relkind = 'r'");
  EXPECT_EQ(Rules("select * from pg_namespace"),
            "select * from weir_catalog.weir_pg_catalog.pg_namespace");
  EXPECT_EQ(Rules("SELECT table_name FROM information_schema.tables"),
            "SELECT table_name FROM weir_catalog.weir_information_schema.tables");
  EXPECT_EQ(Rules("select column_name from \"lake\".information_schema.\"columns\""),
            "select column_name from weir_catalog.weir_information_schema.columns");
  EXPECT_EQ(Rules("SELECT (information_schema._pg_expandarray(i.indkey)).n FROM t i"),
            "SELECT (weir_catalog.weir_information_schema._pg_expandarray(i.indkey)).n FROM t i");
  // An information_schema view weir does not define stays DuckDB's.
  EXPECT_EQ(Rules("SELECT * FROM information_schema.character_sets"),
            "SELECT * FROM information_schema.character_sets");
  // A table written to is never one of the catalog's.
  EXPECT_EQ(Rules("CREATE TABLE pg_class (x INT)"), "CREATE TABLE pg_class (x INT)");
}

TEST(RewriteForDuckDb, PublicIsTheLakesMainSchema) {
  EXPECT_EQ(Rules("SELECT * FROM public.events"), "SELECT * FROM main.events");
  EXPECT_EQ(Rules("SELECT * FROM lake.public.events"), "SELECT * FROM lake.main.events");
  EXPECT_EQ(Rules("INSERT INTO public.events VALUES (1)"), "INSERT INTO main.events VALUES (1)");
  EXPECT_EQ(Rules("SELECT public.events.id FROM public.events"),
            "SELECT main.events.id FROM main.events");
  EXPECT_EQ(Rules("SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class"),
            "SELECT pg_class.relname FROM weir_catalog.weir_pg_catalog.pg_class");
  EXPECT_EQ(Rules("DROP TABLE IF EXISTS \"public\".\"t\""), "DROP TABLE IF EXISTS main.\"t\"");
  EXPECT_EQ(Rules("CREATE SCHEMA IF NOT EXISTS public"), "CREATE SCHEMA IF NOT EXISTS main");
}

TEST(RewriteForDuckDb, PsqlsPatternMatchAndCollation) {
  EXPECT_EQ(Rules("SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname "
                  "OPERATOR(pg_catalog.~) '^(events)$' COLLATE pg_catalog.default"),
            "SELECT c.oid FROM weir_catalog.weir_pg_catalog.pg_class c WHERE c.relname "
            "~ '(?s).*(?:^(events)$).*' ");
  EXPECT_EQ(Rules("SELECT 1 FROM pg_namespace n WHERE n.nspname !~ '^pg_'"),
            "SELECT 1 FROM weir_catalog.weir_pg_catalog.pg_namespace n WHERE n.nspname !~ "
            "'(?s).*(?:^pg_).*'");
  EXPECT_EQ(Rules("SELECT 'ABC' ~* 'b'"), "SELECT 'ABC' ~ '(?si).*(?:b).*'");
  EXPECT_EQ(Rules("SELECT 'it''s' ~ 't''s'"), "SELECT 'it''s' ~ '(?s).*(?:t''s).*'");
  EXPECT_EQ(Rules("SELECT 1 WHERE 'a_b' LIKE 'a\\_b'"),
            "SELECT 1 WHERE 'a_b' LIKE 'a\\_b' ESCAPE '\\'");
  EXPECT_EQ(Rules("SELECT 2 OPERATOR(pg_catalog.+) 3"), "SELECT 2 + 3");
}

TEST(RewriteForDuckDb, FunctionsResolveToWeirsOrDuckDbs) {
  EXPECT_EQ(Rules("SELECT pg_catalog.format_type(a.atttypid, a.atttypmod) FROM t a"),
            "SELECT weir_catalog.weir_pg_catalog.format_type(a.atttypid, a.atttypmod) FROM t a");
  EXPECT_EQ(Rules("SELECT pg_catalog.lower(x), pg_catalog.array_to_string(l, ',')"),
            "SELECT lower(x), array_to_string(l, ',')");
  EXPECT_EQ(Rules("SELECT current_schema()"),
            "SELECT weir_catalog.weir_pg_catalog.current_schema()");
  EXPECT_EQ(Rules("SELECT current_schema"), "SELECT weir_catalog.weir_pg_catalog.current_schema()");
  EXPECT_EQ(Rules("select pg_catalog.version()"), "select weir_catalog.weir_pg_catalog.version()");
  EXPECT_EQ(Rules("SELECT current_user, session_user"),
            "SELECT weir_catalog.weir_pg_catalog.weir_user_name(), "
            "weir_catalog.weir_pg_catalog.weir_user_name()");
  EXPECT_EQ(Rules("SELECT current_setting('server_version_num')"), "SELECT ('150000')");
  EXPECT_EQ(Rules("SELECT current_setting('threads')"), "SELECT current_setting('threads')");
  EXPECT_EQ(Rules("SELECT current_setting($1::VARCHAR)"),
            "SELECT weir_catalog.weir_pg_catalog.weir_current_setting($1::VARCHAR)");
  EXPECT_EQ(Rules("SELECT pg_catalog.current_setting(name, true) FROM t"),
            "SELECT weir_catalog.weir_pg_catalog.weir_current_setting(name, true) FROM t");
  EXPECT_EQ(Rules("SELECT json_build_object('a', 1)"), "SELECT json_object('a', 1)");
  // SQL-syntax functions are left alone.
  EXPECT_EQ(Rules("SELECT extract(year FROM d), substring(s FROM 1 FOR 2) FROM pg_x"),
            "SELECT extract(year FROM d), substring(s FROM 1 FOR 2) FROM pg_x");
}

TEST(RewriteForDuckDb, ObjectIdentifierCasts) {
  EXPECT_EQ(Rules("SELECT 'pg_class'::regclass"),
            "SELECT weir_catalog.weir_pg_catalog.weir_regclass_oid('pg_class')");
  EXPECT_EQ(Rules("SELECT '16385'::pg_catalog.regclass"),
            "SELECT weir_catalog.weir_pg_catalog.weir_regclass_oid('16385')");
  EXPECT_EQ(Rules("SELECT c.oid::pg_catalog.regclass FROM pg_class c"),
            "SELECT weir_catalog.weir_pg_catalog.weir_regclass_name(c.oid) FROM "
            "weir_catalog.weir_pg_catalog.pg_class c");
  EXPECT_EQ(Rules("SELECT c.reloftype::pg_catalog.regtype::pg_catalog.text FROM t c"),
            "SELECT weir_catalog.weir_pg_catalog.weir_regtype_name(c.reloftype)::text FROM t c");
  EXPECT_EQ(Rules("SELECT typinput = 'pg_catalog.array_in'::regproc FROM pg_type"),
            "SELECT typinput = 'array_in' FROM weir_catalog.weir_pg_catalog.pg_type");
  EXPECT_EQ(Rules("SELECT $1::regclass"),
            "SELECT weir_catalog.weir_pg_catalog.weir_regclass_oid($1)");
  EXPECT_EQ(Rules("SELECT CAST(x AS regtype) FROM t"),
            "SELECT weir_catalog.weir_pg_catalog.weir_regtype_name(x ) FROM t");
  EXPECT_EQ(Rules("SELECT 0::regclass"), "SELECT 0");
  EXPECT_EQ(Rules("SELECT (a + 1)::regclass FROM t"),
            "SELECT (weir_catalog.weir_pg_catalog.weir_regclass_name(a + 1)) FROM t");
  EXPECT_EQ(Rules("SELECT x::pg_catalog.int2[], y::name FROM t"),
            "SELECT x::int2[], y::VARCHAR FROM t");
}

TEST(RewriteForDuckDb, FunctionInFromNamesItsColumnAfterTheAlias) {
  EXPECT_EQ(Rules("SELECT a[s] FROM pg_catalog.generate_series(0, 3) s, t"),
            "SELECT a[s] FROM generate_series(0, 3) s(s), t");
  EXPECT_EQ(Rules("SELECT x FROM unnest(pg_catalog.current_schemas(true)) AS x"),
            "SELECT x FROM unnest(weir_catalog.weir_pg_catalog.current_schemas(true)) AS x(x)");
  EXPECT_EQ(Rules("SELECT r FROM generate_series(1, 3) AS s(r)"),
            "SELECT r FROM generate_series(1, 3) AS s(r)");
}

TEST(RewriteForDuckDb, SessionSettings) {
  EXPECT_EQ(Rules("SET application_name = 'PostgreSQL JDBC Driver'"),
            "SET VARIABLE pg_application_name = 'PostgreSQL JDBC Driver'");
  EXPECT_EQ(Rules("SET extra_float_digits = 3"), "SET VARIABLE pg_extra_float_digits = '3'");
  EXPECT_EQ(Rules("RESET application_name"), "RESET VARIABLE pg_application_name");
  EXPECT_EQ(Rules("SET search_path TO \"$user\", public"), "SET search_path = 'main'");
  EXPECT_EQ(Rules("SET search_path = other, public"), "SET search_path = 'other,main'");
  EXPECT_EQ(Rules("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "
                  "SERIALIZABLE"),
            "SET VARIABLE pg_default_transaction_isolation = 'serializable'");
  EXPECT_EQ(Rules("SHOW transaction isolation level"),
            "SELECT coalesce(CAST(getvariable('pg_transaction_isolation') AS VARCHAR), "
            "coalesce(getvariable('pg_default_transaction_isolation'), 'read committed')) AS "
            "\"transaction_isolation\"");
  EXPECT_EQ(Rules("SHOW server_version"), "SELECT '15.0 (weir)' AS \"server_version\"");
  EXPECT_EQ(Rules("BEGIN ISOLATION LEVEL READ COMMITTED"), "BEGIN TRANSACTION");
  EXPECT_EQ(Rules("START TRANSACTION READ ONLY"), "BEGIN TRANSACTION READ ONLY");
  EXPECT_EQ(Rules("BEGIN"), "BEGIN");
  EXPECT_EQ(Rules("SAVEPOINT \"_pg3_1\""), "SET VARIABLE weir_savepoint = '_pg3_1'");
  EXPECT_EQ(Rules("RELEASE SAVEPOINT \"_pg3_1\""), "RESET VARIABLE weir_savepoint");
  EXPECT_EQ(Rules("ROLLBACK TO SAVEPOINT s").substr(0, 13), "SELECT error(");
  // Settings DuckDB owns are DuckDB's to accept or refuse.
  EXPECT_EQ(Rules("SET threads = 4"), "SET threads = 4");
  EXPECT_EQ(Rules("SET memory_limit = '1GB'"), "SET memory_limit = '1GB'");
}

// Each rule alone, in a statement with no other word that lets the rewriter look at it: the
// substrings that decide whether a statement is parsed at all must cover every rule.
TEST(RewriteForDuckDb, EachRuleIsReachedOnItsOwn) {
  for (const auto& [pg, duck] : std::vector<std::pair<std::string, std::string>>{
           {"name", "VARCHAR"},
           {"jsonb", "JSON"},
           {"xid8", "BIGINT"},
           {"cid", "BIGINT"},
           {"tid", "VARCHAR"},
           {"oidvector", "VARCHAR"},
           {"int2vector", "VARCHAR"},
           {"aclitem", "VARCHAR"},
           {"anyarray", "VARCHAR"},
           {"cstring", "VARCHAR"},
           {"xml", "VARCHAR"},
           {"inet", "VARCHAR"},
           {"cidr", "VARCHAR"},
           {"macaddr", "VARCHAR"},
           {"money", "DOUBLE"},
       }) {
    EXPECT_EQ(Rules("SELECT x::" + pg + " FROM t"), "SELECT x::" + duck + " FROM t");
  }
  EXPECT_EQ(Rules("SELECT g FROM generate_series(1, 3) g"),
            "SELECT g FROM generate_series(1, 3) g(g)");
  EXPECT_EQ(Rules("SELECT u FROM unnest(ARRAY[1, 2]) u"), "SELECT u FROM unnest(ARRAY[1, 2]) u(u)");
  EXPECT_EQ(Rules("RELEASE s"), "RESET VARIABLE weir_savepoint");
  EXPECT_EQ(Rules("ROLLBACK TO s").substr(0, 13), "SELECT error(");
  EXPECT_EQ(Rules("SELECT 'a' ~ 'b'"), "SELECT 'a' ~ '(?s).*(?:b).*'");
  EXPECT_EQ(Rules("SELECT x FROM t WHERE x LIKE 'a\\_b'"),
            "SELECT x FROM t WHERE x LIKE 'a\\_b' ESCAPE '\\'");
  EXPECT_EQ(Rules("SELECT x COLLATE \"C\" FROM t"), "SELECT x  FROM t");
  EXPECT_EQ(Rules("SELECT user"), "SELECT weir_catalog.weir_pg_catalog.weir_user_name()");
  EXPECT_EQ(Rules("SELECT jsonb_build_object('a', 1)"), "SELECT json_object('a', 1)");
  EXPECT_EQ(Rules("SELECT col_description(1, 2)"),
            "SELECT weir_catalog.weir_pg_catalog.col_description(1, 2)");
  EXPECT_EQ(Rules("SELECT to_regclass('t')"),
            "SELECT weir_catalog.weir_pg_catalog.to_regclass('t')");
  EXPECT_EQ(Rules("SELECT array_upper(a, 1) FROM t"),
            "SELECT weir_catalog.weir_pg_catalog.array_upper(a, 1) FROM t");
  EXPECT_EQ(Rules("SELECT version()"), "SELECT weir_catalog.weir_pg_catalog.version()");
}

// Statements without any of those substrings are returned as sent, neither scanned nor parsed.
TEST(RewriteForDuckDb, PlainStatementsAreReturnedAsSent) {
  for (const std::string sql : {"SELECT 1", "select count(*) FROM events WHERE id > 3",
                                "INSERT INTO events VALUES (1, 'a')"}) {
    EXPECT_EQ(Rules(sql), sql);
  }
}

TEST(RewriteForDuckDb, UnparsableTextPassesThrough) {
  EXPECT_EQ(Rules("SELECT * FROM pg_class WHERE"), "SELECT * FROM pg_class WHERE");
  EXPECT_EQ(Rules("SELECT 'unterminated pg_class"), "SELECT 'unterminated pg_class");
}

// PostgreSQL's names for computed result columns (FigureColname), each as an alias DuckDB
// keeps; a column reference or an aliased column is left as written.
TEST(RewriteForDuckDb, ResultColumnsArePostgresNamed) {
  for (const auto& [sql, expected] : std::vector<std::pair<std::string, std::string>>{
           {"SELECT 1", R"(SELECT 1 AS "?column?")"},
           {"SELECT count(*) FROM t", R"(SELECT count(*) AS "count" FROM t)"},
           {"select k, count(*), sum(v) from t group by k",
            R"(select k, count(*) AS "count", sum(v) AS "sum" from t group by k)"},
           {"SELECT min(v), max(v), avg(v) FROM t",
            R"(SELECT min(v) AS "min", max(v) AS "max", avg(v) AS "avg" FROM t)"},
           {"SELECT coalesce(a, 0), nullif(a, 1), greatest(a, b) FROM t",
            R"(SELECT coalesce(a, 0) AS "coalesce", nullif(a, 1) AS "nullif", )"
            R"(greatest(a, b) AS "greatest" FROM t)"},
           {"SELECT 1::int4, '2'::text, a::text, CAST(b AS integer) FROM t",
            R"(SELECT 1::int4 AS "int4", '2'::text AS "text", a::text AS "a", )"
            R"(CAST(b AS integer) AS "b" FROM t)"},
           // DuckDB names the date and time keywords as PostgreSQL does, and would bind an
           // alias of that name inside the expression.
           {"SELECT now(), current_date, 2 + 3, current_timestamp",
            R"(SELECT now() AS "now", current_date, 2 + 3 AS "?column?", current_timestamp)"},
           {"SELECT CASE WHEN a THEN 1 END, CASE WHEN a THEN b ELSE c END FROM t",
            R"(SELECT CASE WHEN a THEN 1 END AS "case", CASE WHEN a THEN b ELSE c END AS "c" )"
            R"(FROM t)"},
           {"SELECT EXISTS (SELECT 1), (SELECT max(v) FROM t), ARRAY[1, 2], ROW(1, 2)",
            R"(SELECT EXISTS (SELECT 1) AS "exists", (SELECT max(v) FROM t) AS "max", )"
            R"(ARRAY[1, 2] AS "array", ROW(1, 2) AS "row")"},
           {"SELECT a IS DISTINCT FROM b, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM t",
            R"(SELECT a IS DISTINCT FROM b AS "?column?", percentile_cont(0.5) WITHIN GROUP )"
            R"((ORDER BY v) AS "percentile_cont" FROM t)"},
           {"SELECT trim(' a '), substring('abc' FROM 2 FOR 1), extract(year FROM d) FROM t",
            R"(SELECT trim(' a ') AS "btrim", substring('abc' FROM 2 FOR 1) AS "substring", )"
            R"(extract(year FROM d) AS "extract" FROM t)"},
           {"SELECT k, v AS total, t.* FROM t", "SELECT k, v AS total, t.* FROM t"},
           {"SELECT a[1], (s).f, (s).g[2] FROM t",
            R"(SELECT a[1] AS "a", (s).f AS "f", (s).g[2] AS "g" FROM t)"},
           {"SELECT sum(v) FROM a UNION ALL SELECT count(*) FROM b ORDER BY 1",
            R"(SELECT sum(v) AS "sum" FROM a UNION ALL SELECT count(*) FROM b ORDER BY 1)"},
           {"WITH w AS (SELECT 1 AS x) SELECT x + 1 FROM w",
            R"(WITH w AS (SELECT 1 AS x) SELECT x + 1 AS "?column?" FROM w)"},
           {"SELECT * FROM (SELECT count(*) FROM t) s", "SELECT * FROM (SELECT count(*) FROM t) s"},
           {"SELECT length(x) FROM t WHERE x <> '' LIMIT 1",
            R"(SELECT length(x) AS "length" FROM t WHERE x <> '' LIMIT 1)"},
       }) {
    EXPECT_EQ(RewriteForDuckDb(sql), expected) << sql;
  }
  // Rules and names together: the rule's edit, then the name.
  EXPECT_EQ(RewriteForDuckDb("SELECT current_user"),
            R"(SELECT weir_catalog.weir_pg_catalog.weir_user_name() AS "current_user")");
  EXPECT_EQ(RewriteForDuckDb("SELECT version();"),
            R"(SELECT weir_catalog.weir_pg_catalog.version() AS "version";)");
  // Statements that are not queries are untouched.
  EXPECT_EQ(RewriteForDuckDb("INSERT INTO t SELECT 1"), "INSERT INTO t SELECT 1");
}

}  // namespace
}  // namespace weir::serve::compat
