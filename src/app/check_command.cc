#include "app/check_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "app/cli.h"
#include "app/load_settings.h"
#include "app/probe_runner.h"
#include "app/s3_settings.h"
#include "base/clock.h"
#include "base/uuid.h"
#include "config/describe.h"
#include "files/object_store.h"
#include "kafka/admin.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "lake/iceberg/rest_catalog.h"
#include "lake/iceberg/sql_catalog.h"

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

// Storage at `data_path` (set by `setting`): a marker written, read back and deleted; a local
// directory that does not exist yet is only checked to be creatable.
Probe StorageProbe(std::string name, const std::string& data_path, files::StorageAccess access,
                   std::string setting = "storage.data_path") {
  return {std::move(name),
          [data_path, access,
           setting](std::chrono::milliseconds timeout) mutable -> Result<std::string> {
            access.s3.connect_timeout_s = static_cast<double>(timeout.count()) / 1000.0;
            access.s3.max_attempts = 1;  // a retry would outlast the deadline
            const std::string context = setting + " " + data_path;
            auto store = files::ObjectStore::Locate(data_path, access);
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

// Where an Iceberg table's files live: its metadata location minus "/metadata/<file>".
std::string TableLocationOf(const std::string& metadata_location) {
  const auto at = metadata_location.rfind("/metadata/");
  return at == std::string::npos ? metadata_location : metadata_location.substr(0, at);
}

// The Iceberg catalog as configured: SQL opened (a SQLite file that does not exist yet is only
// checked to be creatable), REST's GET /v1/config; then each dataset's table looked up. The
// locations of existing tables go to `locations`, so their storage is probed as well.
Probe IcebergCatalogProbe(const config::IngestSettings& s,
                          const std::shared_ptr<std::vector<std::string>>& locations) {
  std::vector<lake::iceberg::TableIdent> tables;
  for (const auto& d : s.datasets) tables.push_back({{d.schema}, d.table});
  return {"catalog",
          [config = MakeIcebergConfig(s), tables,
           locations](std::chrono::milliseconds timeout) -> Result<std::string> {
            using lake::iceberg::CatalogErrorKind;
            std::unique_ptr<lake::iceberg::RestCatalog> rest;
            std::unique_ptr<lake::iceberg::SqlCatalog> sql;
            std::string where;
            if (config.type == lake::iceberg::CatalogType::kRest) {
              auto options = config.rest;
              options.limits.connect_timeout = timeout;
              options.limits.total_timeout = timeout;
              where = "Iceberg REST catalog " + options.uri;
              auto opened = lake::iceberg::RestCatalog::Open(options);
              if (!opened.ok()) return WithContext(opened.status(), "iceberg.uri " + options.uri);
              rest = std::move(*opened);
            } else if (config.postgres_conninfo.empty()) {
              where = "Iceberg SQL catalog (SQLite " + config.sqlite_path + ")";
              if (!std::filesystem::exists(config.sqlite_path)) {
                WEIR_RETURN_NOT_OK(
                    WithContext(CheckCreatable(config.sqlite_path), "iceberg.sqlite_path"));
                return where + ": none yet, would be created on first write";
              }
              lake::iceberg::SqlCatalogOptions options;
              options.catalog_name = config.catalog_name;
              auto opened = lake::iceberg::SqlCatalog::OpenSqlite(config.sqlite_path, options);
              if (!opened.ok()) {
                return WithContext(opened.status(), "iceberg.sqlite_path " + config.sqlite_path);
              }
              sql = std::move(*opened);
            } else {
              where = "Iceberg SQL catalog (PostgreSQL)";
              std::string conninfo = config.postgres_conninfo;
              if (conninfo.find("connect_timeout") == std::string::npos &&
                  conninfo.find("://") == std::string::npos) {
                conninfo += fmt::format(" connect_timeout={}",
                                        std::max<int64_t>(1, timeout.count() / 1000));
              }
              lake::iceberg::SqlCatalogOptions options;
              options.catalog_name = config.catalog_name;
              auto opened = lake::iceberg::SqlCatalog::OpenPostgres(conninfo, options);
              if (!opened.ok()) return WithContext(opened.status(), "iceberg.postgres_dsn");
              sql = std::move(*opened);
            }
            std::string found;
            for (const auto& ident : tables) {
              std::string location;
              if (rest) {
                auto loaded = rest->LoadTable(ident);
                if (loaded.ok()) location = TableLocationOf(loaded->metadata_location);
                if (!loaded.ok() && lake::iceberg::CatalogErrorKindOf(loaded.status()) !=
                                        CatalogErrorKind::kNotFound) {
                  return WithContext(loaded.status(), where + ", table " + ident.ToString());
                }
              } else {
                auto loaded = sql->LoadMetadataLocation(ident);
                if (loaded.ok()) location = TableLocationOf(*loaded);
                if (!loaded.ok() && lake::iceberg::CatalogErrorKindOf(loaded.status()) !=
                                        CatalogErrorKind::kNotFound) {
                  return WithContext(loaded.status(), where + ", table " + ident.ToString());
                }
              }
              found += "; " + ident.ToString() +
                       (location.empty() ? ": not created yet" : " at " + location);
              if (!location.empty()) locations->push_back(location);
            }
            return where + found;
          }};
}

// weir check for lake.format iceberg: the topics, the catalog, the warehouse's storage (SQL,
// or a REST warehouse given as a URI), then the storage of every existing table elsewhere.
ProbeReport RunIcebergChecks(const config::IngestSettings& s) {
  const files::StorageAccess access = StorageAccessOf(s.storage);
  auto locations = std::make_shared<std::vector<std::string>>();
  std::vector<Probe> probes;
  for (const auto& d : s.datasets) probes.push_back(TopicProbe(s, d));
  probes.push_back(IcebergCatalogProbe(s, locations));
  std::vector<std::string> roots;
  if (s.iceberg.catalog == "sql") {
    roots.push_back(s.iceberg.warehouse.empty() ? "weir-lake/warehouse" : s.iceberg.warehouse);
  } else if (s.iceberg.warehouse.find("://") != std::string::npos) {
    roots.push_back(s.iceberg.warehouse);
  }
  for (const auto& root : roots) {
    probes.push_back(StorageProbe("storage", root, access, "iceberg.warehouse"));
  }
  ProbeReport report = RunProbes(std::move(probes), s.check_timeout, kGrace);
  if (report.abandoned) return report;
  std::vector<Probe> more;
  for (const auto& location : *locations) {
    bool covered = false;
    for (const auto& root : roots) {
      auto store = files::ObjectStore::Locate(root, access);
      covered = covered || (store.ok() && (location + "/").starts_with(store->uri()));
    }
    if (covered) continue;
    more.push_back(
        StorageProbe("storage (table at " + location + ")", location, access, "table location"));
  }
  if (more.empty()) return report;
  ProbeReport tables = RunProbes(std::move(more), s.check_timeout, kGrace);
  for (auto& outcome : tables.outcomes) report.outcomes.push_back(std::move(outcome));
  report.abandoned = tables.abandoned;
  return report;
}

std::string Names(const std::vector<ProbeOutcome>& outcomes) {
  std::string names;
  for (const ProbeOutcome& o : outcomes) {
    if (o.verdict == Verdict::kOk) continue;
    names += (names.empty() ? "" : ", ") + o.name;
  }
  return names;
}

// Prints the outcomes and the verdict; the exit code.
int Report(ProbeReport report, std::chrono::steady_clock::time_point start, std::ostream& out,
           std::ostream& err) {
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

}  // namespace

int RunCheck(const IngestArgs& args, std::ostream& out, std::ostream& err) {
  auto settings =
      LoadSettings(config::LoadIngestSettings, args.config_path, args.overrides, "weir", err);
  if (!settings) return kExitFailure;
  const config::IngestSettings& s = *settings;
  out << "settings given or derived (the rest at their defaults; log.level=debug lists all):\n"
      << config::DescribeChanged(s);
  spdlog::debug("every setting:\n{}", config::Describe(s));
  const auto start = std::chrono::steady_clock::now();
  if (s.lake_format == "iceberg") return Report(RunIcebergChecks(s), start, out, err);
  const lake::ducklake::CatalogConfig catalog = MakeCatalogConfig(s);
  auto recorded_data_path = std::make_shared<std::string>();
  std::vector<Probe> probes;
  for (const auto& d : s.datasets) probes.push_back(TopicProbe(s, d));
  probes.push_back(CatalogProbe(s, recorded_data_path));
  const files::StorageAccess access(catalog.s3, catalog.azure);
  probes.push_back(StorageProbe("storage", catalog.data_path, access));
  ProbeReport report = RunProbes(std::move(probes), s.check_timeout, kGrace);
  // The storage probed above is the configured one; an existing catalog that records another
  // data path writes there instead, so that one is probed too.
  if (!report.abandoned && !recorded_data_path->empty()) {
    auto configured = files::ObjectStore::Locate(catalog.data_path, access);
    if (!configured.ok() || configured->uri() != *recorded_data_path) {
      ProbeReport recorded = RunProbes(
          {StorageProbe("storage (the catalog's data path)", *recorded_data_path, access)},
          s.check_timeout, kGrace);
      report.outcomes.push_back(recorded.outcomes.front());
      report.abandoned = recorded.abandoned;
    }
  }
  return Report(std::move(report), start, out, err);
}

}  // namespace weir::app
