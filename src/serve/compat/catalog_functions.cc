// PostgreSQL's catalog functions as DuckDB macros: the ones clients call that DuckDB lacks
// (pg_get_userbyid, pg_encoding_to_char, pg_get_function_result, array_upper, ...) or answers
// for its own catalog instead of weir's (format_type, pg_table_is_visible, obj_description,
// current_schema, version, ...), and the weir_* helpers the views and the rewriter use.
// Macros are not bound when created, so they may name the views created after them.
#include <string>
#include <vector>

#include "serve/compat/catalog_sql.h"

namespace weir::serve::compat {
namespace {

constexpr const char* kMacros[] = {
    // The lake's schema main is PostgreSQL's public (OID 2200 as in PostgreSQL).
    R"(CREATE MACRO @.weir_namespace_oid(schema_name, schema_oid) AS
       CASE WHEN schema_name = 'main' THEN CAST(2200 AS BIGINT) ELSE schema_oid END)",
    R"(CREATE MACRO @.weir_namespace_name(schema_name) AS
       CASE WHEN schema_name = 'main' THEN 'public' ELSE schema_name END)",
    R"(CREATE MACRO @.weir_system_relation_oid(name) AS CASE name
       WHEN 'pg_class' THEN 1259 WHEN 'pg_attribute' THEN 1249 WHEN 'pg_proc' THEN 1255
       WHEN 'pg_type' THEN 1247 WHEN 'pg_namespace' THEN 2615 WHEN 'pg_database' THEN 1262
       WHEN 'pg_description' THEN 2609 WHEN 'pg_constraint' THEN 2606 WHEN 'pg_index' THEN 2610
       WHEN 'pg_attrdef' THEN 2604 WHEN 'pg_am' THEN 2601 WHEN 'pg_collation' THEN 3456
       WHEN 'pg_inherits' THEN 2611 WHEN 'pg_trigger' THEN 2620 WHEN 'pg_rewrite' THEN 2618
       WHEN 'pg_tablespace' THEN 1213 WHEN 'pg_language' THEN 2612 WHEN 'pg_depend' THEN 2608
       WHEN 'pg_enum' THEN 3501 WHEN 'pg_range' THEN 3541 WHEN 'pg_extension' THEN 3079
       WHEN 'pg_policy' THEN 3256 WHEN 'pg_statistic_ext' THEN 3381
       WHEN 'pg_publication' THEN 6104 WHEN 'pg_publication_rel' THEN 6106
       WHEN 'pg_publication_namespace' THEN 6237 WHEN 'pg_sequence' THEN 2224
       WHEN 'pg_foreign_table' THEN 3118 WHEN 'pg_partitioned_table' THEN 3350
       WHEN 'pg_event_trigger' THEN 3466 WHEN 'pg_shdescription' THEN 2396
       WHEN 'pg_auth_members' THEN 1261 WHEN 'pg_foreign_server' THEN 1417
       WHEN 'pg_foreign_data_wrapper' THEN 2328 ELSE CAST(NULL AS BIGINT) END)",
    // The session's user: the engine may set the variable weir_user; weir's default user is
    // called weir.
    R"(CREATE MACRO @.weir_user_name() AS
       coalesce(CAST(getvariable('weir_user') AS VARCHAR), 'weir'))",
    // An identifier as PostgreSQL reads it: "Quoted" kept, otherwise lower case.
    R"(CREATE MACRO @.weir_ident(name) AS CASE
       WHEN starts_with(name, '"') AND ends_with(name, '"') AND length(name) >= 2
       THEN replace(name[2:-2], '""', '"') ELSE lower(name) END)",

    // Object-identifier casts ('x'::regclass, oid::regtype, ...), as the rewriter emits them.
    R"(CREATE MACRO @.weir_regclass_oid(name) AS CASE
       WHEN regexp_matches(CAST(name AS VARCHAR), '^\s*\d+\s*$') THEN TRY_CAST(name AS BIGINT)
       ELSE (SELECT weir_c.oid FROM (SELECT CAST(name AS VARCHAR) AS weir_value) weir_arg,
               @.pg_class weir_c JOIN @.pg_namespace weir_n ON weir_n.oid = weir_c.relnamespace
             WHERE weir_c.relname = @.weir_ident(CASE WHEN contains(weir_arg.weir_value, '.')
                     THEN split_part(weir_arg.weir_value, '.', 2) ELSE weir_arg.weir_value END)
               AND CASE WHEN contains(weir_arg.weir_value, '.')
                     THEN weir_n.nspname = @.weir_ident(split_part(weir_arg.weir_value, '.', 1))
                     ELSE @.pg_table_is_visible(weir_c.oid) END
             ORDER BY weir_c.relnamespace = 11 DESC LIMIT 1) END)",
    R"(CREATE MACRO @.weir_regclass_name(rel_oid) AS coalesce(
       (SELECT CASE WHEN @.pg_table_is_visible(weir_c.oid) THEN weir_c.relname
                    ELSE weir_n.nspname || '.' || weir_c.relname END
        FROM (SELECT rel_oid AS weir_value) weir_arg,
          @.pg_class weir_c JOIN @.pg_namespace weir_n ON weir_n.oid = weir_c.relnamespace
        WHERE weir_c.oid = weir_arg.weir_value),
       CASE WHEN rel_oid = 0 THEN '-' ELSE CAST(rel_oid AS VARCHAR) END))",
    R"(CREATE MACRO @.weir_regtype_oid(name) AS CASE
       WHEN regexp_matches(CAST(name AS VARCHAR), '^\s*\d+\s*$') THEN TRY_CAST(name AS BIGINT)
       ELSE (SELECT weir_t.oid
             FROM (SELECT regexp_replace(CAST(name AS VARCHAR), '^pg_catalog\.', '')
                     AS weir_value) weir_arg, @.weir_types weir_t
             WHERE weir_t.typname = @.weir_ident(weir_arg.weir_value)
                OR weir_t.display = lower(weir_arg.weir_value)
                OR (lower(weir_arg.weir_value) IN ('int', 'integer') AND weir_t.oid = 23)
             ORDER BY weir_t.oid LIMIT 1) END)",
    R"(CREATE MACRO @.weir_regtype_name(type_oid) AS
       CASE WHEN type_oid = 0 THEN '-' ELSE @.format_type(type_oid, NULL) END)",
    R"(CREATE MACRO @.weir_regnamespace_oid(name) AS CASE
       WHEN regexp_matches(CAST(name AS VARCHAR), '^\s*\d+\s*$') THEN TRY_CAST(name AS BIGINT)
       ELSE (SELECT weir_n.oid
             FROM (SELECT CAST(name AS VARCHAR) AS weir_value) weir_arg, @.pg_namespace weir_n
             WHERE weir_n.nspname = @.weir_ident(weir_arg.weir_value)) END)",
    R"(CREATE MACRO @.weir_regnamespace_name(nsp_oid) AS coalesce(
       (SELECT weir_n.nspname
        FROM (SELECT nsp_oid AS weir_value) weir_arg, @.pg_namespace weir_n
        WHERE weir_n.oid = weir_arg.weir_value), CAST(nsp_oid AS VARCHAR)))",
    R"(CREATE MACRO @.weir_regrole_oid(name) AS CAST(10 AS BIGINT))",
    R"(CREATE MACRO @.weir_regrole_name(role_oid) AS @.pg_get_userbyid(role_oid))",

    // Names and visibility.
    R"(CREATE MACRO @.pg_get_userbyid(role_oid) AS coalesce(
       (SELECT weir_r.rolname FROM (SELECT role_oid AS weir_value) weir_arg, @.pg_roles weir_r
        WHERE weir_r.oid = weir_arg.weir_value),
       'unknown (OID=' || CAST(role_oid AS VARCHAR) || ')'))",
    // Visible: in pg_catalog or in a schema of the session's search path.
    R"(CREATE MACRO @.pg_table_is_visible(rel_oid) AS coalesce(
       (SELECT weir_r.relnamespace = 11 OR (weir_r.database_name = 'lake' AND
                 list_contains(system.main.current_schemas(false), weir_r.schema_name))
        FROM (SELECT rel_oid AS weir_value) weir_arg, @.weir_relations weir_r
        WHERE weir_r.oid = weir_arg.weir_value), false))",
    R"(CREATE MACRO @.pg_type_is_visible(type_oid) AS true)",
    R"(CREATE MACRO @.pg_function_is_visible(function_oid) AS coalesce(
       (SELECT weir_f.pronamespace IN (11, 2200)
        FROM (SELECT function_oid AS weir_value) weir_arg, @.pg_proc weir_f
        WHERE weir_f.oid = weir_arg.weir_value), false))",
    R"(CREATE MACRO @.format_type(type_oid, typemod) AS CASE
       WHEN type_oid IS NULL THEN NULL
       WHEN type_oid IN (1700, 1231) AND typemod >= 4 THEN
         'numeric(' || CAST((typemod - 4) >> 16 AS VARCHAR) || ',' ||
         CAST((typemod - 4) & 65535 AS VARCHAR) || ')' ||
         CASE WHEN type_oid = 1231 THEN '[]' ELSE '' END
       WHEN type_oid IN (1043, 1015, 1042, 1014) AND typemod >= 4 THEN
         CASE WHEN type_oid IN (1043, 1015) THEN 'character varying(' ELSE 'character(' END ||
         CAST(typemod - 4 AS VARCHAR) || ')' ||
         CASE WHEN type_oid IN (1015, 1014) THEN '[]' ELSE '' END
       ELSE coalesce(@.weir_type_display(type_oid), '???') END)",
    R"(CREATE MACRO @.weir_description(object_oid, column_number) AS
       (SELECT weir_d.description
        FROM (SELECT object_oid AS weir_value, column_number AS weir_column) weir_arg,
          @.pg_description weir_d
        WHERE weir_d.objoid = weir_arg.weir_value AND weir_d.objsubid = weir_arg.weir_column
        LIMIT 1))",
    R"(CREATE MACRO @.obj_description(object_oid) AS @.weir_description(object_oid, 0),
       (object_oid, catalog_name) AS
       CASE WHEN catalog_name = 'pg_class' THEN @.weir_description(object_oid, 0) END)",
    R"(CREATE MACRO @.col_description(table_oid, column_number) AS
       @.weir_description(table_oid, column_number))",
    R"(CREATE MACRO @.shobj_description(object_oid, catalog_name) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_encoding_to_char(encoding) AS
       CASE encoding WHEN 6 THEN 'UTF8' WHEN 0 THEN 'SQL_ASCII' ELSE '' END)",
    R"(CREATE MACRO @.pg_get_expr(expr, relation) AS expr, (expr, relation, pretty) AS expr)",
    R"(CREATE MACRO @.pg_get_constraintdef(constraint_oid) AS CAST(NULL AS VARCHAR),
       (constraint_oid, pretty) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_get_indexdef(index_oid) AS CAST(NULL AS VARCHAR),
       (index_oid, column_number, pretty) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.weir_view_definition(view_oid) AS
       (SELECT regexp_replace(weir_r.definition,
                              '^\s*CREATE\s+(OR\s+REPLACE\s+)?VIEW\s+.*?\s+AS\s+', '', 's')
        FROM (SELECT view_oid AS weir_value) weir_arg, @.weir_relations weir_r
        WHERE weir_r.oid = weir_arg.weir_value AND weir_r.relkind = 'v'))",
    R"(CREATE MACRO @.pg_get_viewdef(view_oid) AS @.weir_view_definition(view_oid),
       (view_oid, pretty) AS @.weir_view_definition(view_oid))",
    R"(CREATE MACRO @.pg_get_function_sqlbody(function_oid) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_get_triggerdef(trigger_oid) AS CAST(NULL AS VARCHAR),
       (trigger_oid, pretty) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_get_ruledef(rule_oid) AS CAST(NULL AS VARCHAR),
       (rule_oid, pretty) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_get_partkeydef(rel_oid) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_get_statisticsobjdef_columns(stat_oid) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_get_serial_sequence(table_name, column_name) AS CAST(NULL AS VARCHAR))",
    R"(CREATE MACRO @.pg_relation_is_publishable(rel_oid) AS false)",
    R"(CREATE MACRO @.pg_tablespace_location(tablespace_oid) AS '')",
    R"(CREATE MACRO @.pg_get_function_result(function_oid) AS
       (SELECT weir_f.result FROM (SELECT function_oid AS weir_value) weir_arg,
          @.weir_functions weir_f
        WHERE weir_f.oid = weir_arg.weir_value AND weir_f.overload = 1))",
    R"(CREATE MACRO @.pg_get_function_arguments(function_oid) AS
       (SELECT weir_f.arguments FROM (SELECT function_oid AS weir_value) weir_arg,
          @.weir_functions weir_f
        WHERE weir_f.oid = weir_arg.weir_value AND weir_f.overload = 1))",
    R"(CREATE MACRO @.pg_get_function_identity_arguments(function_oid) AS
       @.pg_get_function_arguments(function_oid))",
    // Sizes: a table's are its data bytes (weir_relation_bytes); lake tables have no indexes.
    R"(CREATE MACRO @.pg_total_relation_size(rel_oid) AS @.weir_relation_bytes(rel_oid))",
    R"(CREATE MACRO @.pg_table_size(rel_oid) AS @.weir_relation_bytes(rel_oid))",
    R"(CREATE MACRO @.pg_indexes_size(rel_oid) AS
       CASE WHEN @.weir_relation_bytes(rel_oid) IS NOT NULL THEN CAST(0 AS BIGINT) END)",
    R"(CREATE MACRO @.pg_database_size(database) AS CAST(NULL AS BIGINT))",
    // PostgreSQL's rounding and units (bytes below 10 kB, then kB, MB, ... rounded half up from
    // half units), not DuckDB's format_bytes ("2.7 KiB").
    R"(CREATE MACRO @.pg_size_pretty(size) AS CASE
       WHEN abs(size) < 10240 THEN CAST(size AS BIGINT) || ' bytes'
       WHEN abs(size // 512) < 20479 THEN ((size // 512 + 1) // 2) || ' kB'
       WHEN abs(size // 524288) < 20479 THEN ((size // 524288 + 1) // 2) || ' MB'
       WHEN abs(size // 536870912) < 20479 THEN ((size // 536870912 + 1) // 2) || ' GB'
       WHEN abs(size // 549755813888) < 20479 THEN ((size // 549755813888 + 1) // 2) || ' TB'
       ELSE ((size // 562949953421312 + 1) // 2) || ' PB' END)",
    R"(CREATE MACRO @.pg_relation_size(rel_oid) AS @.weir_relation_bytes(rel_oid),
       (rel_oid, fork) AS CASE WHEN fork = 'main' THEN @.weir_relation_bytes(rel_oid) END)",
    // The keywords of the parser that runs the statements, DuckDB's (PostgreSQL's grammar with
    // a few categories changed: `show` is reserved, `grant` is not), in PostgreSQL's shape, so
    // a client that quotes by them quotes what DuckDB needs quoted.
    R"(CREATE MACRO @.pg_get_keywords() AS TABLE
       SELECT keyword_name AS word,
         CASE keyword_category WHEN 'reserved' THEN 'R' WHEN 'unreserved' THEN 'U'
              WHEN 'type_function' THEN 'T' ELSE 'C' END AS catcode,
         keyword_category = 'unreserved' AS barelabel,
         CASE keyword_category WHEN 'reserved' THEN 'reserved'
              WHEN 'unreserved' THEN 'unreserved'
              WHEN 'type_function' THEN 'reserved (can be function or type name)'
              ELSE 'unreserved (cannot be function or type name)' END AS catdesc,
         CASE WHEN keyword_category = 'unreserved' THEN 'can be bare label'
              ELSE 'requires AS' END AS baredesc
       FROM duckdb_keywords() ORDER BY keyword_name)",
    R"(CREATE MACRO @.to_regclass(name) AS @.weir_regclass_oid(name))",
    R"(CREATE MACRO @.to_regtype(name) AS @.weir_regtype_oid(name))",

    // Arrays (one dimension, as DuckDB lists are): bounds are 1 .. length.
    R"(CREATE MACRO @.array_upper(arr, dimension) AS
       CASE WHEN dimension = 1 AND len(arr) > 0 THEN CAST(len(arr) AS INTEGER) END)",
    R"(CREATE MACRO @.array_remove(arr, element) AS
       list_filter(arr, weir_x -> weir_x IS DISTINCT FROM element))",
    R"(CREATE MACRO @.array_lower(arr, dimension) AS
       CASE WHEN dimension = 1 AND len(arr) > 0 THEN 1 END)",

    // The session.
    R"(CREATE MACRO @.current_schema() AS
       @.weir_namespace_name(system.main.current_schema()))",
    R"(CREATE MACRO @.current_schemas(include_implicit) AS
       CASE WHEN include_implicit THEN ['pg_catalog', @.current_schema()]
            ELSE [@.current_schema()] END)",
    R"(CREATE MACRO @.version() AS
       'PostgreSQL 15.0 (weir) on x86_64-pc-linux-gnu, DuckDB ' || system.main.version())",
    // current_setting() of a name only known when the statement runs (SQLAlchemy sends
    // current_setting($1)): weir's PostgreSQL settings, then DuckDB's own; NULL for others.
    R"(CREATE MACRO @.weir_setting_value(setting_name) AS coalesce(
       (SELECT weir_s.setting
        FROM (SELECT lower(CAST(setting_name AS VARCHAR)) AS weir_value) weir_arg,
          @.pg_settings weir_s
        WHERE lower(weir_s.name) = weir_arg.weir_value),
       (SELECT weir_d.value
        FROM (SELECT lower(CAST(setting_name AS VARCHAR)) AS weir_value) weir_arg,
          duckdb_settings() weir_d
        WHERE lower(weir_d.name) = weir_arg.weir_value)))",
    R"(CREATE MACRO @.weir_current_setting(setting_name) AS @.weir_setting_value(setting_name),
       (setting_name, missing_ok) AS @.weir_setting_value(setting_name))",
    R"(CREATE MACRO @.pg_is_in_recovery() AS false)",
    // PostgreSQL's type names where DuckDB's differ (its VARCHAR is served as text).
    R"(CREATE MACRO @.pg_typeof(value) AS CASE lower(typeof(value))
       WHEN 'varchar' THEN 'text' WHEN 'double' THEN 'double precision' WHEN 'float' THEN 'real'
       WHEN 'blob' THEN 'bytea' WHEN 'timestamp' THEN 'timestamp without time zone'
       WHEN 'time' THEN 'time without time zone'
       ELSE CASE WHEN starts_with(lower(typeof(value)), 'decimal') THEN 'numeric'
                 ELSE lower(typeof(value)) END END)",
    // The SQL standard's name of bool_and, which PostgreSQL has too.
    R"(CREATE MACRO @.every(value) AS bool_and(value))",
    R"(CREATE MACRO @.pg_backend_pid() AS
       coalesce(CAST(getvariable('weir_backend_pid') AS INTEGER), 0))",
};

}  // namespace

