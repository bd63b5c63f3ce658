// pg_catalog's relations as views over DuckDB's own catalog functions (duckdb_tables(),
// duckdb_columns(), ...), showing the lake: its schema main as public, its tables and views
// with PostgreSQL type OIDs. Catalogs weir has nothing for (indexes, constraints, triggers,
// policies, publications, ...) are empty views with PostgreSQL's columns, so that clients'
// queries joining them bind and return what PostgreSQL returns for a table without them.
#include <string>
#include <utility>
#include <vector>

#include "base/sql_quote.h"
#include "serve/compat/catalog_sql.h"
#include "serve/compat/settings.h"

namespace weir::serve::compat {
namespace {

using Columns = std::vector<std::pair<const char*, const char*>>;

// An empty relation with PostgreSQL's columns (name, DuckDB type).
std::string Empty(const char* name, const Columns& columns) {
  std::string select;
  for (const auto& [column, type] : columns) {
    select += std::string(select.empty() ? "" : ", ") + "CAST(NULL AS " + type + ") AS " + column;
  }
  return QualifySchemas(std::string("CREATE VIEW @.") + name + " AS SELECT " + select +
                        " WHERE false");
}

// The relations weir shows: the lake's tables and views, and weir's own catalog views (with
// PostgreSQL's OIDs for the system catalogs, so 'pg_class'::regclass is 1259 as clients
// expect). `schema_name` is DuckDB's; relnamespace PostgreSQL's.
constexpr const char* kRelations = R"(CREATE VIEW @.weir_relations AS
SELECT t.table_oid AS oid, t.database_name, t.schema_name, t.table_name AS relname, 'r' AS relkind,
  @.weir_namespace_oid(t.schema_name, t.schema_oid) AS relnamespace,
  t.estimated_size, t.column_count, t.index_count, t.check_constraint_count, t.comment,
  CAST(NULL AS VARCHAR) AS definition
FROM duckdb_tables() t WHERE t.database_name = 'lake'
UNION ALL
SELECT v.view_oid, v.database_name, v.schema_name, v.view_name, 'v',
  @.weir_namespace_oid(v.schema_name, v.schema_oid), 0, v.column_count, 0, 0, v.comment, v.sql
FROM duckdb_views() v WHERE v.database_name = 'lake' AND NOT v.internal
UNION ALL
SELECT coalesce(@.weir_system_relation_oid(v.view_name), v.view_oid), v.database_name,
  v.schema_name, v.view_name,
  CASE WHEN @.weir_system_relation_oid(v.view_name) IS NULL THEN 'v' ELSE 'r' END,
  CASE v.schema_name WHEN 'weir_pg_catalog' THEN 11 ELSE 13183 END, 0, v.column_count, 0, 0,
  NULL, v.sql
FROM duckdb_views() v
WHERE v.database_name = '@catalog' AND v.schema_name IN ('weir_pg_catalog', 'weir_information_schema')
  AND NOT starts_with(v.view_name, 'weir_'))";

constexpr const char* kNamespace = R"(CREATE VIEW @.pg_namespace AS
SELECT CAST(11 AS BIGINT) AS oid, 'pg_catalog' AS nspname, CAST(10 AS BIGINT) AS nspowner,
  CAST(NULL AS VARCHAR[]) AS nspacl
UNION ALL SELECT 13183, 'information_schema', 10, NULL
UNION ALL
SELECT @.weir_namespace_oid(s.schema_name, s.oid), @.weir_namespace_name(s.schema_name), 10, NULL
FROM duckdb_schemas() s WHERE s.database_name = 'lake')";

