// Settings that matter only under another setting's value: one that was set while that other
// setting leaves it unused is refused, naming both, never silently ignored (a
// catalog.postgres_host under the default SQLite catalog once sent a whole ingest into the
// wrong lake). Internal to src/config (called by validate.cc).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/settings.h"

namespace weir::config {

// What the rules look at: the values that decide whether the others are used.
struct DecidingSettings {
  std::string lake_format;         // lake.format
  CatalogKind catalog_kind;        // catalog.kind
  std::string iceberg_catalog;     // iceberg.catalog
  const std::string* ingest_mode;  // ingest.mode; nullptr: not a setting of the command
};

// (setting, problem) for each process-scope setting in `set` (the names given a value, as in
// Origins::process) that `deciding` leaves unused.
std::vector<std::pair<std::string, std::string>> UnusedSettingProblems(
    const std::map<std::string, std::string>& set, const DecidingSettings& deciding);

}  // namespace weir::config
