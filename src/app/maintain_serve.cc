// `weir maintain --serve` (maintain_command.h): the lake metrics on /metrics and the policies
// on their schedule (maintain/maintain_service.h), until SIGTERM or SIGINT.
#include <chrono>

#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "app/maintain_command.h"
#include "app/maintain_compact.h"
#include "app/maintain_lake.h"
#include "app/stop_signals.h"
#include "config/describe.h"
#include "maintain/maintain_service.h"
#include "observe/http_server.h"

namespace weir::app {

namespace {

// One catalog shared by the tables; after a failure a table reconnects through a new one (the
// old one lives on while other tables still hold handles into it).
using SharedCatalog = std::shared_ptr<std::shared_ptr<lake::Catalog>>;

Result<std::shared_ptr<lake::Catalog>> CatalogOf(const config::IngestSettings& s,
                                                 const SharedCatalog& shared, bool reconnect) {
  if (reconnect || *shared == nullptr) {
    WEIR_ASSIGN_OR_RAISE(auto catalog, OpenMaintainedLake(s));
    *shared = std::shared_ptr<lake::Catalog>(std::move(catalog));
  }
  return *shared;
}

maintain::ServedTable Served(const config::IngestSettings& s, const SharedCatalog& shared,
                             const MaintainedTable& t) {
  maintain::ServedTable entry;
  entry.dataset = t.dataset;
  entry.name = t.name;
  entry.policy = PolicyOf(*t.settings);
  entry.actions = maintain::StandardActions(entry.policy,
                                            CompactionOptionsOf(*t.settings, t.name, std::nullopt));
  entry.open = [&s, shared, spec = t.spec,
                mode = t.mode](bool reconnect) -> Result<maintain::OpenedTable> {
    maintain::OpenedTable out;
    WEIR_ASSIGN_OR_RAISE(out.catalog, CatalogOf(s, shared, reconnect));
    WEIR_ASSIGN_OR_RAISE(auto opened, out.catalog->OpenTable(spec, mode));
    if (opened.status == lake::OpenStatus::kOpened) out.table = std::move(opened.table);
    return out;
  };
  return entry;
}

}  // namespace

int RunMaintainServe(const config::IngestSettings& s, const std::vector<std::string>& only,
                     const std::vector<std::string>& tables, std::ostream& err) {
  auto shared = std::make_shared<std::shared_ptr<lake::Catalog>>();
  std::vector<maintain::ServedTable> served;
  maintain::Discover discover;
  if (TablesFromTheLake(s, tables)) {
    // The lake's tables, listed again every stats interval (ingest creates tables as it goes);
    // after a failed listing through a new catalog connection.
    auto failed = std::make_shared<bool>(false);
    discover = [&s, &tables, shared, failed]() -> Result<std::vector<maintain::ServedTable>> {
      auto catalog = CatalogOf(s, shared, *failed);
      auto found = catalog.ok() ? LakeTables(s, **catalog, tables)
                                : Result<std::vector<MaintainedTable>>(catalog.status());
      *failed = !found.ok();
      if (!found.ok()) return found.status();
      std::vector<maintain::ServedTable> out;
      for (const MaintainedTable& t : *found) out.push_back(Served(s, shared, t));
      return out;
    };
    // A --table not in the lake stops the start; a lake not reachable yet does not.
    auto first = discover();
    if (!first.ok() && first.status().IsInvalid() && !tables.empty()) {
      err << "weir maintain: " << first.status().message() << "\n";
      return kExitFailure;
    }
    if (first.ok()) served = std::move(*first);
  } else {
    auto found = DatasetTables(s, only);
    if (!found.ok()) {
      err << "weir maintain: " << found.status().message() << "\n";
      return kExitFailure;
    }
    for (const MaintainedTable& t : *found) served.push_back(Served(s, shared, t));
  }
  auto signals = StopSignals::Install();
  if (!signals.ok()) {
    spdlog::error("{}", signals.status().message());
    return kExitFailure;
  }
  spdlog::info(
      "weir maintain --serve starting; settings given or derived (the rest at their "
      "defaults):\n{}",
      config::DescribeChanged(s));
  spdlog::debug("every setting:\n{}", config::Describe(s));
  const size_t count = served.size();
  observe::MetricsRegistry registry;
  maintain::MaintainService service(std::move(served), s.maintain_stats_interval.count(), &registry,
                                    std::move(discover));
  const int64_t stale_ms = std::max<int64_t>(300000, 3 * s.maintain_stats_interval.count());
  observe::HttpServerOptions http_options;
  http_options.port = s.maintain_http_port;
  http_options.registry = &registry;
  http_options.health = [&service, stale_ms] {
    const auto age = std::chrono::steady_clock::now() - service.last_round();
    const bool ok = age < std::chrono::milliseconds(stale_ms);
    return observe::ProbeResult{ok, ok ? "" : "the maintenance loop has not gone round lately"};
  };
  http_options.readiness = [&service] {
    auto [ok, detail] = service.Ready();
    return observe::ProbeResult{ok, detail};
  };
  auto server = observe::HttpServer::Make(http_options);
  const Status started = server.ok() ? (*server)->Start() : server.status();
  if (!started.ok()) {
    spdlog::error("maintain.http_port {}: {}", s.maintain_http_port, started.message());
    return kExitFailure;
  }
  spdlog::info("weir maintain --serve: HTTP on port {}: /metrics /healthz /readyz; {} table(s){}",
               (*server)->port(), count,
               TablesFromTheLake(s, tables) ? " (the lake's, listed every stats interval)" : "");
  service.Run((*signals)->token());
  (*server)->Stop();
  spdlog::info("weir maintain --serve stopped");
  return kExitOk;
}

}  // namespace weir::app
