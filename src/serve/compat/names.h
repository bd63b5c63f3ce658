// Where weir's PostgreSQL catalog objects live and which names they answer to. The installer
// creates exactly these objects; the rewriter sends clients' pg_catalog and information_schema
// references to them.
//
// The objects live in a DuckDB database of their own (kCatalogDatabase), which InstallCatalog
// builds in a private file and attaches read-only: every connection of the process sees it, and
// none can drop, replace or alter what is in it. (DuckDB reserves the schema names pg_catalog and
// information_schema for its own views, so weir's have their own names and the rewriter
// qualifies references fully.)
#pragma once

#include <span>
#include <string_view>

namespace weir::serve::compat {

inline constexpr std::string_view kCatalogDatabase = "weir_catalog";
inline constexpr std::string_view kPgCatalog = "weir_catalog.weir_pg_catalog";
inline constexpr std::string_view kInformationSchema = "weir_catalog.weir_information_schema";
// The catalog the engine attaches the lake as; its schema `main` is PostgreSQL's `public`.
inline constexpr std::string_view kLakeCatalog = "lake";

// pg_class, pg_namespace, pg_tables, ... (lower case, without schema).
bool IsPgCatalogRelation(std::string_view name);
// tables, columns, schemata, ...
bool IsInformationSchemaRelation(std::string_view name);
// The functions weir defines in kPgCatalog because DuckDB lacks them or answers differently
// (format_type, pg_get_userbyid, current_schema, version, ...).
bool IsPgCatalogFunction(std::string_view name);
// information_schema's functions clients call (_pg_expandarray).
bool IsInformationSchemaFunction(std::string_view name);

// The same lists, for the installer's self-check.
std::span<const std::string_view> PgCatalogRelations();
std::span<const std::string_view> InformationSchemaRelations();
std::span<const std::string_view> PgCatalogFunctions();
std::span<const std::string_view> InformationSchemaFunctions();

}  // namespace weir::serve::compat
