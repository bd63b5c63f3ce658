// What `weir maintain` (one-shot and --serve) needs of the configuration: the lake opened as
// ingest opens it (never created), the tables to look after, and each table's policy
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
  // The dataset the table belongs to, or IngestSettings::every_table for a table no dataset
  // describes: its maintain.* policy, Parquet settings and sort keys.
  const config::DatasetSettings* settings = nullptr;
  std::string dataset;  // the dataset's name; "" for a table no dataset describes
  lake::TableSpec spec;
  // kOpenOnly checks a dataset's table against its partitioning; kOpenAsIs takes another
  // table's layout as it is.
  lake::OpenMode mode = lake::OpenMode::kOpenOnly;
  std::string name;  // schema.table
};

// Which tables: `tables` (--table: "schema.table", or a table name found in one schema only)
// picks tables of the lake, each a dataset's when one describes it; else the tables of the
// datasets named in `only` (--dataset; empty: every dataset), each one's table and, when
// rejects are on, its rejects table; else, with no datasets configured, every table of the
// lake (rejects tables included: they hold user-visible data). A --table not in the lake is an
// Invalid error naming it and listing the lake's tables.
Result<std::vector<MaintainedTable>> MaintainedTables(const config::IngestSettings& s,
                                                      lake::Catalog& lake,
                                                      const std::vector<std::string>& only,
                                                      const std::vector<std::string>& tables);

// Its two halves. Whether the tables come from the lake's listing (--table given, or no
// dataset configured): then LakeTables, else DatasetTables, which needs no catalog.
bool TablesFromTheLake(const config::IngestSettings& s, const std::vector<std::string>& tables);
Result<std::vector<MaintainedTable>> LakeTables(const config::IngestSettings& s,
                                                lake::Catalog& lake,
                                                const std::vector<std::string>& tables);
Result<std::vector<MaintainedTable>> DatasetTables(const config::IngestSettings& s,
                                                   const std::vector<std::string>& only);

// A table's maintain.* settings as the maintain module's policy.
maintain::TablePolicy PolicyOf(const config::DatasetSettings& d);

}  // namespace weir::app
