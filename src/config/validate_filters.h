// The checks of a dataset's record filters and dynamic allowlist (filter.*, include_values.*):
// each setting alone and every combination millpond refuses. Internal to src/config (called by
// validate.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/settings.h"

namespace weir::config {

// (setting, problem) for each problem of `dataset`'s filter and include_values settings.
std::vector<std::pair<std::string, std::string>> FilterSettingProblems(
    const DatasetSettings& dataset);

}  // namespace weir::config
