// `weir maintain fsck --repair`: what a repair of fsck's findings changes, said before it is
// done. A data file whose object is missing, or whose object's size is not the catalog's (a
// truncated or overwritten object no reader can trust), is dropped from the table by one new
// snapshot (lake::Table::DropDataFiles), as a delete of its rows would: older snapshots keep it,
// its object is left for expiry to release, and the offset ledger is not touched — those rows
// are gone from the table, not ingested again. A delete file is never dropped (its rows would
// come back); such a finding is reported as not repairable.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "lake/table.h"
#include "maintain/lake_report.h"

namespace weir::maintain {

struct RepairPlan {
  std::vector<FsckFinding> drop;          // data files whose entries the repair drops
  std::vector<FsckFinding> unrepairable;  // delete files
  int64_t rows = 0;                       // the rows the dropped files held
  int64_t bytes = 0;                      // as the catalog records them
};

RepairPlan PlanRepair(const TableReport& report);

// The plan in words, one line per change (`would drop` with `dry_run`, `dropping` otherwise).
std::string DescribeRepair(const TableReport& report, const RepairPlan& plan, bool dry_run);
nlohmann::json RepairToJson(const RepairPlan& plan, bool dry_run);

// Carries the plan out on `table` (one snapshot); nothing when the plan drops nothing.
Result<lake::DropFilesResult> ApplyRepair(lake::Table& table, const RepairPlan& plan);

}  // namespace weir::maintain
