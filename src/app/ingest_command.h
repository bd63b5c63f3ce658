// `weir ingest`: settings → catalog, storage and broker checks → pipeline.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "config/settings.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/iceberg/iceberg_lake_catalog.h"

namespace weir::app {

struct IngestArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set and the shortcut flags
};

// The catalog writer's configuration from the settings (shared with `weir check`).
lake::ducklake::CatalogConfig MakeCatalogConfig(const config::IngestSettings& s);
// The Iceberg lake of lake.format iceberg (the embedded SQLite catalog by default).
lake::iceberg::IcebergLakeConfig MakeIcebergConfig(const config::IngestSettings& s);

// A dataset's partition_by as lake partition keys (the settings validated it already).
Result<std::vector<lake::PartitionKey>> PartitioningOf(const config::DatasetSettings& d);

// Runs the pipeline until SIGTERM/SIGINT (then drains); returns the process exit code.
int RunIngest(const IngestArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
