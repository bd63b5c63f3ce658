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

int RunMaintainServe(const config::IngestSettings& s, const std::vector<std::string>& only,
                     std::ostream& err) {
  auto tables = MaintainedTables(s, only);
  if (!tables.ok()) {
    err << "weir maintain: " << tables.status().message() << "\n";
    return kExitFailure;
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
  // One catalog shared by the tables; after a failure a table reconnects through a new one
  // (the old one lives on while other tables still hold handles into it).
  auto shared = std::make_shared<std::shared_ptr<lake::Catalog>>();
  std::vector<maintain::ServedTable> served;
  for (const MaintainedTable& t : *tables) {
    maintain::ServedTable entry;
    entry.dataset = t.dataset->name;
    entry.name = t.name;
    entry.policy = PolicyOf(*t.dataset);
    entry.actions = maintain::StandardActions(
        entry.policy, CompactionOptionsOf(*t.dataset, t.name, std::nullopt));
    entry.open = [&s, shared, spec = t.spec](bool reconnect) -> Result<maintain::OpenedTable> {
      if (reconnect || *shared == nullptr) {
        WEIR_ASSIGN_OR_RAISE(auto catalog, OpenMaintainedLake(s));
        *shared = std::shared_ptr<lake::Catalog>(std::move(catalog));
      }
      maintain::OpenedTable out;
      out.catalog = *shared;
      WEIR_ASSIGN_OR_RAISE(auto opened, out.catalog->OpenTable(spec, lake::OpenMode::kOpenOnly));
      if (opened.status == lake::OpenStatus::kOpened) out.table = std::move(opened.table);
      return out;
    };
    served.push_back(std::move(entry));
  }
  observe::MetricsRegistry registry;
  maintain::MaintainService service(std::move(served), s.maintain_stats_interval.count(),
                                    &registry);
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
  spdlog::info("weir maintain --serve: HTTP on port {}: /metrics /healthz /readyz; {} table(s)",
               (*server)->port(), tables->size());
  service.Run((*signals)->token());
  (*server)->Stop();
  spdlog::info("weir maintain --serve stopped");
  return kExitOk;
}

}  // namespace weir::app
