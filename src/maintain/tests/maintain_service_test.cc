// MaintainService (weir maintain --serve) on a scripted table: a failing lake is counted,
// reported down and retried through a fresh open until it is back; actions run on their
// intervals; an action the build lacks is counted as unavailable; tables found by a Discover
// function join as they appear, and a failing listing is counted and keeps /readyz down.
#include "maintain/maintain_service.h"

#include <thread>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

namespace weir::maintain {
namespace {

// A table whose Inspect answers from a script; nothing else is called by the service.
class ScriptedTable final : public lake::Table {
 public:
  explicit ScriptedTable(std::shared_ptr<std::atomic<int>> failures) : failures_(failures) {}
  const std::string& name() const override { return name_; }
  const std::vector<lake::Column>& columns() const override { return columns_; }
  const std::vector<lake::PartitionKey>& partitioning() const override { return keys_; }
  Result<lake::EvolveResult> Evolve(const lake::SchemaChange&) override {
    return Status::NotImplemented("");
  }
  Result<std::vector<lake::PartitionGroup>> Partition(const arrow::RecordBatch&) const override {
    return Status::NotImplemented("");
  }
  Result<std::map<int32_t, int64_t>> ReadLedger(const std::string&) override {
    return Status::NotImplemented("");
  }
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override { return nullptr; }
  std::string DataDirectory() const override { return ""; }
  std::string NewFilePath(const std::vector<lake::PartitionValue>&) override { return ""; }
  Result<lake::CommitResult> Commit(const lake::CommitRequest&) override {
    return Status::NotImplemented("");
  }
  Result<std::optional<int64_t>> FindCommit(const lake::CommitRequest&) override {
    return Status::NotImplemented("");
  }
  Result<lake::TableInspection> Inspect() override {
    if (failures_->load() > 0) {
      failures_->fetch_sub(1);
      return Status::IOError("catalog unreachable");
    }
    lake::TableInspection out;
    out.fs = std::make_shared<arrow::fs::LocalFileSystem>();
    out.live = {{"/t/a.parquet", lake::LakeFileKind::kData, 100, 10, {}, false, {}, 0, {}, {}},
                {"/t/b.parquet", lake::LakeFileKind::kData, 2 << 20, 20, {}, false, {}, 0, {}, {}}};
    out.snapshots = {{1, 1000, true}, {2, 2000, true}};
    return out;
  }

 private:
  std::shared_ptr<std::atomic<int>> failures_;
  std::string name_ = "main.events";
  std::vector<lake::Column> columns_;
  std::vector<lake::PartitionKey> keys_;
};

struct Harness {
  std::shared_ptr<std::atomic<int>> failures = std::make_shared<std::atomic<int>>(0);
  std::atomic<int> opens{0}, reconnects{0};
  observe::MetricsRegistry registry;

