// What `weir maintain` (one-shot and --serve) needs of the configuration: the lake opened as
// ingest opens it (never created), the tables of the datasets, and each dataset's policy
// (maintain.* settings) in the maintain module's terms.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/settings.h"
#include "lake/catalog.h"
#include "lake/table_spec.h"
#include "maintain/policy.h"

namespace weir::app {

// The configured lake; a SQLite catalog that does not exist yet is an error (maintain and
// `weir wal` never create a lake).
Result<std::unique_ptr<lake::Catalog>> OpenMaintainedLake(const config::IngestSettings& s);

struct MaintainedTable {
  const config::DatasetSettings* dataset = nullptr;
  lake::TableSpec spec;
  std::string name;  // schema.table
};

// The tables of the datasets named in `only` (empty: every dataset): each one's table and,
// when rejects are on, its rejects table.
Result<std::vector<MaintainedTable>> MaintainedTables(const config::IngestSettings& s,
                                                      const std::vector<std::string>& only);

// The dataset's maintain.* settings as the maintain module's policy.
maintain::TablePolicy PolicyOf(const config::DatasetSettings& d);

}  // namespace weir::app