constexpr const char* kClass = R"(CREATE VIEW @.pg_class AS
SELECT r.oid, r.relname, r.relnamespace, CAST(0 AS BIGINT) AS reltype,
  CAST(0 AS BIGINT) AS reloftype, CAST(10 AS BIGINT) AS relowner,
  CAST(CASE r.relkind WHEN 'r' THEN 2 ELSE 0 END AS BIGINT) AS relam, r.oid AS relfilenode,
  CAST(0 AS BIGINT) AS reltablespace, 0 AS relpages, CAST(r.estimated_size AS REAL) AS reltuples,
  0 AS relallvisible, CAST(0 AS BIGINT) AS reltoastrelid, r.index_count > 0 AS relhasindex,
  false AS relisshared, 'p' AS relpersistence, r.relkind,
  CAST(r.column_count AS SMALLINT) AS relnatts,
  CAST(r.check_constraint_count AS SMALLINT) AS relchecks, false AS relhasrules,
  false AS relhastriggers, false AS relhassubclass, false AS relrowsecurity,
  false AS relforcerowsecurity, true AS relispopulated, 'd' AS relreplident,
  false AS relispartition, CAST(0 AS BIGINT) AS relrewrite, CAST(0 AS BIGINT) AS relfrozenxid,
  CAST(0 AS BIGINT) AS relminmxid, CAST(NULL AS VARCHAR[]) AS relacl,
  CAST(NULL AS VARCHAR[]) AS reloptions, CAST(NULL AS VARCHAR) AS relpartbound
FROM @.weir_relations r)";

// Columns of every relation weir shows, typed as the engine presents them.
constexpr const char* kColumns = R"(CREATE VIEW @.weir_columns AS
SELECT r.oid AS attrelid, c.column_name, c.column_index, c.data_type,
  @.weir_type_oid(c.data_type) AS atttypid, @.weir_type_mod(c.data_type) AS atttypmod,
  c.is_nullable, c.column_default, c.comment, c.numeric_precision, c.numeric_scale,
  r.relnamespace, r.relname, r.schema_name, r.relkind
FROM duckdb_columns() c
JOIN @.weir_relations r
  ON r.database_name = c.database_name AND r.schema_name = c.schema_name
  AND r.relname = c.table_name)";

constexpr const char* kAttribute = R"(CREATE VIEW @.pg_attribute AS
SELECT c.attrelid, c.column_name AS attname, c.atttypid, CAST(-1 AS SMALLINT) AS attstattarget,
  t.typlen AS attlen, CAST(c.column_index AS SMALLINT) AS attnum,
  CAST(CASE WHEN t.typcategory = 'A' THEN 1 ELSE 0 END AS SMALLINT) AS attndims,
  -1 AS attcacheoff, c.atttypmod, t.typbyval AS attbyval, t.typalign AS attalign,
  t.typstorage AS attstorage, '' AS attcompression, NOT c.is_nullable AS attnotnull,
  (c.column_default IS NOT NULL AND c.column_default <> 'NULL') AS atthasdef,
  false AS atthasmissing, '' AS attidentity, '' AS attgenerated, false AS attisdropped,
  true AS attislocal, CAST(0 AS SMALLINT) AS attinhcount, t.typcollation AS attcollation,
  CAST(NULL AS VARCHAR[]) AS attacl, CAST(NULL AS VARCHAR[]) AS attoptions,
  CAST(NULL AS VARCHAR[]) AS attfdwoptions, CAST(NULL AS VARCHAR) AS attmissingval
FROM @.weir_columns c LEFT JOIN @.weir_types t ON t.oid = c.atttypid)";

constexpr const char* kAttrdef = R"(CREATE VIEW @.pg_attrdef AS
SELECT c.attrelid * 10000 + c.column_index AS oid, c.attrelid AS adrelid,
  CAST(c.column_index AS SMALLINT) AS adnum, c.column_default AS adbin
FROM @.weir_columns c WHERE c.column_default IS NOT NULL AND c.column_default <> 'NULL')";

constexpr const char* kType = R"(CREATE VIEW @.pg_type AS
SELECT t.oid, t.typname, CAST(11 AS BIGINT) AS typnamespace, CAST(10 AS BIGINT) AS typowner,
  t.typlen, t.typbyval, t.typtype, t.typcategory,
  t.typname IN ('bool', 'text', 'float8', 'timestamptz', 'interval', 'oid') AS typispreferred,
  true AS typisdefined, ',' AS typdelim, CAST(0 AS BIGINT) AS typrelid,
  CASE WHEN t.typcategory = 'A' THEN 'array_subscript_handler' ELSE '-' END AS typsubscript,
  t.typelem, t.typarray, t.typinput, t.typoutput,
  CASE WHEN t.typcategory = 'A' THEN 'array_recv' ELSE t.typname || 'recv' END AS typreceive,
  CASE WHEN t.typcategory = 'A' THEN 'array_send' ELSE t.typname || 'send' END AS typsend,
  '-' AS typmodin, '-' AS typmodout, '-' AS typanalyze, t.typalign, t.typstorage,
  false AS typnotnull, CAST(0 AS BIGINT) AS typbasetype, -1 AS typtypmod, 0 AS typndims,
  t.typcollation, CAST(NULL AS VARCHAR) AS typdefaultbin, CAST(NULL AS VARCHAR) AS typdefault,
  CAST(NULL AS VARCHAR[]) AS typacl
