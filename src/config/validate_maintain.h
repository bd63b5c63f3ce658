// The checks of a dataset's `maintain.*` settings that concern more than one value (the
// compaction tiers against each other and the target, interval floors). Internal to
// src/config (called by validate.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/settings.h"

namespace weir::config {

// (setting, problem) for each problem of `dataset`'s maintain.* settings.
std::vector<std::pair<std::string, std::string>> MaintainSettingProblems(
    const DatasetSettings& dataset);

}  // namespace weir::config