// A relation's data bytes (by OID, or by name as PostgreSQL casts a text argument to regclass):
// on a DuckLake lake, its live data and delete files as DuckLake's catalog records them (rows
// inlined in the catalog count nothing); NULL for anything else, as PostgreSQL's sizes are for
// an unknown relation.
constexpr const char* kDuckLakeRelationBytes = R"(CREATE MACRO @.weir_relation_bytes(rel_oid) AS
   (SELECT CAST(coalesce(sum(weir_i.file_size_bytes + weir_i.delete_file_size_bytes), 0)
                AS BIGINT)
    FROM (SELECT @.weir_regclass_oid(rel_oid) AS weir_value) weir_arg
      JOIN @.weir_relations weir_r ON weir_r.oid = weir_arg.weir_value AND weir_r.relkind = 'r'
      JOIN __ducklake_metadata_lake.ducklake_schema weir_s
        ON weir_s.schema_name = weir_r.schema_name AND weir_s.end_snapshot IS NULL
      LEFT JOIN ducklake_table_info('lake') weir_i
        ON weir_i.schema_id = weir_s.schema_id AND weir_i.table_name = weir_r.relname
    GROUP BY weir_r.oid))";
constexpr const char* kUnknownRelationBytes =
    R"(CREATE MACRO @.weir_relation_bytes(rel_oid) AS CAST(NULL AS BIGINT))";

std::vector<std::string> FunctionCatalogSql(bool ducklake) {
  std::vector<std::string> sql;
  for (const char* macro : kMacros) sql.push_back(QualifySchemas(macro));
  sql.push_back(QualifySchemas(ducklake ? kDuckLakeRelationBytes : kUnknownRelationBytes));
  return sql;
}

}  // namespace weir::serve::compat