FROM @.weir_types t)";

constexpr const char* kDescription = R"(CREATE VIEW @.pg_description AS
SELECT r.oid AS objoid, CAST(1259 AS BIGINT) AS classoid, 0 AS objsubid, r.comment AS description
FROM @.weir_relations r WHERE r.comment IS NOT NULL
UNION ALL
SELECT c.attrelid, 1259, CAST(c.column_index AS INTEGER), c.comment
FROM @.weir_columns c WHERE c.comment IS NOT NULL)";

constexpr const char* kDatabase = R"(CREATE VIEW @.pg_database AS
SELECT d.database_oid AS oid, d.database_name AS datname, CAST(10 AS BIGINT) AS datdba,
  6 AS encoding, 'c' AS datlocprovider, false AS datistemplate, true AS datallowconn,
  -1 AS datconnlimit, CAST(0 AS BIGINT) AS datfrozenxid, CAST(0 AS BIGINT) AS datminmxid,
  CAST(1663 AS BIGINT) AS dattablespace, 'C' AS datcollate, 'C' AS datctype,
  CAST(NULL AS VARCHAR) AS daticulocale, CAST(NULL AS VARCHAR) AS datcollversion,
  CAST(NULL AS VARCHAR[]) AS datacl
FROM duckdb_databases() d WHERE d.database_name = 'lake')";

constexpr const char* kRoles = R"(CREATE VIEW @.pg_roles AS
SELECT @.weir_user_name() AS rolname, true AS rolsuper, true AS rolinherit,
  true AS rolcreaterole, true AS rolcreatedb, true AS rolcanlogin, false AS rolreplication,
  -1 AS rolconnlimit, '********' AS rolpassword, CAST(NULL AS TIMESTAMPTZ) AS rolvaliduntil,
  false AS rolbypassrls, CAST(NULL AS VARCHAR[]) AS rolconfig, CAST(10 AS BIGINT) AS oid)";

constexpr const char* kUser = R"(CREATE VIEW @.pg_user AS
SELECT rolname AS usename, oid AS usesysid, rolcreatedb AS usecreatedb, rolsuper AS usesuper,
  rolreplication AS userepl, rolbypassrls AS usebypassrls, '********' AS passwd,
  rolvaliduntil AS valuntil, rolconfig AS useconfig
FROM @.pg_roles)";

// The server's live sessions (weir_stat_activity(), see serve/engine_activity.cc): another
// user's session shows a read user only its pid, user, application and backend type, with
// query "<insufficient privilege>", as PostgreSQL shows it to an unprivileged role.
constexpr const char* kStatActivity = R"(CREATE VIEW @.pg_stat_activity AS
SELECT (SELECT oid FROM @.pg_database) AS datid, 'lake' AS datname, a.pid,
  CAST(NULL AS INTEGER) AS leader_pid, CAST(10 AS BIGINT) AS usesysid, a.usename,
  a.application_name, CASE WHEN a.visible THEN a.client_addr END AS client_addr,
  CAST(NULL AS VARCHAR) AS client_hostname, CASE WHEN a.visible THEN a.client_port END AS client_port,
  CASE WHEN a.visible THEN a.backend_start END AS backend_start,
  CASE WHEN a.visible THEN a.xact_start END AS xact_start,
  CASE WHEN a.visible THEN a.query_start END AS query_start,
  CASE WHEN a.visible THEN a.state_change END AS state_change,
  CAST(NULL AS VARCHAR) AS wait_event_type, CAST(NULL AS VARCHAR) AS wait_event,
  CASE WHEN a.visible THEN a.state END AS state, CAST(NULL AS BIGINT) AS backend_xid,
  CAST(NULL AS BIGINT) AS backend_xmin, CAST(NULL AS BIGINT) AS query_id,
  CASE WHEN a.visible THEN a.query ELSE '<insufficient privilege>' END AS query,
  'client backend' AS backend_type
