#include "app/check_command.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "app/cli.h"
#include "app/load_settings.h"
#include "app/probe_runner.h"
#include "base/clock.h"
#include "base/uuid.h"
#include "config/describe.h"
#include "files/object_store.h"
#include "kafka/admin.h"

namespace weir::app {
namespace {

// Time for probes to return after their deadline (a client being destroyed, a timeout being
// noticed) before they are reported as timed out.
constexpr std::chrono::milliseconds kGrace{500};

// OK when `path` could be created: its nearest existing ancestor is a directory this process
// may write into. Creates nothing.
Status CheckCreatable(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path ancestor = std::filesystem::absolute(path, ec).parent_path();
  while (!ancestor.empty() && !std::filesystem::exists(ancestor, ec)) {
    if (ancestor == ancestor.parent_path()) break;
    ancestor = ancestor.parent_path();
  }
  if (std::filesystem::is_directory(ancestor, ec) && access(ancestor.c_str(), W_OK | X_OK) == 0) {
    return Status::OK();
  }
  return ClassifiedError(ErrorClass::kFatal, "os", "not_writable",
                         fmt::format("{} could not be created: {} is not a writable directory",
                                     path.string(), ancestor.string()));
}

Probe TopicProbe(const config::IngestSettings& s, const config::DatasetSettings& d) {
  return {"topic " + d.topic,
          [bootstrap = s.kafka.bootstrap_servers,
           d](std::chrono::milliseconds timeout) -> Result<std::string> {
            auto partitions = kafka::PartitionCount(bootstrap, d.topic, timeout);
            if (!partitions.ok()) return WithContext(partitions.status(), "broker " + bootstrap);
            return fmt::format("{} partition(s) on {} (dataset {} → {}.{})", *partitions, bootstrap,
                               d.name, d.schema, d.table);
          }};
}

// The catalog as configured; when it exists, `recorded_data_path` gets its data path.
Probe CatalogProbe(const config::IngestSettings& s,
                   const std::shared_ptr<std::string>& recorded_data_path) {
  const bool sqlite = s.catalog.kind == config::CatalogKind::kSqlite;
  const std::string where =
      sqlite ? "SQLite " + s.catalog.sqlite_path : std::string("PostgreSQL catalog");
  return {
      "catalog",
      [config = MakeCatalogConfig(s), sqlite, where,
       recorded_data_path](std::chrono::milliseconds timeout) -> Result<std::string> {
        auto inspected = lake::ducklake::InspectCatalog(config, timeout);
        if (!inspected.ok()) {
          return WithContext(inspected.status(),
                             sqlite ? "catalog.sqlite_path " + config.sqlite_path
                                    : "catalog.postgres_dsn (or catalog.postgres_*)");
        }
        if (!inspected->unwritable.empty()) {
          return ClassifiedError(
              ErrorClass::kFatal, "ducklake", "read_only",
              fmt::format("{}: weir could not write to it: {}", where, inspected->unwritable));
        }
        if (inspected->exists) {
          *recorded_data_path = inspected->data_path;
          return fmt::format("{}: DuckLake catalog with data path {}", where, inspected->data_path);
        }
        if (sqlite && !std::filesystem::exists(config.sqlite_path)) {
          WEIR_RETURN_NOT_OK(
              WithContext(CheckCreatable(config.sqlite_path), "catalog.sqlite_path"));
        }
        return fmt::format("{}: no DuckLake catalog yet, would be created on first write", where);
      }};
}

// Storage at `data_path`: a marker written, read back and deleted; a local directory that does
// not exist yet is only checked to be creatable.
Probe StorageProbe(std::string name, const std::string& data_path, files::S3Settings s3) {
  return {std::move(name),
          [data_path, s3](std::chrono::milliseconds timeout) mutable -> Result<std::string> {
            s3.connect_timeout_s = static_cast<double>(timeout.count()) / 1000.0;
            s3.max_attempts = 1;  // a retry would outlast the deadline
            const std::string context = "storage.data_path " + data_path;
            auto store = files::ObjectStore::Locate(data_path, s3);
            if (!store.ok()) return WithContext(store.status(), context);
            std::error_code ec;
            if (store->local() && !std::filesystem::exists(store->uri(), ec)) {
              WEIR_RETURN_NOT_OK(WithContext(CheckCreatable(store->uri()), context));
              return store->uri() + ": none yet, would be created on first write";
            }
            UuidV7Generator ids(Clock::System(), std::random_device{}());
            const std::string marker = ".weir-probe-" + ids.Next().ToString();
            const Status probed = store->Probe(marker);
            if (!probed.ok()) {
              return WithContext(probed, context + " (writing a marker object " + marker + ")");
            }
            return "wrote, read and deleted " + store->uri() + marker;
          }};
}

std::string Names(const std::vector<ProbeOutcome>& outcomes) {
  std::string names;
  for (const ProbeOutcome& o : outcomes) {
    if (o.verdict == Verdict::kOk) continue;
    names += (names.empty() ? "" : ", ") + o.name;
  }
  return names;
}

}  // namespace

int RunCheck(const IngestArgs& args, std::ostream& out, std::ostream& err) {
  auto settings =
      LoadSettings(config::LoadIngestSettings, args.config_path, args.overrides, "weir", err);
  if (!settings) return kExitFailure;
  const config::IngestSettings& s = *settings;
  out << config::Describe(s);
  const auto start = std::chrono::steady_clock::now();
  const lake::ducklake::CatalogConfig catalog = MakeCatalogConfig(s);
  auto recorded_data_path = std::make_shared<std::string>();
  std::vector<Probe> probes;
  for (const auto& d : s.datasets) probes.push_back(TopicProbe(s, d));
  probes.push_back(CatalogProbe(s, recorded_data_path));
  probes.push_back(StorageProbe("storage", catalog.data_path, catalog.s3));
  ProbeReport report = RunProbes(std::move(probes), s.check_timeout, kGrace);
  // The storage probed above is the configured one; an existing catalog that records another
  // data path writes there instead, so that one is probed too.
  if (!report.abandoned && !recorded_data_path->empty()) {
    auto configured = files::ObjectStore::Locate(catalog.data_path, catalog.s3);
    if (!configured.ok() || configured->uri() != *recorded_data_path) {
      ProbeReport recorded = RunProbes(
          {StorageProbe("storage (the catalog's data path)", *recorded_data_path, catalog.s3)},
          s.check_timeout, kGrace);
      report.outcomes.push_back(recorded.outcomes.front());
      report.abandoned = recorded.abandoned;
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  out << FormatOutcomes(report.outcomes);
  int code = kExitOk;
  if (report.ok()) {
    out << "weir check: configuration valid; broker, catalog and storage reachable ("
        << report.outcomes.size() << " probes in " << SecondsText(took) << ")\n";
  } else {
    size_t failed = 0;
    for (const ProbeOutcome& o : report.outcomes) failed += o.verdict != Verdict::kOk;
    err << "weir check: " << failed << " of " << report.outcomes.size()
        << " probes failed: " << Names(report.outcomes) << " (" << SecondsText(took) << ")\n";
    code = kExitFailure;
  }
  if (report.abandoned) {
    // A probe thread is still inside a client library; static destruction would race it.
    out.flush();
    err.flush();
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace weir::app
