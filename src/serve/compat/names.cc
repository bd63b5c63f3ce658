#include "serve/compat/names.h"

#include <algorithm>

namespace weir::serve::compat {
namespace {

constexpr std::string_view kPgCatalogRelations[] = {
    "pg_am",
    "pg_attrdef",
    "pg_attribute",
    "pg_auth_members",
    "pg_class",
    "pg_collation",
    "pg_constraint",
    "pg_database",
    "pg_depend",
    "pg_description",
    "pg_enum",
    "pg_event_trigger",
    "pg_extension",
    "pg_foreign_data_wrapper",
    "pg_foreign_server",
    "pg_foreign_table",
    "pg_index",
    "pg_indexes",
    "pg_inherits",
    "pg_language",
    "pg_matviews",
    "pg_namespace",
    "pg_opclass",
    "pg_partitioned_table",
    "pg_policy",
    "pg_proc",
    "pg_publication",
    "pg_publication_namespace",
    "pg_publication_rel",
    "pg_range",
    "pg_rewrite",
    "pg_roles",
    "pg_sequence",
    "pg_sequences",
    "pg_settings",
    "pg_stat_activity",
    "pg_shdescription",
    "pg_statistic_ext",
    "pg_tables",
    "pg_tablespace",
    "pg_trigger",
    "pg_type",
    "pg_user",
    "pg_views",
};

constexpr std::string_view kInformationSchemaRelations[] = {
    "columns",  "constraint_column_usage", "key_column_usage", "referential_constraints",
    "schemata", "table_constraints",       "tables",           "views",
};

constexpr std::string_view kPgCatalogFunctions[] = {
    "array_lower",
    "array_remove",
    "array_upper",
    "col_description",
    "current_schema",
    "current_schemas",
    "every",
    "format_type",
    "obj_description",
    "pg_backend_pid",
    "pg_database_size",
    "pg_encoding_to_char",
    "pg_function_is_visible",
    "pg_get_constraintdef",
    "pg_get_expr",
    "pg_get_function_arguments",
    "pg_get_function_identity_arguments",
    "pg_get_function_result",
    "pg_get_function_sqlbody",
    "pg_get_indexdef",
    "pg_get_keywords",
    "pg_get_partkeydef",
    "pg_get_ruledef",
    "pg_get_serial_sequence",
    "pg_get_statisticsobjdef_columns",
    "pg_get_triggerdef",
    "pg_get_userbyid",
    "pg_get_viewdef",
    "pg_indexes_size",
    "pg_is_in_recovery",
    "pg_relation_is_publishable",
    "pg_relation_size",
    "pg_size_pretty",
    "pg_table_is_visible",
    "pg_table_size",
    "pg_tablespace_location",
    "pg_total_relation_size",
    "pg_type_is_visible",
    "pg_typeof",
    "shobj_description",
    "to_regclass",
    "to_regtype",
    "version",
};

constexpr std::string_view kInformationSchemaFunctions[] = {"_pg_expandarray"};

bool Contains(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::span<const std::string_view> PgCatalogRelations() { return kPgCatalogRelations; }
std::span<const std::string_view> InformationSchemaRelations() {
  return kInformationSchemaRelations;
}
std::span<const std::string_view> PgCatalogFunctions() { return kPgCatalogFunctions; }
std::span<const std::string_view> InformationSchemaFunctions() {
  return kInformationSchemaFunctions;
}

bool IsPgCatalogRelation(std::string_view name) { return Contains(kPgCatalogRelations, name); }
bool IsInformationSchemaRelation(std::string_view name) {
  return Contains(kInformationSchemaRelations, name);
}
bool IsPgCatalogFunction(std::string_view name) { return Contains(kPgCatalogFunctions, name); }
bool IsInformationSchemaFunction(std::string_view name) {
  return Contains(kInformationSchemaFunctions, name);
}

}  // namespace weir::serve::compat
