#include "app/maintain_command.h"

#include <chrono>
#include <filesystem>

#include <arrow/filesystem/filesystem.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "app/ingest_command.h"
#include "app/load_settings.h"
#include "app/maintain_compact.h"
#include "config/units.h"
#include "maintain/lake_report.h"

namespace weir::app {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The configured lake, opened as ingest opens it; a SQLite catalog that does not exist yet is
// an error here (maintain never creates a lake).
Result<std::unique_ptr<lake::Catalog>> OpenLake(const config::IngestSettings& s) {
  if (s.lake_format == "iceberg") {
    if (s.iceberg.catalog != "rest" && s.iceberg.postgres_dsn.empty() &&
        !std::filesystem::exists(s.iceberg.sqlite_path)) {
      return Status::Invalid("iceberg.sqlite_path ", s.iceberg.sqlite_path,
                             ": no Iceberg catalog there yet");
    }
    auto catalog = lake::iceberg::IcebergLakeCatalog::Open(MakeIcebergConfig(s));
    if (!catalog.ok()) return WithContext(catalog.status(), "the Iceberg catalog");
    return std::unique_ptr<lake::Catalog>(std::move(*catalog));
  }
  if (s.catalog.kind == config::CatalogKind::kSqlite &&
      !std::filesystem::exists(s.catalog.sqlite_path)) {
    return Status::Invalid("catalog.sqlite_path ", s.catalog.sqlite_path,
                           ": no DuckLake catalog there yet");
  }
  auto catalog = lake::ducklake::DuckLakeCatalog::Open(MakeCatalogConfig(s));
  if (!catalog.ok()) return WithContext(catalog.status(), "the DuckLake catalog");
  return std::unique_ptr<lake::Catalog>(std::move(*catalog));
}

struct InspectedTable {
  std::unique_ptr<lake::Table> table;
  lake::TableInspection inspection;
  maintain::TableReport report;
};

}  // namespace

