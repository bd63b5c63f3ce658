#include "app/maintain_command.h"

#include <algorithm>
#include <chrono>

#include <arrow/filesystem/filesystem.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "app/load_settings.h"
#include "app/maintain_compact.h"
#include "app/maintain_lake.h"
#include "base/clock.h"
#include "config/units.h"
#include "maintain/lake_report.h"
#include "maintain/repair.h"

namespace weir::app {
namespace {

struct InspectedTable {
  const config::DatasetSettings* settings = nullptr;  // its dataset's, or every table's
  std::unique_ptr<lake::Table> table;
  lake::TableInspection inspection;
  maintain::TableReport report;
  maintain::TablePolicy policy;
};

// A duration flag, or nullopt when it is empty (the dataset's setting applies); sets `bad`
// when it is not a duration.
std::optional<int64_t> DurationFlag(const char* flag, const std::string& text, std::ostream& err,
                                    bool& bad) {
  if (text.empty()) return std::nullopt;
  const auto parsed = config::ParseDuration(text);
  if (!parsed) {
    err << "weir maintain: " << flag << " " << text << ": not a duration (e.g. 30m, 24h, 7d)\n";
    bad = true;
    return std::nullopt;
  }
  return parsed->count();
}

std::string Duration(int64_t ms) { return config::FormatDuration(std::chrono::milliseconds(ms)); }

void Orphans(const std::vector<InspectedTable>& tables, std::optional<int64_t> older_than,
             bool dry_run, int64_t now, nlohmann::json& json, std::string& text, int& exit_code,
             std::ostream& err) {
  for (size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    const int64_t window = older_than.value_or(t.policy.orphans_older_than_ms);
    auto swept = maintain::SweepOrphans(t.inspection, t.report, now, window, dry_run);
    if (!swept.ok()) {
      err << "weir maintain orphans: " << swept.status().message() << "\n";
      exit_code = kExitFailure;
      continue;
    }
    json["tables"][i]["sweep"] = {{"dry_run", dry_run},
                                  {"older_than_ms", window},
                                  {"deleted", swept->deleted},
                                  {"deleted_bytes", swept->deleted_bytes},
                                  {"kept_young", swept->kept_young}};
    text += fmt::format("{}: {} {} orphan(s) ({} bytes) older than {}; kept {} younger\n",
                        t.report.table, dry_run ? "would delete" : "deleted", swept->deleted,
                        swept->deleted_bytes, Duration(window), swept->kept_young);
    if (dry_run) {
      for (const auto& orphan : t.report.orphans) {
        if (now - orphan.modified_ms >= window) text += "  " + orphan.path + "\n";
      }
    }
  }
}

int Expire(std::vector<InspectedTable>& tables, const MaintainArgs& args, bool iceberg,
           std::optional<int64_t> older_than, std::optional<int64_t> queue_window, int64_t now,
           nlohmann::json& json, std::string& text, std::ostream& err) {
  for (size_t i = 0; i < tables.size(); ++i) {
    auto& t = tables[i];
    const maintain::ExpiryPolicy policy{
        .older_than_ms = older_than.value_or(t.policy.expire_older_than_ms),
        .retain_last = args.retain_last > 0 ? args.retain_last : t.policy.expire_retain_last};
    const int64_t window = queue_window.value_or(t.policy.expire_queue_window_ms);
    // Inspected again: DuckLake's snapshots are the catalog's, so the previous table's
    // expiry may have removed some already.
    auto fresh = t.table->Inspect();
    if (!fresh.ok()) {
      err << "weir maintain expire: table " << t.report.table << ": " << fresh.status().message()
          << "\n";
      return kExitFailure;
    }
    const std::vector<int64_t> ids = maintain::SnapshotsToExpire(*fresh, policy, now);
    nlohmann::json entry = {{"dry_run", args.dry_run}, {"snapshots", ids}};
    if (args.dry_run) {
      text += fmt::format("{}: would expire {} snapshot(s){}{}\n", t.report.table, ids.size(),
                          ids.empty() ? "" : ": ", fmt::join(ids, ", "));
      json["tables"][i]["expire"] = std::move(entry);
      continue;
    }
    auto expired = t.table->ExpireSnapshots(ids, window);
    auto after =
        expired.ok() ? t.table->Inspect() : Result<lake::TableInspection>(expired.status());
    if (!after.ok()) {
      err << "weir maintain expire: table " << t.report.table << ": " << after.status().message()
          << "\n";
      return kExitFailure;
    }
    // What the expiry released: referenced before, by no kept snapshot now; still stored
    // when a format's deletion queue holds it (DuckLake, younger than the queue window).
    std::vector<std::string> released, waiting;
    for (const std::string& path : fresh->referenced) {
      if (after->referenced.contains(path)) continue;
      released.push_back(path);
      auto info = after->fs->GetFileInfo(path);
      if (info.ok() && info->type() == arrow::fs::FileType::File) waiting.push_back(path);
    }
    entry["expired"] = expired->expired;
    entry["released"] = released;
    entry["still_stored"] = waiting;
    text += fmt::format(
        "{}: expired {} snapshot(s); {} object(s) no longer referenced, {} of them deleted{}\n",
        t.report.table, expired->expired, released.size(), released.size() - waiting.size(),
        waiting.empty() ? ""
        : iceberg       ? fmt::format(" ({} still stored: `weir maintain orphans` removes them)",
                                      waiting.size())
                        : fmt::format(" ({} wait in DuckLake's deletion queue for up to {})",
                                      waiting.size(), Duration(window)));
    json["tables"][i]["expire"] = std::move(entry);
  }
  return kExitOk;
}

// fsck --repair: the plan, then (not with --dry-run) the repair and a second check.
int Repair(std::vector<InspectedTable>& tables, bool dry_run, int64_t now, nlohmann::json& json,
           std::string& text, std::ostream& err) {
  int exit_code = kExitOk;
  for (size_t i = 0; i < tables.size(); ++i) {
    auto& t = tables[i];
    const maintain::RepairPlan plan = maintain::PlanRepair(t.report);
    text += maintain::DescribeRepair(t.report, plan, dry_run);
    nlohmann::json entry = maintain::RepairToJson(plan, dry_run);
    if (!plan.unrepairable.empty()) exit_code = kExitFailure;
    if (dry_run || plan.drop.empty()) {
      if (!plan.drop.empty()) exit_code = kExitFailure;
      json["tables"][i]["repair"] = std::move(entry);
      continue;
    }
    auto dropped = maintain::ApplyRepair(*t.table, plan);
    if (!dropped.ok()) {
      err << "weir maintain fsck --repair: table " << t.report.table << ": "
          << dropped.status().message() << "\n";
      return kExitFailure;
    }
    entry["snapshot_id"] = dropped->snapshot_id;
    text += fmt::format("{}: dropped {} data file entr{} ({} rows) in snapshot {}\n",
                        t.report.table, dropped->files, dropped->files == 1 ? "y" : "ies",
                        dropped->rows, dropped->snapshot_id);
    // The check again, on the table as the repair left it.
    auto after = t.table->Inspect();
    auto report = after.ok()
                      ? maintain::BuildReport(
                            *after, {.now_ms = now, .list_objects = false, .check_files = true})
                      : Result<maintain::TableReport>(after.status());
    if (!report.ok()) {
      err << "weir maintain fsck --repair: table " << t.report.table << ": "
          << report.status().message() << "\n";
      return kExitFailure;
    }
    entry["remaining"] = report->fsck.size();
    if (!report->fsck.empty()) exit_code = kExitFailure;
    text += fmt::format("{}: fsck after the repair: {} finding(s)\n", t.report.table,
                        report->fsck.size());
    json["tables"][i]["repair"] = std::move(entry);
  }
  return exit_code;
}

}  // namespace

int RunMaintain(const MaintainArgs& args, std::ostream& out, std::ostream& err) {
  if (args.action != "stats" && args.action != "fsck" && args.action != "orphans" &&
      args.action != "expire" && args.action != "compact") {
    err << "weir maintain: unknown action '" << args.action
        << "' (stats, fsck, orphans, expire or compact)\n";
    return kExitUsage;
  }
  if (args.repair && args.action != "fsck") {
    err << "weir maintain: --repair goes with fsck\n";
    return kExitUsage;
  }
  std::optional<int64_t> target_size;
  if (!args.target_size.empty()) {
    target_size = config::ParseByteSize(args.target_size);
    if (!target_size || *target_size < 1024) {
      err << "weir maintain: --target-size " << args.target_size
          << ": not a size of at least 1KiB (e.g. 64MiB)\n";
      return kExitUsage;
    }
  }
  if (args.serve && (args.action != "stats" || args.dry_run || args.repair)) {
    err << "weir maintain --serve runs the configured policies; it takes no action, --dry-run "
           "or --repair\n";
    return kExitUsage;
  }
  bool bad = false;
  const auto older_than = DurationFlag("--older-than", args.older_than, err, bad);
  const auto queue_window = DurationFlag("--queue-window", args.queue_window, err, bad);
  if (bad) return kExitUsage;
  const bool destructive =
      (args.action == "orphans" || args.action == "expire" || args.repair) && !args.dry_run;
  if (destructive && args.interactive && !args.yes) {
    err << "weir maintain " << args.action << (args.repair ? " --repair" : "")
        << ": this changes the lake; run it with --dry-run to see what, then with --yes\n";
    return kExitUsage;
  }
  if (!args.datasets.empty() && !args.tables.empty()) {
    err << "weir maintain: --dataset and --table both pick tables; give one of them\n";
    return kExitUsage;
  }
  auto settings =
      LoadSettings(config::LoadMaintainSettings, args.config_path, args.overrides, "weir", err);
  if (!settings) return kExitFailure;
  const config::IngestSettings& s = *settings;
  for (const std::string& name : args.datasets) {
    if (std::none_of(s.datasets.begin(), s.datasets.end(),
                     [&](const auto& d) { return d.name == name; })) {
      err << "weir maintain: --dataset " << name << ": no such dataset in the configuration\n";
      return kExitUsage;
    }
  }
  if (args.serve) {
    // Its policies delete: from a terminal that needs the same --yes as a one-shot run. The
    // policies in play: the chosen datasets', and every table's for tables no dataset has.
    std::vector<const config::DatasetSettings*> policies;
    for (const auto& d : s.datasets) {
      if (args.datasets.empty() ||
          std::find(args.datasets.begin(), args.datasets.end(), d.name) != args.datasets.end()) {
        policies.push_back(&d);
      }
    }
    if (s.datasets.empty() || !args.tables.empty()) policies.push_back(&s.every_table);
    const bool deletes = std::any_of(policies.begin(), policies.end(), [](const auto* d) {
      return d->maintain.expire_interval.count() > 0 || d->maintain.orphans_interval.count() > 0;
    });
    if (deletes && args.interactive && !args.yes) {
      err << "weir maintain --serve: its policies delete (maintain.expire.interval, "
             "maintain.orphans.interval); run it with --yes, or set both to 0 for metrics only\n";
      return kExitUsage;
    }
    return RunMaintainServe(s, args.datasets, args.tables, err);
  }
  auto lake = OpenMaintainedLake(s);
  if (!lake.ok()) {
    err << "weir maintain: " << lake.status().message() << "\n";
    return kExitFailure;
  }
  auto specs = MaintainedTables(s, **lake, args.datasets, args.tables);
  if (!specs.ok()) {
    err << "weir maintain: " << specs.status().message() << "\n";
    return kExitFailure;
  }

  const int64_t now = NowUnixMillis();
  const maintain::ReportOptions options{
      .now_ms = now, .list_objects = true, .check_files = args.action == "fsck"};
  std::vector<InspectedTable> tables;
  for (const MaintainedTable& spec : *specs) {
    auto opened = (*lake)->OpenTable(spec.spec, spec.mode);
    if (!opened.ok()) {
      err << "weir maintain: table " << spec.name << ": " << opened.status().message() << "\n";
      return kExitFailure;
    }
    if (opened->status != lake::OpenStatus::kOpened) {
      if (spec.dataset.empty()) {
        spdlog::info("table {} is gone (dropped since the lake was listed)", spec.name);
      } else {
        spdlog::info("table {} (dataset {}) does not exist yet", spec.name, spec.dataset);
      }
      continue;
    }
    InspectedTable t;
    t.settings = spec.settings;
    t.table = std::move(opened->table);
    t.policy = PolicyOf(*spec.settings);
    auto inspection = t.table->Inspect();
    if (inspection.ok()) t.inspection = std::move(*inspection);
    auto report = inspection.ok() ? maintain::BuildReport(t.inspection, options)
                                  : Result<maintain::TableReport>(inspection.status());
    if (!report.ok()) {
      err << "weir maintain: table " << spec.name << ": " << report.status().message() << "\n";
      return kExitFailure;
    }
    t.report = std::move(*report);
    t.report.dataset = spec.dataset;
    t.report.table = spec.name;
    tables.push_back(std::move(t));
  }

  std::vector<maintain::TableReport> reports;
  for (const auto& t : tables) reports.push_back(t.report);
  const bool fsck = args.action == "fsck";
  nlohmann::json json = maintain::ReportsToJson(reports, fsck);
  std::string text = maintain::FormatReports(reports, fsck);
  int exit_code = kExitOk;
  if (fsck && !args.repair) {
    for (const auto& r : reports) {
      if (!r.fsck.empty()) exit_code = kExitFailure;
    }
  }
  if (fsck && args.repair) exit_code = Repair(tables, args.dry_run, now, json, text, err);
  if (fsck) {
    size_t findings = 0;
    for (const auto& r : reports) findings += r.fsck.size();
    text += exit_code == kExitOk
                ? fmt::format("fsck: OK, {} table(s), every live file present with its size\n",
                              reports.size())
                : fmt::format("fsck: FAILED, {} finding(s) in {} table(s){}\n", findings,
                              reports.size(), args.repair ? " (see the repair above)" : "");
  }
  if (args.action == "orphans") {
    Orphans(tables, older_than, args.dry_run, now, json, text, exit_code, err);
  }
  if (args.action == "expire") {
    exit_code = Expire(tables, args, s.lake_format == "iceberg", older_than, queue_window, now,
                       json, text, err);
    if (exit_code != kExitOk) return exit_code;
  }
  if (args.action == "compact") {
    for (size_t i = 0; i < tables.size(); ++i) {
      auto& t = tables[i];
      auto compacted = CompactTable(*t.table, *t.settings, target_size, args.dry_run);
      if (!compacted.ok()) {
        err << "weir maintain compact: table " << t.report.table << ": "
            << compacted.status().message() << "\n";
        exit_code = kExitFailure;
        continue;
      }
      json["tables"][i]["compact"] = maintain::CompactionToJson(compacted->report, args.dry_run);
      text += compacted->text;
    }
  }
  out << (args.json ? json.dump(2) + "\n" : text);
  return exit_code;
}

}  // namespace weir::app