FROM weir_stat_activity() a)";

constexpr const char* kAm = R"(CREATE VIEW @.pg_am AS
SELECT * FROM (VALUES (CAST(2 AS BIGINT), 'heap', 'heap_tableam_handler', 't'),
  (403, 'btree', 'bthandler', 'i'), (405, 'hash', 'hashhandler', 'i'))
  AS t(oid, amname, amhandler, amtype))";

constexpr const char* kCollation = R"(CREATE VIEW @.pg_collation AS
SELECT * FROM (VALUES
  (CAST(100 AS BIGINT), 'default', CAST(11 AS BIGINT), CAST(10 AS BIGINT), 'd', true, -1,
   CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR), CAST(NULL AS VARCHAR)),
  (950, 'C', 11, 10, 'c', true, -1, 'C', 'C', NULL, NULL),
  (951, 'POSIX', 11, 10, 'c', true, -1, 'POSIX', 'POSIX', NULL, NULL))
  AS t(oid, collname, collnamespace, collowner, collprovider, collisdeterministic,
       collencoding, collcollate, collctype, colliculocale, collversion))";

constexpr const char* kTablespace = R"(CREATE VIEW @.pg_tablespace AS
SELECT * FROM (VALUES (CAST(1663 AS BIGINT), 'pg_default', CAST(10 AS BIGINT),
  CAST(NULL AS VARCHAR[]), CAST(NULL AS VARCHAR[])), (1664, 'pg_global', 10, NULL, NULL))
  AS t(oid, spcname, spcowner, spcacl, spcoptions))";

constexpr const char* kLanguage = R"(CREATE VIEW @.pg_language AS
SELECT * FROM (VALUES
  (CAST(12 AS BIGINT), 'internal', CAST(10 AS BIGINT), false, false, CAST(0 AS BIGINT),
   CAST(0 AS BIGINT), CAST(0 AS BIGINT), CAST(NULL AS VARCHAR[])),
  (13, 'c', 10, false, false, 0, 0, 0, NULL),
  (14, 'sql', 10, false, true, 0, 0, 0, NULL))
  AS t(oid, lanname, lanowner, lanispl, lanpltrusted, lanplcallfoid, laninline, lanvalidator,
       lanacl))";

constexpr const char* kTables = R"(CREATE VIEW @.pg_tables AS
SELECT n.nspname AS schemaname, c.relname AS tablename,
  @.pg_get_userbyid(c.relowner) AS tableowner, CAST(NULL AS VARCHAR) AS tablespace,
  c.relhasindex AS hasindexes, c.relhasrules AS hasrules, c.relhastriggers AS hastriggers,
  c.relrowsecurity AS rowsecurity
FROM @.pg_class c JOIN @.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r')";

constexpr const char* kPgViews = R"(CREATE VIEW @.pg_views AS
SELECT n.nspname AS schemaname, c.relname AS viewname,
  @.pg_get_userbyid(c.relowner) AS viewowner, @.pg_get_viewdef(c.oid) AS definition
FROM @.pg_class c JOIN @.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'v')";

