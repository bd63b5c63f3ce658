// information_schema as PostgreSQL shows it, over weir's pg_catalog views: the lake's main
// schema as public, PostgreSQL's type names (integer, numeric, ARRAY with udt_name _int4, ...)
// and precisions. Constraint views are empty: lake tables have no keys.
#include <string>
#include <vector>

#include "serve/compat/catalog_sql.h"

namespace weir::serve::compat {
namespace {

constexpr const char* kViews[] = {
    // The elements of an array with their positions, one row each (x, n), as PostgreSQL's
    // information_schema._pg_expandarray returns them.
    R"(CREATE MACRO @i._pg_expandarray(arr) AS
       unnest(list_transform(range(1, len(arr) + 1), i -> {'x': arr[i], 'n': i})))",

    R"(CREATE VIEW @i.schemata AS
SELECT current_database() AS catalog_name, n.nspname AS schema_name,
  @.pg_get_userbyid(n.nspowner) AS schema_owner,
  CAST(NULL AS VARCHAR) AS default_character_set_catalog,
  CAST(NULL AS VARCHAR) AS default_character_set_schema,
  CAST(NULL AS VARCHAR) AS default_character_set_name, CAST(NULL AS VARCHAR) AS sql_path
FROM @.pg_namespace n)",

    R"(CREATE VIEW @i.tables AS
SELECT current_database() AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
  CASE c.relkind WHEN 'v' THEN 'VIEW' ELSE 'BASE TABLE' END AS table_type,
  CAST(NULL AS VARCHAR) AS self_referencing_column_name,
  CAST(NULL AS VARCHAR) AS reference_generation,
  CAST(NULL AS VARCHAR) AS user_defined_type_catalog,
  CAST(NULL AS VARCHAR) AS user_defined_type_schema,
  CAST(NULL AS VARCHAR) AS user_defined_type_name,
  CASE WHEN c.relkind = 'r' AND n.oid NOT IN (11, 13183) THEN 'YES' ELSE 'NO' END
    AS is_insertable_into,
  'NO' AS is_typed, CAST(NULL AS VARCHAR) AS commit_action
FROM @.pg_class c JOIN @.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'v'))",

    R"(CREATE VIEW @i.columns AS
SELECT current_database() AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
  c.column_name, CAST(c.column_index AS INTEGER) AS ordinal_position,
  CASE WHEN c.column_default IS NULL OR c.column_default = 'NULL' THEN NULL
       ELSE c.column_default END AS column_default,
  CASE WHEN c.is_nullable THEN 'YES' ELSE 'NO' END AS is_nullable,
  CASE WHEN t.typcategory = 'A' THEN 'ARRAY' ELSE t.display END AS data_type,
  CAST(NULL AS INTEGER) AS character_maximum_length,
  CASE WHEN c.atttypid IN (25, 1042, 1043) THEN 1073741824 END AS character_octet_length,
  CAST(CASE c.atttypid WHEN 21 THEN 16 WHEN 23 THEN 32 WHEN 20 THEN 64 WHEN 700 THEN 24
       WHEN 701 THEN 53
       WHEN 1700 THEN CASE WHEN c.atttypmod >= 4 THEN (c.atttypmod - 4) >> 16 END END
       AS INTEGER) AS numeric_precision,
  CAST(CASE WHEN c.atttypid IN (21, 23, 20, 700, 701) THEN 2 WHEN c.atttypid = 1700 THEN 10 END
       AS INTEGER) AS numeric_precision_radix,
  CAST(CASE WHEN c.atttypid IN (21, 23, 20) THEN 0
       WHEN c.atttypid = 1700 AND c.atttypmod >= 4 THEN (c.atttypmod - 4) & 65535 END
       AS INTEGER) AS numeric_scale,
  CAST(CASE WHEN c.atttypid = 1082 THEN 0 WHEN c.atttypid IN (1083, 1114, 1184, 1186) THEN 6 END
       AS INTEGER) AS datetime_precision,
  CAST(NULL AS VARCHAR) AS interval_type, CAST(NULL AS INTEGER) AS interval_precision,
  CAST(NULL AS VARCHAR) AS character_set_catalog, CAST(NULL AS VARCHAR) AS character_set_schema,
  CAST(NULL AS VARCHAR) AS character_set_name, CAST(NULL AS VARCHAR) AS collation_catalog,
  CAST(NULL AS VARCHAR) AS collation_schema, CAST(NULL AS VARCHAR) AS collation_name,
  CAST(NULL AS VARCHAR) AS domain_catalog, CAST(NULL AS VARCHAR) AS domain_schema,
  CAST(NULL AS VARCHAR) AS domain_name, current_database() AS udt_catalog,
  'pg_catalog' AS udt_schema, t.typname AS udt_name, CAST(NULL AS VARCHAR) AS scope_catalog,
  CAST(NULL AS VARCHAR) AS scope_schema, CAST(NULL AS VARCHAR) AS scope_name,
  CAST(NULL AS INTEGER) AS maximum_cardinality, CAST(c.column_index AS VARCHAR) AS dtd_identifier,
  'NO' AS is_self_referencing, 'NO' AS is_identity, CAST(NULL AS VARCHAR) AS identity_generation,
  CAST(NULL AS VARCHAR) AS identity_start, CAST(NULL AS VARCHAR) AS identity_increment,
  CAST(NULL AS VARCHAR) AS identity_maximum, CAST(NULL AS VARCHAR) AS identity_minimum,
  CAST(NULL AS VARCHAR) AS identity_cycle, 'NEVER' AS is_generated,
  CAST(NULL AS VARCHAR) AS generation_expression,
  CASE WHEN c.relkind = 'r' AND n.oid NOT IN (11, 13183) THEN 'YES' ELSE 'NO' END AS is_updatable
