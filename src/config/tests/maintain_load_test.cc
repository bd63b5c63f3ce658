// What each command requires of a configuration (config/setting_table.h NeedsOf, IsRequired):
// `weir maintain` loads from the lake's settings alone, takes kafka.* and datasets when a shared
// file has them, and applies dataset settings given without a dataset to every table; `weir
// ingest` still requires its brokers, topic and a dataset.
#include <gtest/gtest.h>

#include "config/describe.h"
#include "config/load.h"
#include "config/setting_table.h"

namespace weir::config {
namespace {

using Env = std::map<std::string, std::string>;

LoadInput Input(std::string yaml, Env env, Env overrides = {}) {
  LoadInput in;
  if (!yaml.empty()) in.yaml_text = std::move(yaml);
  in.environment = std::move(env);
  in.overrides = std::move(overrides);
  return in;
}

std::string MaintainError(std::string yaml, Env env, Env overrides = {}) {
  auto loaded = LoadMaintainSettings(Input(std::move(yaml), std::move(env), std::move(overrides)));
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

std::string IngestError(std::string yaml, Env env) {
  auto loaded = LoadIngestSettings(Input(std::move(yaml), std::move(env)));
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

TEST(CommandNeeds, TheSettingsTableRequiresBrokersAndTopicOfIngestAndATableOfBoth) {
  const Setting* brokers = FindSetting(Scope::kProcess, "kafka.bootstrap_servers");
  const Setting* topic = FindSetting(Scope::kDataset, "topic");
  const Setting* table = FindSetting(Scope::kDataset, "table");
  ASSERT_TRUE(brokers && topic && table);
  EXPECT_TRUE(IsRequired(*brokers, Command::kIngest));
  EXPECT_FALSE(IsRequired(*brokers, Command::kMaintain));
  EXPECT_FALSE(IsRequired(*brokers, Command::kServe));
  EXPECT_TRUE(IsRequired(*topic, Command::kIngest));
  EXPECT_FALSE(IsRequired(*topic, Command::kMaintain));
  EXPECT_TRUE(IsRequired(*table, Command::kIngest));
  EXPECT_TRUE(IsRequired(*table, Command::kMaintain));
  EXPECT_TRUE(NeedsOf(Command::kIngest).datasets);
  EXPECT_TRUE(NeedsOf(Command::kIngest).kafka);
  EXPECT_FALSE(NeedsOf(Command::kMaintain).datasets);
  EXPECT_FALSE(NeedsOf(Command::kMaintain).kafka);
  // Maintain reads what ingest reads: a shared file's kafka.* settings are its own, not errors.
  EXPECT_TRUE(UsedBy(*brokers, Command::kMaintain));
}

TEST(CommandNeeds, MaintainLoadsFromTheLakeSettingsAloneWhereIngestNamesWhatIsMissing) {
  const Env lake = {{"WEIR_CATALOG_SQLITE_PATH", "/lake/catalog.sqlite"}};
  auto maintain = LoadMaintainSettings(Input("", lake));
  ASSERT_TRUE(maintain.ok()) << maintain.status().message();
  EXPECT_TRUE(maintain->settings.datasets.empty());
  EXPECT_EQ(maintain->settings.catalog.sqlite_path, "/lake/catalog.sqlite");
  EXPECT_EQ(IngestError("", lake),
            "kafka.bootstrap_servers: required, not set (YAML kafka.bootstrap_servers, "
            "WEIR_KAFKA_BOOTSTRAP_SERVERS, KAFKA_BOOTSTRAP_SERVERS)\n"
            "datasets: at least one dataset is required (YAML datasets:, WEIR_TOPIC and "
            "WEIR_TABLE, or KAFKA_TOPIC and DUCKLAKE_TABLE)");
  // An Iceberg lake from its settings alone, in YAML.
  auto iceberg = LoadMaintainSettings(
      Input("lake:\n  format: iceberg\niceberg:\n  catalog: rest\n  uri: http://cat:8181\n", {}));
  ASSERT_TRUE(iceberg.ok()) << iceberg.status().message();
  EXPECT_EQ(iceberg->settings.lake_format, "iceberg");
  EXPECT_EQ(iceberg->settings.iceberg.uri, "http://cat:8181");
  // The lake's own rules still hold.
  EXPECT_EQ(MaintainError("", {{"WEIR_LAKE_FORMAT", "iceberg"}, {"WEIR_ICEBERG_CATALOG", "rest"}}),
            "iceberg.uri: required when iceberg.catalog is rest");
}

TEST(CommandNeeds, MaintainTakesASharedFilesKafkaSettingsAndLeavesTheirRulesToIngest) {
  const std::string shared = R"yaml(
kafka:
  bootstrap_servers: k:9092
  assignment: static
  replica_count: 3
  properties:
    group.id: mine
catalog:
  sqlite_path: /lake/catalog.sqlite
)yaml";
  auto maintain = LoadMaintainSettings(Input(shared, {{"HOSTNAME", "maintain-box"}}));
  ASSERT_TRUE(maintain.ok()) << maintain.status().message();
  EXPECT_EQ(maintain->settings.kafka.bootstrap_servers, "k:9092");
  const std::string ingest = IngestError(shared, {{"HOSTNAME", "maintain-box"}});
  EXPECT_NE(ingest.find("kafka.ordinal: not set, and HOSTNAME \"maintain-box\" has no trailing "
                        "-<n>"),
            std::string::npos)
      << ingest;
  EXPECT_NE(ingest.find("kafka.properties: group.id and auto.offset.reset are set by"),
            std::string::npos)
      << ingest;
  // A value that is not one is an error for both: the file is wrong.
  EXPECT_EQ(MaintainError("", {{"WEIR_KAFKA_CONSUME_BATCH_SIZE", "many"}}),
            "kafka.consume_batch_size: value \"many\" is not an integer (from "
            "WEIR_KAFKA_CONSUME_BATCH_SIZE)");
}

TEST(CommandNeeds, MaintainTakesDatasetsWithATableAndNoTopic) {
  const std::string datasets = R"yaml(
datasets:
  - table: events
    partition_by: [day(_inserted_at)]
  - table: clicks
    schema: web
)yaml";
  auto maintain = LoadMaintainSettings(Input(datasets, {}));
  ASSERT_TRUE(maintain.ok()) << maintain.status().message();
  ASSERT_EQ(maintain->settings.datasets.size(), 2u);
  EXPECT_EQ(maintain->settings.datasets[1].name, "clicks");
  EXPECT_EQ(maintain->settings.datasets[1].schema, "web");
  EXPECT_EQ(IngestError(datasets, {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k:9092"}}),
            "topic: required, not set (YAML datasets[].topic, WEIR_TOPIC, KAFKA_TOPIC) (dataset "
            "\"events\")\n"
            "topic: required, not set (YAML datasets[].topic, WEIR_TOPIC, KAFKA_TOPIC) (dataset "
            "\"clicks\")");
  // A dataset is its table: one without is an error for maintain too.
  EXPECT_EQ(MaintainError("datasets:\n  - name: events\n", {}),
            "table: required, not set (YAML datasets[].table, WEIR_TABLE, DUCKLAKE_TABLE) "
            "(dataset \"events\")");
  // The environment's table makes the one dataset, as for ingest.
  auto one = LoadMaintainSettings(Input("", {{"WEIR_TABLE", "events"}}));
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_EQ(one->settings.datasets.size(), 1u);
  EXPECT_EQ(one->settings.datasets[0].table, "events");
  EXPECT_EQ(one->settings.datasets[0].topic, "");
}

TEST(CommandNeeds, MaintainAppliesDatasetSettingsGivenWithoutADatasetToEveryTable) {
  auto loaded = LoadMaintainSettings(Input("",
                                           {{"WEIR_MAINTAIN_EXPIRE_OLDER_THAN", "2d"},
                                            {"WEIR_MAINTAIN_TARGET_FILE_SIZE", "1MiB"},
                                            {"WEIR_TOPIC", "ignored"}},
                                           {{"maintain.expire.retain_last", "3"}}));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const IngestSettings& s = loaded->settings;
  EXPECT_TRUE(s.datasets.empty());
  const MaintainSettings& m = s.every_table.maintain;
  EXPECT_EQ(m.expire_older_than.count(), 2 * 86400000LL);
  EXPECT_EQ(m.expire_retain_last, 3);
  EXPECT_EQ(m.target_file_size, 1LL << 20);
  EXPECT_EQ(m.small_file_size, 128LL << 10);  // the tiers follow the target, as for a dataset
  EXPECT_EQ(m.large_file_size, 512LL << 10);
  EXPECT_EQ(s.every_table.origins.at("maintain.expire.retain_last"),
            "--set maintain.expire.retain_last");
  const std::string changed = DescribeChanged(s);
  EXPECT_NE(changed.find("tables[*].maintain.expire.older_than = 48h  (from "
                         "WEIR_MAINTAIN_EXPIRE_OLDER_THAN)\n"),
            std::string::npos)
      << changed;
  // A bad value names the setting and where it came from.
  EXPECT_EQ(MaintainError("", {{"WEIR_MAINTAIN_EXPIRE_INTERVAL", "500ms"}}),
            "maintain.expire.interval: value \"500ms\" is below 1s (0 turns the policy off) (from "
            "WEIR_MAINTAIN_EXPIRE_INTERVAL)");
  // For ingest the same variables describe its one dataset, which then lacks a table.
  const std::string ingest =
      IngestError("", {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k:9092"}, {"WEIR_TOPIC", "events"}});
  EXPECT_EQ(ingest,
            "table: required, not set (YAML datasets[].table, WEIR_TABLE, DUCKLAKE_TABLE) "
            "(dataset \"#1\")");
}

TEST(CommandNeeds, MaintainRefusesASetOfAServeSettingNamingItself) {
  EXPECT_EQ(MaintainError("", {}, {{"serve.port", "5433"}}),
            "--set serve.port: a setting of weir serve, not of weir maintain");
}

}  // namespace
}  // namespace weir::config