// Functions: DuckDB's built-in functions and macros in pg_catalog, macros of the lake in
// their schema (one row per name and schema: DuckDB overloads share one OID).
constexpr const char* kFunctions = R"(CREATE VIEW @.weir_functions AS
SELECT f.function_oid AS oid, f.function_name AS proname,
  CASE WHEN f.database_name = 'lake' THEN @.weir_namespace_oid(f.schema_name, s.oid)
       ELSE 11 END AS pronamespace,
  CASE f.function_type WHEN 'aggregate' THEN 'a' ELSE 'f' END AS prokind,
  f.function_type IN ('table', 'table_macro') AS proretset,
  CASE f.stability WHEN 'CONSISTENT' THEN 'i' WHEN 'VOLATILE' THEN 'v' ELSE 's' END AS provolatile,
  CAST(len(f.parameters) AS SMALLINT) AS pronargs,
  @.weir_type_oid(coalesce(f.return_type, 'VARCHAR')) AS prorettype,
  array_to_string(list_transform(f.parameter_types,
    p -> CAST(@.weir_scalar_type_oid(coalesce(p, 'VARCHAR')) AS VARCHAR)), ' ') AS proargtypes,
  f.parameters AS proargnames, f.macro_definition,
  CASE WHEN f.function_type IN ('table', 'table_macro') THEN 'SETOF record'
       ELSE lower(coalesce(f.return_type, 'any')) END AS result,
  array_to_string(list_transform(list_zip(f.parameters, f.parameter_types),
    p -> p[1] || CASE WHEN p[2] IS NULL THEN '' ELSE ' ' || lower(p[2]) END), ', ') AS arguments,
  row_number() OVER (PARTITION BY f.function_oid ORDER BY len(f.parameters)) AS overload
FROM duckdb_functions() f
LEFT JOIN duckdb_schemas() s ON s.database_name = f.database_name AND s.schema_name = f.schema_name
WHERE f.function_type IN ('scalar', 'aggregate', 'macro', 'table', 'table_macro')
  AND f.database_name IN ('lake', 'system'))";

constexpr const char* kProc = R"(CREATE VIEW @.pg_proc AS
SELECT f.oid, f.proname, f.pronamespace, CAST(10 AS BIGINT) AS proowner,
  CAST(CASE WHEN f.macro_definition IS NULL THEN 12 ELSE 14 END AS BIGINT) AS prolang,
  CAST(1 AS REAL) AS procost, CAST(0 AS REAL) AS prorows, CAST(0 AS BIGINT) AS provariadic,
  '-' AS prosupport, f.prokind, false AS prosecdef, false AS proleakproof, false AS proisstrict,
  f.proretset, f.provolatile, 'u' AS proparallel, f.pronargs,
  CAST(0 AS SMALLINT) AS pronargdefaults,
  f.prorettype, f.proargtypes, CAST(NULL AS BIGINT[]) AS proallargtypes,
  CAST(NULL AS VARCHAR[]) AS proargmodes, f.proargnames, CAST(NULL AS VARCHAR) AS proargdefaults,
  CAST(NULL AS BIGINT[]) AS protrftypes, coalesce(f.macro_definition, f.proname) AS prosrc,
  CAST(NULL AS VARCHAR) AS probin, CAST(NULL AS VARCHAR) AS prosqlbody,
  CAST(NULL AS VARCHAR[]) AS proconfig, CAST(NULL AS VARCHAR[]) AS proacl
FROM @.weir_functions f WHERE f.overload = 1)";

std::string Settings() {
  std::string rows;
  for (const PgSetting& setting : PgSettings()) {
    rows += std::string(rows.empty() ? "" : ",\n  ") + "(" + QuoteLiteral(setting.name) + ", " +
            SettingValueSql(setting) + ", " + QuoteLiteral(setting.vartype) + ", " +
            QuoteLiteral(setting.settable ? "user" : "internal") + ", " +
            QuoteLiteral(setting.value) + ")";
  }
  return QualifySchemas(
      "CREATE VIEW @.pg_settings AS SELECT name, setting, CAST(NULL AS VARCHAR) AS unit, "
      "'Client Connection Defaults' AS category, name AS short_desc, "
      "CAST(NULL AS VARCHAR) AS extra_desc, context, vartype, 'default' AS source, "
      "CAST(NULL AS VARCHAR) AS min_val, CAST(NULL AS VARCHAR) AS max_val, "
      "CAST(NULL AS VARCHAR[]) AS enumvals, boot_val, boot_val AS reset_val, "
      "CAST(NULL AS VARCHAR) AS sourcefile, CAST(NULL AS INTEGER) AS sourceline, "
      "false AS pending_restart FROM (VALUES\n  " +
      rows + ") AS t(name, setting, vartype, context, boot_val)");
}

}  // namespace

