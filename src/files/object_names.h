// Object names of data files: a UUIDv7 per file, so names sort by creation time and a retried
// upload of the same file overwrites the same object instead of leaving a second one.
#pragma once

#include <string>
#include <string_view>

#include "base/uuid.h"

namespace weir::files {

// "<prefix>/ducklake-<uuid>.parquet" (no leading slash when `prefix` is empty).
std::string DataFileName(std::string_view prefix, const Uuid& id);

}  // namespace weir::files