  ServedTable Table(std::vector<PolicyAction> actions, std::string name = "main.events",
                    std::string dataset = "events") {
    ServedTable t;
    t.dataset = std::move(dataset);
    t.name = std::move(name);
    t.actions = std::move(actions);
    t.open = [this](bool reconnect) -> Result<OpenedTable> {
      ++opens;
      if (reconnect) ++reconnects;
      OpenedTable out;
      out.table = std::make_unique<ScriptedTable>(failures);
      return out;
    };
    return t;
  }
  bool Has(const std::string& line) const {
    return registry.Render().find(line + "\n") != std::string::npos;
  }
  // The value of one series as rendered, or -1 when it is not there.
  double Value(const std::string& series) const {
    const std::string text = registry.Render();
    const size_t at = text.find(series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 1));
  }
  // Runs the service until `done` holds (or 10 s pass), then stops it.
  bool RunUntil(MaintainService& service, const std::function<bool()>& done) {
    std::stop_source stop;
    std::thread loop([&] { service.Run(stop.get_token()); });
    bool reached = false;
    for (int i = 0; i < 1000 && !(reached = done()); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop.request_stop();
    loop.join();
    return reached;
  }
};

constexpr char kLabels[] = "{dataset=\"events\",table=\"main.events\"}";

TEST(MaintainService, AFailingLakeIsCountedReportedDownAndReopenedUntilItIsBack) {
  Harness h;
  h.failures->store(3);
  std::vector<ServedTable> tables;
  tables.push_back(h.Table({}));
  MaintainService service(std::move(tables), 20, &h.registry);
  EXPECT_FALSE(service.Ready().first);
  ASSERT_TRUE(h.RunUntil(service, [&] {
    return h.Has(std::string("weir_lake_up") + kLabels + " 1") &&
           h.Has(std::string("weir_lake_data_files") + kLabels + " 2");
  })) << h.registry.Render();
  EXPECT_TRUE(
      h.Has("weir_maintain_errors_total{dataset=\"events\",stage=\"inspect\","
            "table=\"main.events\"} 3"))
      << h.registry.Render();
  EXPECT_EQ(h.opens.load(), 4);  // the first open, then one after each failure
  EXPECT_EQ(h.reconnects.load(), 3);
  EXPECT_TRUE(h.Has(std::string("weir_lake_bytes") + kLabels + " 2097252"));
  EXPECT_TRUE(h.Has(std::string("weir_lake_rows") + kLabels + " 30"));
  EXPECT_TRUE(h.Has(std::string("weir_lake_snapshots") + kLabels + " 2"));
  EXPECT_TRUE(h.Has(
      "weir_lake_data_files_by_size{dataset=\"events\",le=\"1048576\",table=\"main.events\"} 1"));
  EXPECT_TRUE(h.Has(
      "weir_lake_data_files_by_size{dataset=\"events\",le=\"8388608\",table=\"main.events\"} 2"));
  EXPECT_TRUE(service.Ready().first);
}

TEST(MaintainService, ActionsRunOnTheirIntervalAndOneTheBuildLacksIsCountedUnavailable) {
  Harness h;
  std::atomic<int> runs{0};
  PolicyAction counted{"expire", 3600000, [&](const ActionContext& c) -> Result<ActionOutcome> {
                         ++runs;
                         EXPECT_EQ(c.report.data_files, 2);
                         return ActionOutcome{.summary = "nothing", .snapshots_expired = 2};
                       }};
  PolicyAction failing{"orphans", 3600000, [](const ActionContext&) -> Result<ActionOutcome> {
                         return Status::IOError("store down");
                       }};
  std::vector<ServedTable> tables;
  PolicyAction lacking{"compact", 3600000, [](const ActionContext&) -> Result<ActionOutcome> {
                         return Status::NotImplemented("not part of this build");
                       }};
  tables.push_back(h.Table({std::move(lacking), std::move(counted), std::move(failing)}));
  MaintainService service(std::move(tables), 20, &h.registry);
  const std::string runs_of = "weir_maintain_runs_total{action=\"";
  // At least 3 rounds (a loaded machine may run a fourth before the check looks).
  ASSERT_TRUE(h.RunUntil(service, [&] {
    return h.Value(runs_of +
                   "orphans\",dataset=\"events\",outcome=\"error\","
                   "table=\"main.events\"}") >= 3;
  })) << h.registry.Render();
  // The failing action is tried again every round (a stats interval), the others not before
  // their hour is up.
  EXPECT_EQ(runs.load(), 1);
  EXPECT_TRUE(
      h.Has(runs_of + "expire\",dataset=\"events\",outcome=\"ok\",table=\"main.events\"} 1"));
  EXPECT_TRUE(h.Has(
      runs_of + "compact\",dataset=\"events\",outcome=\"unavailable\",table=\"main.events\"} 1"));
  EXPECT_TRUE(h.Has(std::string("weir_maintain_snapshots_expired_total") + kLabels + " 2"));
}

TEST(MaintainService, DiscoveredTablesJoinAsTheyAppearAndAFailedListingKeepsItUnready) {
  Harness h;
  std::atomic<int> listings{0};
  // The first listing fails; then one table; from the fourth on, a second one too.
  Discover discover = [&]() -> Result<std::vector<ServedTable>> {
    const int n = ++listings;
    if (n == 1) return Status::IOError("catalog unreachable");
    std::vector<ServedTable> found;
    found.push_back(h.Table({}, "main.events", ""));
    if (n >= 4) found.push_back(h.Table({}, "main.events_rejects", ""));
    return found;
  };
  MaintainService service({}, 20, &h.registry, std::move(discover));
  ASSERT_TRUE(h.RunUntil(service, [&] {
    return h.Has("weir_lake_up{dataset=\"\",table=\"main.events_rejects\"} 1");
  })) << h.registry.Render();
  EXPECT_TRUE(h.Has("weir_lake_up{dataset=\"\",table=\"main.events\"} 1"));
  EXPECT_TRUE(h.Has("weir_maintain_errors_total{dataset=\"\",stage=\"list\",table=\"\"} 1"))
      << h.registry.Render();
  // Listed again and again, each table served once.
  EXPECT_GE(listings.load(), 4);
  EXPECT_EQ(h.registry.Render().find("weir_lake_data_files{dataset=\"\",table=\"main.events\"}"),
            h.registry.Render().rfind("weir_lake_data_files{dataset=\"\",table=\"main.events\"}"));
  EXPECT_TRUE(service.Ready().first);
}

TEST(MaintainService, ReadinessNamesAFailedListing) {
  Harness h;
  MaintainService service({}, 20, &h.registry, [] {
    return Result<std::vector<ServedTable>>(Status::IOError("catalog unreachable"));
  });
  ASSERT_TRUE(h.RunUntil(service, [&] { return !service.Ready().first; }));
  EXPECT_EQ(service.Ready().second, "listing the tables: catalog unreachable");
}

}  // namespace
}  // namespace weir::maintain