int RunMaintain(const MaintainArgs& args, std::ostream& out, std::ostream& err) {
  if (args.action != "stats" && args.action != "fsck" && args.action != "orphans" &&
      args.action != "expire" && args.action != "compact") {
    err << "weir maintain: unknown action '" << args.action
        << "' (stats, fsck, orphans, expire or compact)\n";
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
  const std::string older_than = !args.older_than.empty()  ? args.older_than
                                 : args.action == "expire" ? "5d"
                                                           : "24h";
  const auto window = config::ParseDuration(older_than);
  if (!window) {
    err << "weir maintain: --older-than " << older_than << ": not a duration (e.g. 30m, 24h, 7d)\n";
    return kExitUsage;
  }
  const auto queue_window = config::ParseDuration(args.queue_window);
  if (!queue_window) {
    err << "weir maintain: --queue-window " << args.queue_window
        << ": not a duration (e.g. 30m, 24h, 7d)\n";
    return kExitUsage;
  }
  const bool destructive = (args.action == "orphans" || args.action == "expire") && !args.dry_run;
  if (destructive && args.interactive && !args.yes) {
    err << "weir maintain " << args.action
        << ": this deletes; run it with --dry-run to see what, then with --yes\n";
    return kExitUsage;
  }
  auto settings =
      LoadSettings(config::LoadIngestSettings, args.config_path, args.overrides, "weir", err);
  if (!settings) return kExitFailure;
  const config::IngestSettings& s = *settings;
  for (const std::string& name : args.datasets) {
    if (std::none_of(s.datasets.begin(), s.datasets.end(),
                     [&](const auto& d) { return d.name == name; })) {
      err << "weir maintain: --dataset " << name << ": no such dataset in the configuration\n";
      return kExitUsage;
    }
  }
  auto lake = OpenLake(s);
  if (!lake.ok()) {
    err << "weir maintain: " << lake.status().message() << "\n";
    return kExitFailure;
  }

  const int64_t now = NowMs();
  const maintain::ReportOptions options{
      .now_ms = now, .list_objects = true, .check_files = args.action == "fsck"};
  std::vector<InspectedTable> tables;
  for (const auto& d : s.datasets) {
    if (!args.datasets.empty() &&
        std::find(args.datasets.begin(), args.datasets.end(), d.name) == args.datasets.end()) {
      continue;
    }
    auto partitioning = PartitioningOf(d);
    if (!partitioning.ok()) {
      err << "weir maintain: " << partitioning.status().message() << "\n";
      return kExitFailure;
    }
    // The dataset's sort keys too: an Iceberg table declares them, and opening it asking for
    // none is refused as a layout change.
    std::vector<lake::TableSpec> specs{
        lake::TableSpec{d.schema, d.table, {}, *partitioning, SortKeysOf(d)}};
    if (d.rejects_enabled)
      specs.push_back(lake::TableSpec{d.schema, d.table + "_rejects", {}, {}, {}});
    for (const lake::TableSpec& spec : specs) {
      const std::string name = spec.schema + "." + spec.table;
      auto opened = (*lake)->OpenTable(spec, lake::OpenMode::kOpenOnly);
      if (!opened.ok()) {
        err << "weir maintain: table " << name << ": " << opened.status().message() << "\n";
        return kExitFailure;
      }
      if (opened->status != lake::OpenStatus::kOpened) {
        spdlog::info("table {} (dataset {}) does not exist yet", name, d.name);
        continue;
      }
      InspectedTable t;
      t.table = std::move(opened->table);
      auto inspection = t.table->Inspect();
      if (inspection.ok()) t.inspection = std::move(*inspection);
      auto report = inspection.ok() ? maintain::BuildReport(t.inspection, options)
                                    : Result<maintain::TableReport>(inspection.status());
      if (!report.ok()) {
        err << "weir maintain: table " << name << ": " << report.status().message() << "\n";
        return kExitFailure;
      }
      t.report = std::move(*report);
      t.report.dataset = d.name;
      t.report.table = name;
      tables.push_back(std::move(t));
    }
  }

  std::vector<maintain::TableReport> reports;
  for (const auto& t : tables) reports.push_back(t.report);
  const bool fsck = args.action == "fsck";
  nlohmann::json json = maintain::ReportsToJson(reports, fsck);
  std::string text = maintain::FormatReports(reports, fsck);
  int exit_code = kExitOk;
  if (fsck) {
    for (const auto& r : reports) {
      if (!r.fsck.empty()) exit_code = kExitFailure;
    }
  }
  if (args.action == "orphans") {
    for (size_t i = 0; i < tables.size(); ++i) {
      const auto& t = tables[i];
      auto swept =
          maintain::SweepOrphans(t.inspection, t.report, now, window->count(), args.dry_run);
      if (!swept.ok()) {
        err << "weir maintain orphans: " << swept.status().message() << "\n";
        exit_code = kExitFailure;
        continue;
      }
      json["tables"][i]["sweep"] = {{"dry_run", args.dry_run},
                                    {"older_than_ms", window->count()},
                                    {"deleted", swept->deleted},
                                    {"deleted_bytes", swept->deleted_bytes},
                                    {"kept_young", swept->kept_young}};
      text += fmt::format("{}: {} {} orphan(s) ({} bytes) older than {}; kept {} younger\n",
                          t.report.table, args.dry_run ? "would delete" : "deleted", swept->deleted,
                          swept->deleted_bytes, older_than, swept->kept_young);
      if (args.dry_run) {
        for (const auto& orphan : t.report.orphans) {
          if (now - orphan.modified_ms >= window->count()) text += "  " + orphan.path + "\n";
        }
      }
    }
  }
  if (args.action == "expire") {
    const maintain::ExpiryPolicy policy{.older_than_ms = window->count(),
                                        .retain_last = args.retain_last};
    for (size_t i = 0; i < tables.size(); ++i) {
      auto& t = tables[i];
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
      auto expired = t.table->ExpireSnapshots(ids, queue_window->count());
      auto after =
          expired.ok() ? t.table->Inspect() : Result<lake::TableInspection>(expired.status());
      if (!after.ok()) {
        err << "weir maintain expire: table " << t.report.table << ": " << after.status().message()
            << "\n";
        return kExitFailure;
      }
      // What the expiry released: referenced before, by no kept snapshot now; still stored
      // when a format's deletion queue holds it (DuckLake, younger than --queue-window).
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
                          : fmt::format(" ({} wait in the deletion queue for up to {})",
                                        waiting.size(), args.queue_window));
      json["tables"][i]["expire"] = std::move(entry);
    }
  }
  if (args.action == "compact") {
    for (size_t i = 0; i < tables.size(); ++i) {
      auto& t = tables[i];
      const auto d = std::find_if(s.datasets.begin(), s.datasets.end(),
                                  [&](const auto& x) { return x.name == t.report.dataset; });
      auto compacted = CompactTable(*t.table, *d, target_size, args.dry_run);
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
