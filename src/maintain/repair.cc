#include "maintain/repair.h"

#include <fmt/format.h>

namespace weir::maintain {
namespace {

std::string Problem(const FsckFinding& f) {
  return f.problem == FileProblem::kMissing
             ? fmt::format("missing (the catalog records {} bytes)", f.catalog_bytes)
             : fmt::format("{} bytes where the catalog records {}", f.actual_bytes,
                           f.catalog_bytes);
}

}  // namespace

RepairPlan PlanRepair(const TableReport& report) {
  RepairPlan plan;
  for (const FsckFinding& f : report.fsck) {
    if (f.kind == lake::LakeFileKind::kDeletes) {
      plan.unrepairable.push_back(f);
      continue;
    }
    plan.drop.push_back(f);
    plan.rows += f.rows;
    plan.bytes += f.catalog_bytes;
  }
  return plan;
}

std::string DescribeRepair(const TableReport& report, const RepairPlan& plan, bool dry_run) {
  std::string out;
  if (plan.drop.empty() && plan.unrepairable.empty()) {
    return fmt::format("{}: nothing to repair\n", report.table);
  }
  if (!plan.drop.empty()) {
    out += fmt::format("{}: {} {} data file entr{} ({} rows, {} bytes) in one new snapshot:\n",
                       report.table, dry_run ? "would drop" : "dropping", plan.drop.size(),
                       plan.drop.size() == 1 ? "y" : "ies", plan.rows, plan.bytes);
    for (const FsckFinding& f : plan.drop) {
      out += fmt::format("  drop {} ({} rows): {}\n", f.path, f.rows, Problem(f));
    }
    out += fmt::format(
        "  older snapshots keep them and their objects stay until expiry releases them; the "
        "offset ledger is not rewound, so these {} rows are not ingested again\n",
        plan.rows);
  }
  for (const FsckFinding& f : plan.unrepairable) {
    out += fmt::format(
        "{}: NOT REPAIRED {}: a delete file ({}); dropping it would bring back the rows it "
        "deletes\n",
        report.table, f.path, Problem(f));
  }
  return out;
}

nlohmann::json RepairToJson(const RepairPlan& plan, bool dry_run) {
  nlohmann::json drop = nlohmann::json::array(), unrepairable = nlohmann::json::array();
  for (const FsckFinding& f : plan.drop) drop.push_back(f.path);
  for (const FsckFinding& f : plan.unrepairable) unrepairable.push_back(f.path);
  return {{"dry_run", dry_run},
          {"drop", std::move(drop)},
          {"rows", plan.rows},
          {"bytes", plan.bytes},
          {"unrepairable", std::move(unrepairable)}};
}

Result<lake::DropFilesResult> ApplyRepair(lake::Table& table, const RepairPlan& plan) {
  if (plan.drop.empty()) return lake::DropFilesResult{};
  std::vector<std::string> paths;
  for (const FsckFinding& f : plan.drop) paths.push_back(f.lake_path);
  return table.DropDataFiles(
      paths,
      fmt::format("weir maintain fsck --repair: {} data file(s) missing or damaged", paths.size()));
}

}  // namespace weir::maintain
