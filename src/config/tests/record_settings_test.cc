// The record-handling settings of a dataset (issue 14): the mapping from YAML, WEIR_ variables
// and --set, and its validation at load.
#include <gtest/gtest.h>

#include "config/load.h"

namespace weir::config {
namespace {

using Env = std::map<std::string, std::string>;

Result<LoadedSettings> Load(std::string yaml, Env env = {}, Env overrides = {}) {
  LoadInput in;
  if (!yaml.empty()) in.yaml_text = std::move(yaml);
  in.environment = std::move(env);
  in.overrides = std::move(overrides);
  return LoadIngestSettings(in);
}

const std::string kTwoDatasets = R"yaml(
kafka: {bootstrap_servers: k}
datasets:
  - name: events
    topic: a
    table: a
    mapping:
      user: properties.user_id
      Flags: "join(',', properties.flags)"
  - {name: other, topic: b, table: b}
)yaml";

TEST(MappingSettings, FromYamlWithVariablesAndOverridesMergedByColumn) {
  auto loaded = Load(kTwoDatasets,
                     {{"WEIR_DATASET_EVENTS_MAPPING_TEAM_ID", "team_id"},
                      {"WEIR_DATASET_EVENTS_MAPPING_USER", "properties.user.id"}},
                     {{"datasets.other.mapping.n", "length(tags)"},
                      {"datasets.events.mapping.city", "properties.\"$geo\".city"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const auto& d = loaded->settings.datasets;
  EXPECT_EQ(d[0].mapping,
            (std::map<std::string, std::string>{{"Flags", "join(',', properties.flags)"},
                                                {"city", "properties.\"$geo\".city"},
                                                {"team_id", "team_id"},
                                                {"user", "properties.user.id"}}));
  EXPECT_EQ(d[1].mapping, (std::map<std::string, std::string>{{"n", "length(tags)"}}));
}

TEST(MappingSettings, UnprefixedVariablesAndSetApplyToEveryDataset) {
  auto loaded = Load(kTwoDatasets, {{"WEIR_MAPPING_SEEN_AT", "timestamp"}},
                     {{"datasets[].mapping.kind", "event"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  for (const auto& dataset : loaded->settings.datasets) {
    EXPECT_EQ(dataset.mapping.at("seen_at"), "timestamp");
    EXPECT_EQ(dataset.mapping.at("kind"), "event");
  }
  EXPECT_EQ(loaded->settings.datasets[0].mapping.size(), 4u);
}

TEST(MappingSettings, AMappingThatCannotBeUsedStopsLoadingNamingDatasetColumnAndOrigin) {
  auto bad = Load(kTwoDatasets, {{"WEIR_DATASET_OTHER_MAPPING_X", "a[?b =="}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mapping: mapping column x (a[?b ==)"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("dataset \"other\", from WEIR_DATASET_OTHER_MAPPING_X"),
            std::string::npos)
      << bad.status().message();
  auto reserved = Load(kTwoDatasets, {}, {{"datasets.events.mapping._inserted_at", "ts"}});
  ASSERT_FALSE(reserved.ok());
  EXPECT_NE(reserved.status().message().find("column \"_inserted_at\": not a column name"),
            std::string::npos)
      << reserved.status().message();
  auto twice = Load(kTwoDatasets, {}, {{"datasets.events.mapping.flags", "x"}});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("\"Flags\" and \"flags\" are the same column"),
            std::string::npos)
      << twice.status().message();
}

TEST(TypedColumnSettings, MillpondsVariableIsAcceptedAndValidated) {
  const Env millpond = {{"KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
                        {"KAFKA_TOPIC", "events"},
                        {"DUCKLAKE_TABLE", "events"},
                        {"MILLPOND_TYPED_COLUMNS", "timestamp:timestamptz,project_id:bigint"}};
  auto loaded = Load("", millpond);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.datasets.at(0).typed_columns,
            (std::vector<std::string>{"timestamp:timestamptz", "project_id:bigint"}));
  Env env = millpond;
  env["WEIR_TYPED_COLUMNS"] = "ok:boolean";  // WEIR_ wins over millpond's variable
  loaded = Load("", env);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.datasets.at(0).typed_columns,
            (std::vector<std::string>{"ok:boolean"}));
  env = millpond;
  env["MILLPOND_TYPED_COLUMNS"] = "uuid:uuid,person_id:uuid";  // millpond's hoglake pins
  loaded = Load("", env);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.datasets.at(0).typed_columns,
            (std::vector<std::string>{"uuid:uuid", "person_id:uuid"}));
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"ts:timestamp", "typed_columns: \"ts:timestamp\": type \"timestamp\" is not one of"},
           {"ts", "typed_columns: \"ts\" is not column:type"},
           {"a:bigint,A:double", "column a is typed twice"}}) {
    env = millpond;
    env["MILLPOND_TYPED_COLUMNS"] = value;
    auto bad = Load("", env);
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
    EXPECT_NE(bad.status().message().find("from MILLPOND_TYPED_COLUMNS (millpond)"),
              std::string::npos)
        << bad.status().message();
  }
}

TEST(VariantColumnSettings, MillpondsVariableIsAcceptedAndValidated) {
  const Env millpond = {{"KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
                        {"KAFKA_TOPIC", "events"},
                        {"DUCKLAKE_TABLE", "events"},
                        {"MILLPOND_VARIANT_COLUMNS", "properties,person_properties"}};
  auto loaded = Load("", millpond);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.datasets.at(0).variant_columns,
            (std::vector<std::string>{"properties", "person_properties"}));
  for (const auto& [value, message] :
       std::vector<std::pair<std::string, std::string>>{{"properties_variant", "ends in _variant"},
                                                        {"bad-name", "is not a column name"},
                                                        {"p,P", "is listed twice"}}) {
    Env env = millpond;
    env["MILLPOND_VARIANT_COLUMNS"] = value;
    auto bad = Load("", env);
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
    EXPECT_NE(bad.status().message().find("from MILLPOND_VARIANT_COLUMNS (millpond)"),
              std::string::npos)
        << bad.status().message();
  }
  // Iceberg takes them too (its tables become format version 3).
  Env iceberg = millpond;
  iceberg["WEIR_LAKE_FORMAT"] = "iceberg";
  auto accepted = Load("", iceberg);
  ASSERT_TRUE(accepted.ok()) << accepted.status().message();
  EXPECT_EQ(accepted->settings.datasets.at(0).variant_columns,
            (std::vector<std::string>{"properties", "person_properties"}));
}

}  // namespace
}  // namespace weir::config
