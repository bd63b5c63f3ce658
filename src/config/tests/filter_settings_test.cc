// The record filters' and the dynamic allowlist's settings (issue 14): millpond's variables
// with millpond's meaning, and every combination it refuses stopping the load naming the
// setting.
#include <gtest/gtest.h>

#include "config/load.h"

namespace weir::config {
namespace {

using Env = std::map<std::string, std::string>;

Result<LoadedSettings> Load(Env env) {
  LoadInput in;
  in.environment = std::move(env);
  return LoadIngestSettings(in);
}

Env Millpond(Env more = {}) {
  Env env = {{"KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
             {"KAFKA_TOPIC", "events"},
             {"DUCKLAKE_TABLE", "events"}};
  for (auto& [k, v] : more) env[k] = v;
  return env;
}

std::string ErrorOf(Env env) {
  auto loaded = Load(std::move(env));
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

TEST(FilterSettings, MillpondsVariablesAreAcceptedWithTheirMeaning) {
  auto loaded = Load(Millpond({{"MILLPOND_FILTER_KEEP_FIELD_NAME", "team_id"},
                               {"MILLPOND_FILTER_VALUES", "2, 4,1956,69,"},
                               {"MILLPOND_FILTER_DROP_FIELD_NAME", "user"},
                               {"MILLPOND_FILTER_DROP_VALUES", "bot"},
                               {"MILLPOND_INCLUDE_VALUES_URL", "http://cp:8080/teams"},
                               {"MILLPOND_INCLUDE_VALUES_MODE", "Authoritative"},
                               {"MILLPOND_INCLUDE_VALUES_POLL_INTERVAL_S", "1.5"},
                               {"MILLPOND_INCLUDE_VALUES_REMOVAL_POLLS", "3"},
                               {"MILLPOND_INCLUDE_VALUES_REQUEST_TIMEOUT_S", "2"},
                               {"MILLPOND_INCLUDE_VALUES_STARTUP_TIMEOUT_S", "30"},
                               {"MILLPOND_INCLUDE_VALUES_AUTH_HEADER_NAME", "X-Internal-Secret"},
                               {"MILLPOND_INCLUDE_VALUES_AUTH_TOKEN", "s3cret"}}));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const DatasetSettings& d = loaded->settings.datasets.at(0);
  EXPECT_EQ(d.filter.keep_field, "team_id");
  EXPECT_EQ(d.filter.keep_values, (std::vector<std::string>{"2", "4", "1956", "69"}));
  EXPECT_EQ(d.filter.drop_field, "user");
  EXPECT_EQ(d.filter.drop_values, std::vector<std::string>{"bot"});
  EXPECT_EQ(d.include_values.url, "http://cp:8080/teams");
  EXPECT_EQ(d.include_values.mode, "Authoritative");
  EXPECT_EQ(d.include_values.poll_interval.count(), 1500);
  EXPECT_EQ(d.include_values.removal_polls, 3);
  EXPECT_EQ(d.include_values.request_timeout.count(), 2000);
  EXPECT_EQ(d.include_values.startup_timeout.count(), 30000);
  EXPECT_EQ(d.include_values.auth_header_name, "X-Internal-Secret");
  EXPECT_EQ(d.include_values.auth_token, "s3cret");
  EXPECT_TRUE(loaded->warnings.empty());
}

TEST(FilterSettings, WeirVariablesAndDefaults) {
  auto loaded = Load({{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k"},
                      {"WEIR_TOPIC", "t"},
                      {"WEIR_TABLE", "t"},
                      {"WEIR_FILTER_KEEP_FIELD", "team"},
                      {"WEIR_FILTER_KEEP_VALUES", "a,b"},
                      {"WEIR_INCLUDE_VALUES_URL", "https://cp/teams"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const auto& iv = loaded->settings.datasets.at(0).include_values;
  EXPECT_EQ(iv.mode, "");  // shadow
  EXPECT_EQ(iv.poll_interval.count(), 60000);
  EXPECT_EQ(iv.removal_polls, 5);
  EXPECT_EQ(iv.request_timeout.count(), 10000);
  EXPECT_EQ(iv.startup_timeout.count(), 60000);
  EXPECT_EQ(iv.max_bytes, 4 << 20);
}

TEST(FilterSettings, EveryInvalidCombinationStopsTheLoadNamingTheSetting) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "team_id"}},
       "filter.keep_field: needs filter.keep_values set too"},
      {{{"MILLPOND_FILTER_VALUES", "1"}}, "filter.keep_values: needs filter.keep_field set too"},
      {{{"MILLPOND_FILTER_DROP_FIELD_NAME", "team_id"}},
       "filter.drop_field: needs filter.drop_values set too"},
      {{{"MILLPOND_FILTER_DROP_VALUES", "1"}},
       "filter.drop_values: needs filter.drop_field set too"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "team-id"}, {"MILLPOND_FILTER_VALUES", "1"}},
       "filter.keep_field: value \"team-id\" is not a column name"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1,99999999999999999999"}},
       "filter.keep_values: value \"99999999999999999999\" is an integer beyond"},
      {{{"MILLPOND_INCLUDE_VALUES_URL", "http://cp/teams"}},
       "include_values.url: needs the allowlist"},
      {{{"MILLPOND_INCLUDE_VALUES_MODE", "shadow"}},
       "include_values.mode: only valid with include_values.url set"},
      {{{"MILLPOND_INCLUDE_VALUES_AUTH_HEADER_NAME", "X-A"}},
       "include_values.auth_header_name: only valid with include_values.url set"},
      {{{"MILLPOND_INCLUDE_VALUES_AUTH_TOKEN", "x"}},
       "include_values.auth_token: only valid with include_values.url set"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1"},
        {"MILLPOND_INCLUDE_VALUES_URL", "http://cp/teams"},
        {"MILLPOND_INCLUDE_VALUES_AUTH_HEADER_NAME", "X-A"}},
       "include_values.auth_header_name: include_values.auth_header_name and "
       "include_values.auth_token are set together"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1"},
        {"MILLPOND_INCLUDE_VALUES_URL", "http://cp/teams"},
        {"MILLPOND_INCLUDE_VALUES_AUTH_HEADER_NAME", "X A:"},
        {"MILLPOND_INCLUDE_VALUES_AUTH_TOKEN", "x"}},
       "include_values.auth_header_name: value \"X A:\" is not an HTTP header name"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1"},
        {"MILLPOND_INCLUDE_VALUES_URL", "ftp://cp/teams"}},
       "include_values.url: value \"ftp://cp/teams\" is not an http:// or https:// URL"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1"},
        {"MILLPOND_INCLUDE_VALUES_URL", "http://cp/teams"},
        {"MILLPOND_INCLUDE_VALUES_MODE", "live"}},
       "include_values.mode: value \"live\" is not one of shadow, authoritative"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1"},
        {"MILLPOND_INCLUDE_VALUES_URL", "http://cp/teams"},
        {"MILLPOND_INCLUDE_VALUES_REMOVAL_POLLS", "0"}},
       "include_values.removal_polls"},
      {{{"MILLPOND_FILTER_KEEP_FIELD_NAME", "t"},
        {"MILLPOND_FILTER_VALUES", "1"},
        {"MILLPOND_INCLUDE_VALUES_URL", "http://cp/teams"},
        {"MILLPOND_INCLUDE_VALUES_POLL_INTERVAL_S", "soon"}},
       "include_values.poll_interval"},
      // A uuid-pinned field: every static value must be a UUID, and not all digits.
      {{{"MILLPOND_TYPED_COLUMNS", "id:uuid"},
        {"MILLPOND_FILTER_KEEP_FIELD_NAME", "id"},
        {"MILLPOND_FILTER_VALUES", "0190a6f4-1d2b-7c3e-8f40-123456789abc,nope"}},
       "filter.keep_values: value \"nope\" is not a UUID, and \"id\" is a uuid column"},
      {{{"MILLPOND_TYPED_COLUMNS", "id:uuid"},
        {"MILLPOND_FILTER_DROP_FIELD_NAME", "ID"},
        {"MILLPOND_FILTER_DROP_VALUES", "01234567890123456789012345678901"}},
       "filter.drop_values: \"ID\" is a uuid column (typed_columns) and these values are all "
       "integers"},
  };
  for (const auto& [more, message] : cases) {
    const std::string error = ErrorOf(Millpond(more));
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_NE(error.find("(millpond)"), std::string::npos) << error;
  }
}

TEST(FilterSettings, AMappedDatasetFiltersOnAMappedColumn) {
  LoadInput in;
  in.yaml_text = R"yaml(
kafka: {bootstrap_servers: k}
datasets:
  - name: events
    topic: a
    table: a
    mapping: {team: properties.team_id}
    filter: {keep_field: team_id, keep_values: [1]}
)yaml";
  auto bad = LoadIngestSettings(in);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "filter.keep_field: value \"team_id\" is not a column of the mapping"),
            std::string::npos)
      << bad.status().message();
  in.yaml_text = R"yaml(
kafka: {bootstrap_servers: k}
datasets:
  - name: events
    topic: a
    table: a
    mapping: {Team: properties.team_id}
    filter: {keep_field: team, keep_values: [1]}
)yaml";
  auto ok = LoadIngestSettings(in);
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

}  // namespace
}  // namespace weir::config
