#include "app/maintain_lake.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/ingest_command.h"

namespace weir::app {
namespace {

// At most this many of the lake's tables are named in an error.
constexpr size_t kTablesNamed = 50;

std::string TablesThere(const std::vector<lake::TableName>& listed) {
  if (listed.empty()) return "the lake has no tables";
  std::vector<std::string> names;
  for (size_t i = 0; i < listed.size() && i < kTablesNamed; ++i) {
    names.push_back(listed[i].Qualified());
  }
  std::string more;
  if (listed.size() > kTablesNamed)
    more = fmt::format(" and {} more", listed.size() - kTablesNamed);
  return fmt::format("its tables: {}{}", fmt::join(names, ", "), more);
}

// The table of the lake `wanted` names: "schema.table" exactly, or a bare table name found in
// one schema only.
Result<lake::TableName> Resolve(const std::string& wanted,
                                const std::vector<lake::TableName>& listed) {
  std::vector<lake::TableName> found;
  const size_t dot = wanted.find('.');
  for (const lake::TableName& name : listed) {
    const bool match = dot == std::string::npos ? name.table == wanted
                                                : name.schema == wanted.substr(0, dot) &&
                                                      name.table == wanted.substr(dot + 1);
    if (match) found.push_back(name);
  }
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    return Status::Invalid("--table ", wanted, ": no such table in the lake (", TablesThere(listed),
                           ")");
  }
  std::vector<std::string> names;
  for (const auto& name : found) names.push_back(name.Qualified());
  return Status::Invalid("--table ", wanted, ": a table of that name is in several schemas (",
                         fmt::format("{}", fmt::join(names, ", ")), "); name it as schema.table");
}

// The dataset's own tables: its table and, when rejects are on, its rejects table.
Result<std::vector<MaintainedTable>> OwnTables(const config::DatasetSettings& d) {
  WEIR_ASSIGN_OR_RAISE(auto partitioning, PartitioningOf(d));
  std::vector<MaintainedTable> out;
  out.push_back({&d, d.name, lake::TableSpec{d.schema, d.table, {}, partitioning, SortKeysOf(d)},
                 lake::OpenMode::kOpenOnly, d.schema + "." + d.table});
  if (d.rejects_enabled) {
    out.push_back({&d, d.name, lake::TableSpec{d.schema, d.table + "_rejects", {}, {}, {}},
                   lake::OpenMode::kOpenOnly, d.schema + "." + d.table + "_rejects"});
  }
  return out;
}

// A table of the lake as maintain looks after it: a dataset's when one describes it (its
// layout checked, its settings), else as it is, with the settings of every table.
Result<MaintainedTable> LakeTable(const config::IngestSettings& s, const lake::TableName& name) {
  for (const auto& d : s.datasets) {
    if (d.schema != name.schema) continue;
    if (d.table == name.table || d.table + "_rejects" == name.table) {
      WEIR_ASSIGN_OR_RAISE(auto own, OwnTables(d));
      if (own.front().spec.table == name.table) return own.front();
      return MaintainedTable{&d, d.name, lake::TableSpec{name.schema, name.table, {}, {}, {}},
                             lake::OpenMode::kOpenOnly, name.Qualified()};
    }
  }
  return MaintainedTable{&s.every_table, "", lake::TableSpec{name.schema, name.table, {}, {}, {}},
                         lake::OpenMode::kOpenAsIs, name.Qualified()};
}

}  // namespace