std::vector<std::string> RelationCatalogSql() {
  std::vector<std::string> sql;
  for (const char* view :
       {kRelations,   kNamespace, kClass,  kColumns, kAttribute,    kAttrdef, kType,
        kDescription, kDatabase,  kRoles,  kUser,    kStatActivity, kAm,      kCollation,
        kTablespace,  kLanguage,  kTables, kPgViews, kFunctions,    kProc}) {
    sql.push_back(QualifySchemas(view));
  }
  sql.push_back(Settings());
  sql.push_back(Empty(
      "pg_constraint",
      {{"oid", "BIGINT"},           {"conname", "VARCHAR"},       {"connamespace", "BIGINT"},
       {"contype", "VARCHAR"},      {"condeferrable", "BOOLEAN"}, {"condeferred", "BOOLEAN"},
       {"convalidated", "BOOLEAN"}, {"conrelid", "BIGINT"},       {"contypid", "BIGINT"},
       {"conindid", "BIGINT"},      {"conparentid", "BIGINT"},    {"confrelid", "BIGINT"},
       {"confupdtype", "VARCHAR"},  {"confdeltype", "VARCHAR"},   {"confmatchtype", "VARCHAR"},
       {"conislocal", "BOOLEAN"},   {"coninhcount", "INTEGER"},   {"connoinherit", "BOOLEAN"},
       {"conkey", "SMALLINT[]"},    {"confkey", "SMALLINT[]"},    {"conpfeqop", "BIGINT[]"},
       {"conppeqop", "BIGINT[]"},   {"conffeqop", "BIGINT[]"},    {"confdelsetcols", "SMALLINT[]"},
       {"conexclop", "BIGINT[]"},   {"conbin", "VARCHAR"}}));
  sql.push_back(
      Empty("pg_index", {{"indexrelid", "BIGINT"},      {"indrelid", "BIGINT"},
                         {"indnatts", "SMALLINT"},      {"indnkeyatts", "SMALLINT"},
                         {"indisunique", "BOOLEAN"},    {"indnullsnotdistinct", "BOOLEAN"},
                         {"indisprimary", "BOOLEAN"},   {"indisexclusion", "BOOLEAN"},
                         {"indimmediate", "BOOLEAN"},   {"indisclustered", "BOOLEAN"},
                         {"indisvalid", "BOOLEAN"},     {"indcheckxmin", "BOOLEAN"},
                         {"indisready", "BOOLEAN"},     {"indislive", "BOOLEAN"},
                         {"indisreplident", "BOOLEAN"}, {"indkey", "SMALLINT[]"},
                         {"indcollation", "BIGINT[]"},  {"indclass", "BIGINT[]"},
                         {"indoption", "SMALLINT[]"},   {"indexprs", "VARCHAR"},
                         {"indpred", "VARCHAR"}}));
  sql.push_back(Empty("pg_opclass", {{"oid", "BIGINT"},
                                     {"opcmethod", "BIGINT"},
                                     {"opcname", "VARCHAR"},
                                     {"opcnamespace", "BIGINT"},
                                     {"opcowner", "BIGINT"},
                                     {"opcfamily", "BIGINT"},
                                     {"opcintype", "BIGINT"},
                                     {"opcdefault", "BOOLEAN"},
                                     {"opckeytype", "BIGINT"}}));
  sql.push_back(Empty("pg_indexes", {{"schemaname", "VARCHAR"},
                                     {"tablename", "VARCHAR"},
                                     {"indexname", "VARCHAR"},
                                     {"tablespace", "VARCHAR"},
                                     {"indexdef", "VARCHAR"}}));
  sql.push_back(Empty("pg_inherits", {{"inhrelid", "BIGINT"},
                                      {"inhparent", "BIGINT"},
                                      {"inhseqno", "INTEGER"},
                                      {"inhdetachpending", "BOOLEAN"}}));
  sql.push_back(Empty("pg_policy", {{"oid", "BIGINT"},
                                    {"polname", "VARCHAR"},
                                    {"polrelid", "BIGINT"},
                                    {"polcmd", "VARCHAR"},
                                    {"polpermissive", "BOOLEAN"},
                                    {"polroles", "BIGINT[]"},
                                    {"polqual", "VARCHAR"},
                                    {"polwithcheck", "VARCHAR"}}));
  sql.push_back(Empty("pg_statistic_ext", {{"oid", "BIGINT"},
                                           {"stxrelid", "BIGINT"},
                                           {"stxname", "VARCHAR"},
                                           {"stxnamespace", "BIGINT"},
                                           {"stxowner", "BIGINT"},
                                           {"stxstattarget", "INTEGER"},
                                           {"stxkeys", "SMALLINT[]"},
                                           {"stxkind", "VARCHAR[]"},
                                           {"stxexprs", "VARCHAR"}}));
  sql.push_back(Empty("pg_publication", {{"oid", "BIGINT"},
                                         {"pubname", "VARCHAR"},
                                         {"pubowner", "BIGINT"},
                                         {"puballtables", "BOOLEAN"},
                                         {"pubinsert", "BOOLEAN"},
                                         {"pubupdate", "BOOLEAN"},
                                         {"pubdelete", "BOOLEAN"},
                                         {"pubtruncate", "BOOLEAN"},
                                         {"pubviaroot", "BOOLEAN"}}));
  sql.push_back(Empty("pg_publication_namespace",
                      {{"oid", "BIGINT"}, {"pnpubid", "BIGINT"}, {"pnnspid", "BIGINT"}}));
  sql.push_back(Empty("pg_publication_rel", {{"oid", "BIGINT"},
                                             {"prpubid", "BIGINT"},
                                             {"prrelid", "BIGINT"},
                                             {"prqual", "VARCHAR"},
                                             {"prattrs", "SMALLINT[]"}}));
  sql.push_back(Empty("pg_trigger", {{"oid", "BIGINT"},
                                     {"tgrelid", "BIGINT"},
                                     {"tgparentid", "BIGINT"},
                                     {"tgname", "VARCHAR"},
                                     {"tgfoid", "BIGINT"},
                                     {"tgtype", "SMALLINT"},
                                     {"tgenabled", "VARCHAR"},
                                     {"tgisinternal", "BOOLEAN"},
                                     {"tgconstrrelid", "BIGINT"},
                                     {"tgconstrindid", "BIGINT"},
                                     {"tgconstraint", "BIGINT"},
                                     {"tgdeferrable", "BOOLEAN"},
                                     {"tginitdeferred", "BOOLEAN"},
                                     {"tgnargs", "SMALLINT"},
                                     {"tgattr", "SMALLINT[]"},
                                     {"tgargs", "BLOB"},
                                     {"tgqual", "VARCHAR"},
                                     {"tgoldtable", "VARCHAR"},
                                     {"tgnewtable", "VARCHAR"}}));
  sql.push_back(Empty("pg_rewrite", {{"oid", "BIGINT"},
                                     {"rulename", "VARCHAR"},
                                     {"ev_class", "BIGINT"},
                                     {"ev_type", "VARCHAR"},
                                     {"ev_enabled", "VARCHAR"},
                                     {"is_instead", "BOOLEAN"},
                                     {"ev_qual", "VARCHAR"},
                                     {"ev_action", "VARCHAR"}}));
  sql.push_back(Empty("pg_enum", {{"oid", "BIGINT"},
                                  {"enumtypid", "BIGINT"},
                                  {"enumsortorder", "REAL"},
                                  {"enumlabel", "VARCHAR"}}));
  sql.push_back(Empty("pg_range", {{"rngtypid", "BIGINT"},
                                   {"rngsubtype", "BIGINT"},
                                   {"rngmultitypid", "BIGINT"},
                                   {"rngcollation", "BIGINT"},
                                   {"rngsubopc", "BIGINT"},
                                   {"rngcanonical", "VARCHAR"},
                                   {"rngsubdiff", "VARCHAR"}}));
  sql.push_back(Empty("pg_depend", {{"classid", "BIGINT"},
                                    {"objid", "BIGINT"},
                                    {"objsubid", "INTEGER"},
                                    {"refclassid", "BIGINT"},
                                    {"refobjid", "BIGINT"},
                                    {"refobjsubid", "INTEGER"},
                                    {"deptype", "VARCHAR"}}));
  sql.push_back(Empty("pg_sequence", {{"seqrelid", "BIGINT"},
                                      {"seqtypid", "BIGINT"},
                                      {"seqstart", "BIGINT"},
                                      {"seqincrement", "BIGINT"},
                                      {"seqmax", "BIGINT"},
                                      {"seqmin", "BIGINT"},
                                      {"seqcache", "BIGINT"},
                                      {"seqcycle", "BOOLEAN"}}));
  sql.push_back(Empty("pg_sequences", {{"schemaname", "VARCHAR"},
                                       {"sequencename", "VARCHAR"},
                                       {"sequenceowner", "VARCHAR"},
                                       {"data_type", "VARCHAR"},
                                       {"start_value", "BIGINT"},
                                       {"min_value", "BIGINT"},
                                       {"max_value", "BIGINT"},
                                       {"increment_by", "BIGINT"},
                                       {"cycle", "BOOLEAN"},
                                       {"cache_size", "BIGINT"},
                                       {"last_value", "BIGINT"}}));
  sql.push_back(Empty("pg_matviews", {{"schemaname", "VARCHAR"},
                                      {"matviewname", "VARCHAR"},
                                      {"matviewowner", "VARCHAR"},
                                      {"tablespace", "VARCHAR"},
                                      {"hasindexes", "BOOLEAN"},
                                      {"ispopulated", "BOOLEAN"},
                                      {"definition", "VARCHAR"}}));
  sql.push_back(Empty("pg_extension", {{"oid", "BIGINT"},
                                       {"extname", "VARCHAR"},
                                       {"extowner", "BIGINT"},
                                       {"extnamespace", "BIGINT"},
                                       {"extrelocatable", "BOOLEAN"},
                                       {"extversion", "VARCHAR"},
                                       {"extconfig", "BIGINT[]"},
                                       {"extcondition", "VARCHAR[]"}}));
  sql.push_back(Empty("pg_foreign_table",
                      {{"ftrelid", "BIGINT"}, {"ftserver", "BIGINT"}, {"ftoptions", "VARCHAR[]"}}));
  sql.push_back(Empty("pg_foreign_server", {{"oid", "BIGINT"},
                                            {"srvname", "VARCHAR"},
                                            {"srvowner", "BIGINT"},
                                            {"srvfdw", "BIGINT"},
                                            {"srvtype", "VARCHAR"},
                                            {"srvversion", "VARCHAR"},
                                            {"srvacl", "VARCHAR[]"},
                                            {"srvoptions", "VARCHAR[]"}}));
  sql.push_back(Empty("pg_foreign_data_wrapper", {{"oid", "BIGINT"},
                                                  {"fdwname", "VARCHAR"},
                                                  {"fdwowner", "BIGINT"},
                                                  {"fdwhandler", "BIGINT"},
                                                  {"fdwvalidator", "BIGINT"},
                                                  {"fdwacl", "VARCHAR[]"},
                                                  {"fdwoptions", "VARCHAR[]"}}));
  sql.push_back(Empty("pg_partitioned_table", {{"partrelid", "BIGINT"},
                                               {"partstrat", "VARCHAR"},
                                               {"partnatts", "SMALLINT"},
                                               {"partdefid", "BIGINT"},
                                               {"partattrs", "SMALLINT[]"},
                                               {"partclass", "BIGINT[]"},
                                               {"partcollation", "BIGINT[]"},
                                               {"partexprs", "VARCHAR"}}));
  sql.push_back(Empty("pg_event_trigger", {{"oid", "BIGINT"},
                                           {"evtname", "VARCHAR"},
                                           {"evtevent", "VARCHAR"},
                                           {"evtowner", "BIGINT"},
                                           {"evtfoid", "BIGINT"},
                                           {"evtenabled", "VARCHAR"},
                                           {"evttags", "VARCHAR[]"}}));
  sql.push_back(Empty("pg_shdescription",
                      {{"objoid", "BIGINT"}, {"classoid", "BIGINT"}, {"description", "VARCHAR"}}));
  sql.push_back(Empty("pg_auth_members", {{"oid", "BIGINT"},
                                          {"roleid", "BIGINT"},
                                          {"member", "BIGINT"},
                                          {"grantor", "BIGINT"},
                                          {"admin_option", "BOOLEAN"}}));
  return sql;
}

}  // namespace weir::serve::compat
