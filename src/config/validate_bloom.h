// The checks of a dataset's `bloom_filter_columns` against its declared columns. Internal to
// src/config (called by validate.cc).
#pragma once

#include <string>
#include <vector>

#include "config/settings.h"

namespace weir::config {

// Each problem of `dataset`'s bloom_filter_columns: not a column name, listed twice, a boolean
// typed column, and (when the dataset has a mapping, so that its columns are known at startup)
// a column the dataset does not write.
std::vector<std::string> BloomFilterColumnProblems(const DatasetSettings& dataset);

}  // namespace weir::config
