#include "app/maintain_lake.h"

#include <algorithm>
#include <filesystem>

#include "app/ingest_command.h"

namespace weir::app {

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
  if (s.catalog.kind == config::CatalogKind::kSqlite &&
      !std::filesystem::exists(s.catalog.sqlite_path)) {
    return Status::Invalid("catalog.sqlite_path ", s.catalog.sqlite_path,
                           ": no DuckLake catalog there yet");
  }
  auto catalog = lake::ducklake::DuckLakeCatalog::Open(MakeCatalogConfig(s));
  if (!catalog.ok()) return WithContext(catalog.status(), "the DuckLake catalog");
  return std::unique_ptr<lake::Catalog>(std::move(*catalog));
}

Result<std::vector<MaintainedTable>> MaintainedTables(const config::IngestSettings& s,
                                                      const std::vector<std::string>& only) {
  std::vector<MaintainedTable> out;
  for (const auto& d : s.datasets) {
    if (!only.empty() && std::find(only.begin(), only.end(), d.name) == only.end()) continue;
    WEIR_ASSIGN_OR_RAISE(auto partitioning, PartitioningOf(d));
    out.push_back({&d, lake::TableSpec{d.schema, d.table, {}, partitioning, SortKeysOf(d)},
                   d.schema + "." + d.table});
    if (d.rejects_enabled) {
      out.push_back({&d, lake::TableSpec{d.schema, d.table + "_rejects", {}, {}, {}},
                     d.schema + "." + d.table + "_rejects"});
    }
  }
  return out;
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
