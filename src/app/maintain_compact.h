// `weir maintain compact` for one table: the dataset's settings turned into compaction options
// (maintain/compaction.h) and the outcome as text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "config/settings.h"
#include "lake/table.h"
#include "maintain/compaction.h"

namespace weir::app {

// The options `weir maintain compact` uses for a table of dataset `d`: its Parquet settings,
// its sort keys (none for the rejects table), `target_size` or its flush.target_file_size.
maintain::CompactionOptions CompactionOptionsOf(const config::DatasetSettings& d,
                                                const lake::Table& table,
                                                std::optional<int64_t> target_size);
// The same by the table's qualified name ("main.events"): `weir maintain --serve`'s base
// options, whose target and tiers the dataset's maintain.* settings then set.
maintain::CompactionOptions CompactionOptionsOf(const config::DatasetSettings& d,
                                                const std::string& table_name,
                                                std::optional<int64_t> target_size);

struct CompactOutcome {
  maintain::CompactionReport report;
  std::string text;  // one line for the table
};

Result<CompactOutcome> CompactTable(lake::Table& table, const config::DatasetSettings& d,
                                    std::optional<int64_t> target_size, bool dry_run);

}  // namespace weir::app