Result<std::unique_ptr<lake::Catalog>> OpenMaintainedLake(const config::IngestSettings& s) {
  if (s.lake_format == "iceberg") {
    if (s.iceberg.catalog != "rest" && s.iceberg.postgres_dsn.empty() &&
        !std::filesystem::exists(s.iceberg.sqlite_path)) {
      return Status::Invalid("iceberg.sqlite_path ", s.iceberg.sqlite_path,
                             ": no Iceberg catalog there yet");
    }
    auto catalog = lake::iceberg::IcebergLakeCatalog::Open(MakeIcebergConfig(s));
    if (!catalog.ok()) return WithContext(catalog.status(), "the Iceberg catalog");
    return std::unique_ptr<lake::Catalog>(std::move(*catalog));
  }
  auto config = MakeCatalogConfig(s);
  // The catalog records its data path: the configured one is compared with it only when given
  // (the default would only leave an empty weir-lake/data/ wherever maintain runs).
  if (!s.origins.contains("storage.data_path")) config.data_path.clear();
  // Looked at first, changing nothing: opening an empty database would create a catalog.
  auto inspected = lake::ducklake::InspectCatalog(config, s.startup_timeout);
  if (!inspected.ok()) return WithContext(inspected.status(), "the DuckLake catalog");
  if (!inspected->exists) {
    if (s.catalog.kind == config::CatalogKind::kSqlite) {
      return Status::Invalid("catalog.sqlite_path ", s.catalog.sqlite_path,
                             ": no DuckLake catalog there yet");
    }
    return Status::Invalid(
        "catalog.postgres_dsn (or catalog.postgres_*): no DuckLake catalog in that database yet");
  }
  auto catalog = lake::ducklake::DuckLakeCatalog::Open(config);
  if (!catalog.ok()) return WithContext(catalog.status(), "the DuckLake catalog");
  return std::unique_ptr<lake::Catalog>(std::move(*catalog));
}

bool TablesFromTheLake(const config::IngestSettings& s, const std::vector<std::string>& tables) {
  return !tables.empty() || s.datasets.empty();
}

Result<std::vector<MaintainedTable>> DatasetTables(const config::IngestSettings& s,
                                                   const std::vector<std::string>& only) {
  std::vector<MaintainedTable> out;
  for (const auto& d : s.datasets) {
    if (!only.empty() && std::find(only.begin(), only.end(), d.name) == only.end()) continue;
    WEIR_ASSIGN_OR_RAISE(auto own, OwnTables(d));
    for (auto& table : own) out.push_back(std::move(table));
  }
  return out;
}

Result<std::vector<MaintainedTable>> LakeTables(const config::IngestSettings& s,
                                                lake::Catalog& lake,
                                                const std::vector<std::string>& tables) {
  auto listed = lake.ListTables();
  if (!listed.ok()) return WithContext(listed.status(), "listing the tables of the lake");
  std::vector<lake::TableName> chosen;
  if (tables.empty()) {
    chosen = *listed;
  } else {
    for (const std::string& wanted : tables) {
      WEIR_ASSIGN_OR_RAISE(auto name, Resolve(wanted, *listed));
      if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.push_back(name);
    }
  }
  std::vector<MaintainedTable> out;
  for (const lake::TableName& name : chosen) {
    WEIR_ASSIGN_OR_RAISE(auto table, LakeTable(s, name));
    out.push_back(std::move(table));
  }
  return out;
}

Result<std::vector<MaintainedTable>> MaintainedTables(const config::IngestSettings& s,
                                                      lake::Catalog& lake,
                                                      const std::vector<std::string>& only,
                                                      const std::vector<std::string>& tables) {
  if (TablesFromTheLake(s, tables)) return LakeTables(s, lake, tables);
  return DatasetTables(s, only);
}

maintain::TablePolicy PolicyOf(const config::DatasetSettings& d) {
  const config::MaintainSettings& m = d.maintain;
  return maintain::TablePolicy{
      .target_file_size = m.target_file_size,
      .small_file_size = m.small_file_size,
      .large_file_size = m.large_file_size,
      .compact_interval_ms = m.compact_interval.count(),
      .compact_medium_interval_ms = m.compact_medium_interval.count(),
      .expire_older_than_ms = m.expire_older_than.count(),
      .expire_retain_last = m.expire_retain_last,
      .expire_queue_window_ms = m.expire_queue_window.count(),
      .expire_interval_ms = m.expire_interval.count(),
      .orphans_older_than_ms = m.orphans_older_than.count(),
      .orphans_interval_ms = m.orphans_interval.count(),
  };
}

}  // namespace weir::app
