// The SQL that creates weir's PostgreSQL catalog objects (see names.h for where they live),
// one concept per file: types, relations (pg_catalog views), functions (macros) and
// information_schema. InstallCatalog runs them in this order: functions are created first
// because views are bound when they are created.
#pragma once

#include <string>
#include <vector>

namespace weir::serve::compat {

// Replaces `@.` with weir's pg_catalog schema and `@i.` with its information_schema.
std::string QualifySchemas(std::string sql);

std::vector<std::string> TypeCatalogSql();
// `ducklake`: the lake attached as `lake` is a DuckLake (its tables' sizes are known).
std::vector<std::string> FunctionCatalogSql(bool ducklake);
std::vector<std::string> RelationCatalogSql();
std::vector<std::string> InformationSchemaSql();

}  // namespace weir::serve::compat