FROM @.weir_columns c JOIN @.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN @.weir_types t ON t.oid = c.atttypid)",

    R"(CREATE VIEW @i.views AS
SELECT current_database() AS table_catalog, n.nspname AS table_schema, c.relname AS table_name,
  @.pg_get_viewdef(c.oid) AS view_definition, 'NONE' AS check_option, 'NO' AS is_updatable,
  'NO' AS is_insertable_into, 'NO' AS is_trigger_updatable, 'NO' AS is_trigger_deletable,
  'NO' AS is_trigger_insertable_into
FROM @.pg_class c JOIN @.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'v')",

    R"(CREATE VIEW @i.table_constraints AS
SELECT CAST(NULL AS VARCHAR) AS constraint_catalog, CAST(NULL AS VARCHAR) AS constraint_schema,
  CAST(NULL AS VARCHAR) AS constraint_name, CAST(NULL AS VARCHAR) AS table_catalog,
  CAST(NULL AS VARCHAR) AS table_schema, CAST(NULL AS VARCHAR) AS table_name,
  CAST(NULL AS VARCHAR) AS constraint_type, CAST(NULL AS VARCHAR) AS is_deferrable,
  CAST(NULL AS VARCHAR) AS initially_deferred, CAST(NULL AS VARCHAR) AS enforced,
  CAST(NULL AS VARCHAR) AS nulls_distinct WHERE false)",

    R"(CREATE VIEW @i.key_column_usage AS
SELECT CAST(NULL AS VARCHAR) AS constraint_catalog, CAST(NULL AS VARCHAR) AS constraint_schema,
  CAST(NULL AS VARCHAR) AS constraint_name, CAST(NULL AS VARCHAR) AS table_catalog,
  CAST(NULL AS VARCHAR) AS table_schema, CAST(NULL AS VARCHAR) AS table_name,
  CAST(NULL AS VARCHAR) AS column_name, CAST(NULL AS INTEGER) AS ordinal_position,
  CAST(NULL AS INTEGER) AS position_in_unique_constraint WHERE false)",

    R"(CREATE VIEW @i.referential_constraints AS
SELECT CAST(NULL AS VARCHAR) AS constraint_catalog, CAST(NULL AS VARCHAR) AS constraint_schema,
  CAST(NULL AS VARCHAR) AS constraint_name, CAST(NULL AS VARCHAR) AS unique_constraint_catalog,
  CAST(NULL AS VARCHAR) AS unique_constraint_schema,
  CAST(NULL AS VARCHAR) AS unique_constraint_name, CAST(NULL AS VARCHAR) AS match_option,
  CAST(NULL AS VARCHAR) AS update_rule, CAST(NULL AS VARCHAR) AS delete_rule WHERE false)",

    R"(CREATE VIEW @i.constraint_column_usage AS
SELECT CAST(NULL AS VARCHAR) AS table_catalog, CAST(NULL AS VARCHAR) AS table_schema,
  CAST(NULL AS VARCHAR) AS table_name, CAST(NULL AS VARCHAR) AS column_name,
  CAST(NULL AS VARCHAR) AS constraint_catalog, CAST(NULL AS VARCHAR) AS constraint_schema,
  CAST(NULL AS VARCHAR) AS constraint_name WHERE false)",
};

}  // namespace

std::vector<std::string> InformationSchemaSql() {
  std::vector<std::string> sql;
  for (const char* view : kViews) sql.push_back(QualifySchemas(view));
  return sql;
}

}  // namespace weir::serve::compat
