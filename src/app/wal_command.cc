#include "app/wal_command.h"

#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "app/cli.h"
#include "app/ingest_command.h"
#include "app/load_settings.h"
#include "app/maintain_lake.h"
#include "kafka/admin.h"
#include "wal/lake_probe.h"
#include "wal/recovery.h"
#include "wal/wal_directory.h"

namespace weir::app {
namespace {

std::string DatasetDirectory(const config::IngestSettings& s, const config::DatasetSettings& d) {
  return (std::filesystem::path(s.wal.dir) / d.name).string();
}

nlohmann::json FileJson(const wal::SegmentEntry& entry) {
  nlohmann::json file = {{"file", entry.file_name}, {"size_bytes", entry.size_bytes}};
  if (!entry.name) {
    file["state"] = "unknown";
    return file;
  }
  file["state"] = std::string(wal::ToString(entry.name->state));
  file["topic"] = entry.name->topic;
  file["partition"] = entry.name->partition;
  file["start"] = entry.name->start;
  file["end"] = entry.name->state == wal::SegmentState::kReady ? nlohmann::json(entry.name->end)
                                                               : nlohmann::json(nullptr);
  return file;
}

std::string RangeText(const wal::SegmentEntry& entry) {
  if (!entry.name) return "-";
  if (entry.name->state == wal::SegmentState::kActive) {
    return fmt::format("{}[{}] {}-", entry.name->topic, entry.name->partition, entry.name->start);
  }
  return fmt::format("{}[{}] {}-{}", entry.name->topic, entry.name->partition, entry.name->start,
                     entry.name->end);
}

int Ls(const config::IngestSettings& s, bool json, std::ostream& out, std::ostream& err) {
  nlohmann::json report = {{"wal_dir", s.wal.dir}, {"datasets", nlohmann::json::array()}};
  std::string text;
  for (const auto& d : s.datasets) {
    const std::string dir = DatasetDirectory(s, d);
    auto entries = wal::ListSegments(dir);
    if (!entries.ok()) {
      err << "weir wal ls: " << entries.status().message() << "\n";
      return kExitFailure;
    }
    nlohmann::json dataset = {{"name", d.name}, {"directory", dir}};
    dataset["files"] = nlohmann::json::array();
    std::map<std::string, std::pair<int64_t, int64_t>> totals;  // state → files, bytes
    text += fmt::format("dataset {} ({}): {} file(s)\n", d.name, dir, entries->size());
    for (const auto& entry : *entries) {
      const nlohmann::json file = FileJson(entry);
      dataset["files"].push_back(file);
      auto& total = totals[file["state"].get<std::string>()];
      ++total.first;
      total.second += entry.size_bytes;
      text += fmt::format("  {:<7} {:<28} {:>12}  {}\n", file["state"].get<std::string>(),
                          RangeText(entry), entry.size_bytes, entry.file_name);
    }
    for (const auto& [state, total] : totals) {
      dataset["totals"][state] = {{"files", total.first}, {"bytes", total.second}};
      text += fmt::format("  {} {}: {} bytes\n", total.first, state, total.second);
    }
    report["datasets"].push_back(std::move(dataset));
  }
  out << (json ? report.dump(2) + "\n" : text);
  return kExitOk;
}

int Check(const config::IngestSettings& s, bool json, std::ostream& out, std::ostream& err) {
  const kafka::ConsumerConfig consumer = MakeConsumerConfig(s);
  std::unique_ptr<lake::Catalog> lake;
  nlohmann::json report = {{"wal_dir", s.wal.dir}, {"datasets", nlohmann::json::array()}};
  std::string text, refused;
  for (const auto& d : s.datasets) {
    const std::string dir = DatasetDirectory(s, d);
    auto entries = wal::ListSegments(dir);
    if (!entries.ok()) {
      err << "weir wal check: " << entries.status().message() << "\n";
      return kExitFailure;
    }
    // Recovery never runs without the committed offsets: neither does its check.
    kafka::ConsumerConfig of_topic = consumer;
    of_topic.topics = {d.topic};
    auto offsets = kafka::GroupCommittedOffsetsWithin(of_topic, d.topic, s.check_timeout);
    if (!offsets.ok()) {
      err << "weir wal check: dataset " << d.name << ": cannot read the committed offsets of "
          << "group " << s.kafka.group_id
          << " (recovery refuses to start without them): " << offsets.status().message() << "\n";
      return kExitFailure;
    }
    wal::CommittedOffsets committed;
    for (const auto& [partition, offset] : *offsets) committed[{d.topic, partition}] = offset;
    if (!lake) {
      // The catalog gets check.timeout, as the committed offsets do (not startup.timeout).
      config::IngestSettings within = s;
      within.startup_timeout = s.check_timeout;
      auto opened = OpenMaintainedLake(within);
      if (!opened.ok()) {
        err << "weir wal check: " << opened.status().message() << "\n";
        return kExitFailure;
      }
      lake = std::move(*opened);
    }
    auto partitioning = PartitioningOf(d);
    if (!partitioning.ok()) {
      err << "weir wal check: " << partitioning.status().message() << "\n";
      return kExitFailure;
    }
    auto table = lake->OpenTable(lake::TableSpec{d.schema, d.table, {}, *partitioning, {}},
                                 lake::OpenMode::kOpenOnly);
    if (!table.ok()) {
      err << "weir wal check: table " << d.schema << "." << d.table << ": "
          << table.status().message() << "\n";
      return kExitFailure;
    }
    wal::LakeTableProbe probe(table->status == lake::OpenStatus::kOpened ? table->table.get()
                                                                         : nullptr);
    auto plan = wal::PlanRecovery(*entries, committed, probe);
    if (!plan.ok()) {
      err << "weir wal check: dataset " << d.name << ": " << plan.status().message() << "\n";
      return kExitFailure;
    }
    nlohmann::json dataset = {{"name", d.name},
                              {"directory", dir},
                              {"table", d.schema + "." + d.table},
                              {"table_exists", table->status == lake::OpenStatus::kOpened}};
    dataset["files"] = nlohmann::json::array();
    text += fmt::format("dataset {} ({}), table {}.{}:\n", d.name, dir, d.schema, d.table);
    std::map<std::string, int64_t> counts;
    for (const wal::RecoveryDecision& decision : *plan) {
      nlohmann::json file = FileJson(decision.file);
      const std::string action(wal::ToString(decision.action));
      file["action"] = action;
      file["committed"] =
          decision.committed ? nlohmann::json(*decision.committed) : nlohmann::json(nullptr);
      file["in_table"] =
          decision.in_table ? nlohmann::json(*decision.in_table) : nlohmann::json(nullptr);
      file["reason"] = decision.reason;
      dataset["files"].push_back(std::move(file));
      ++counts[action];
      text += fmt::format("  {:<12} {}: {}\n", action, decision.file.file_name, decision.reason);
      if (decision.action == wal::RecoveryAction::kRefuse) {
        refused += "\n  " + decision.file.path + ": " + decision.reason;
      }
    }
    dataset["actions"] = counts;
    report["datasets"].push_back(std::move(dataset));
  }
  report["refused"] = !refused.empty();
  out << (json ? report.dump(2) + "\n" : text);
  if (!refused.empty()) {
    err << "weir wal check: recovery would refuse to start:" << refused << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int RunWal(const WalArgs& args, std::ostream& out, std::ostream& err) {
  if (args.action != "ls" && args.action != "check") {
    err << "weir wal: unknown action '" << args.action << "' (ls or check)\n";
    return kExitUsage;
  }
  auto settings =
      LoadSettings(config::LoadIngestSettings, args.config_path, args.overrides, "weir", err);
  if (!settings) return kExitFailure;
  if (settings->ingest_mode != "wal") {
    err << "weir wal: WAL mode is off in this configuration (ingest.mode is "
        << settings->ingest_mode << "): direct mode keeps no WAL to " << args.action
        << "; set ingest.mode: wal and wal.dir to use one\n";
    return kExitUsage;
  }
  if (settings->wal.dir.empty()) {
    err << "weir wal: wal.dir: required, not set\n";
    return kExitUsage;
  }
  return args.action == "ls" ? Ls(*settings, args.json, out, err)
                             : Check(*settings, args.json, out, err);
}

}  // namespace weir::app
