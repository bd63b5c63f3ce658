// The checks of a dataset's `upsert.*` settings against its other settings (partitioning,
// routing, the decoder). Internal to src/config (called by validate.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/settings.h"

namespace weir::config {

// (setting, problem) for each problem of `dataset`'s upsert.* settings.
std::vector<std::pair<std::string, std::string>> UpsertSettingProblems(
    const DatasetSettings& dataset);

}  // namespace weir::config
