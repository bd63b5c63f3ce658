#include "config/validate_unused.h"

#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

namespace weir::config {
namespace {

bool OneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  for (const std::string_view n : names) {
    if (name == n) return true;
  }
  return false;
}

// Why `name` is unused under `d`, or "" when it is used.
std::string WhyUnused(std::string_view name, const DecidingSettings& d) {
  const bool iceberg = d.lake_format == "iceberg";
  if (name.starts_with("catalog.")) {
    if (iceberg) {
      return "is a DuckLake catalog setting, unused with lake.format iceberg (the Iceberg "
             "catalog is set by iceberg.*)";
    }
    if (name.starts_with("catalog.postgres_") && d.catalog_kind == CatalogKind::kSqlite) {
      return "needs catalog.kind postgres (which catalog.postgres_host or catalog.postgres_dsn "
             "imply when catalog.kind is unset), but catalog.kind is sqlite";
    }
    if (name == "catalog.sqlite_path" && d.catalog_kind == CatalogKind::kPostgres) {
      return "is unused with catalog.kind postgres";
    }
    return "";
  }
  if (name.starts_with("iceberg.")) {
    if (!iceberg) {
      return fmt::format("needs lake.format iceberg, but lake.format is {}", d.lake_format);
    }
    if (d.iceberg_catalog == "sql" &&
        OneOf(name, {"iceberg.uri", "iceberg.token", "iceberg.credential"})) {
      return "is a REST catalog setting, unused with iceberg.catalog sql";
    }
    if (d.iceberg_catalog == "rest" &&
        OneOf(name, {"iceberg.sqlite_path", "iceberg.postgres_dsn", "iceberg.catalog_name"})) {
      return "is a SQL catalog setting, unused with iceberg.catalog rest";
    }
    return "";
  }
  if (name.starts_with("wal.") && d.ingest_mode != nullptr && *d.ingest_mode != "wal") {
    return fmt::format("needs ingest.mode wal, but ingest.mode is {} (no WAL is written)",
                       *d.ingest_mode);
  }
  return "";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> UnusedSettingProblems(
    const std::map<std::string, std::string>& set, const DecidingSettings& deciding) {
  std::vector<std::pair<std::string, std::string>> problems;
  for (const auto& [name, origin] : set) {
    std::string why = WhyUnused(name, deciding);
    if (!why.empty()) problems.emplace_back(name, std::move(why));
  }
  return problems;
}

}  // namespace weir::config
