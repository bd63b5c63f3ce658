#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "config/describe.h"
#include "config/load.h"
#include "config/setting_table.h"
#include "config/setting_value.h"
#include "config/validate.h"

namespace weir::config {
namespace {

using std::chrono::milliseconds;
using Env = std::map<std::string, std::string>;

Result<LoadedSettings> Load(std::string yaml, Env env = {}, Env overrides = {}) {
  LoadInput in;
  if (!yaml.empty()) in.yaml_text = std::move(yaml);
  in.environment = std::move(env);
  in.overrides = std::move(overrides);
  return LoadIngestSettings(in);
}

// The smallest valid environment: brokers, one dataset.
Env Minimal() {
  return {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
          {"WEIR_TOPIC", "events"},
          {"WEIR_TABLE", "events"}};
}

IngestSettings LoadOk(std::string yaml, Env env = {}, Env overrides = {}) {
  auto loaded = Load(std::move(yaml), std::move(env), std::move(overrides));
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? loaded->settings : IngestSettings{};
}

std::string ErrorOf(std::string yaml, Env env = {}, Env overrides = {}) {
  auto loaded = Load(std::move(yaml), std::move(env), std::move(overrides));
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

TEST(LoadTest, Defaults) {
  const IngestSettings s = LoadOk("", Minimal());
  EXPECT_EQ(s.kafka.bootstrap_servers, "k:9092");
  EXPECT_EQ(s.kafka.group_id, "weir-events-events");
  EXPECT_EQ(s.kafka.assignment, Assignment::kGroup);
  EXPECT_EQ(s.kafka.auto_offset_reset, "earliest");
  EXPECT_EQ(s.kafka.isolation_level, "read_committed");
  EXPECT_EQ(s.kafka.consume_batch_size, 1000);
  EXPECT_TRUE(s.kafka.properties.empty());
  EXPECT_EQ(s.catalog.kind, CatalogKind::kSqlite);
  EXPECT_EQ(s.catalog.sqlite_path, "weir-lake/catalog.sqlite");
  EXPECT_EQ(s.storage.data_path, "weir-lake/data/");
  EXPECT_EQ(s.memory_budget_bytes, 256LL << 20);
  EXPECT_EQ(s.encode_threads, 0);
  EXPECT_EQ(s.http_port, 8000);
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.drain_timeout, milliseconds(96000));
  EXPECT_EQ(s.commit_max_attempts, 10);
  ASSERT_EQ(s.datasets.size(), 1u);
  const DatasetSettings& d = s.datasets[0];
  EXPECT_EQ(d.name, "events");
  EXPECT_EQ(d.schema, "main");
  EXPECT_EQ(d.flush.max_bytes, 100 * 1024 * 1024);
  EXPECT_EQ(d.flush.interval, milliseconds(60000));
  EXPECT_TRUE(d.rejects_enabled);
  EXPECT_EQ(d.compression, "zstd");
  EXPECT_EQ(d.row_group_rows, 122880);
}

TEST(LoadTest, EveryDefaultParsesBackWithinBounds) {
  for (const Setting& setting : SettingTable()) {
    const Value value = DefaultValue(setting);
    if (setting.type == SettingType::kStringList || setting.type == SettingType::kStringMap) {
      continue;
    }
    if (setting.type == SettingType::kEnum) {
      ASSERT_FALSE(setting.allowed.empty()) << setting.name;
    }
    auto parsed = ParseValue(setting, FormatValue(setting, value));
    ASSERT_TRUE(std::holds_alternative<Value>(parsed))
        << setting.name << ": " << std::get<std::string>(parsed);
    EXPECT_EQ(std::get<Value>(parsed), value) << setting.name;
  }
}

TEST(LoadTest, YamlWithTwoDatasets) {
  const IngestSettings s = LoadOk(R"(
kafka:
  bootstrap_servers: a:9092,b:9092
  assignment: group
  properties:
    security.protocol: SASL_SSL
    sasl.mechanisms: PLAIN
catalog:
  kind: postgres
  postgres_dsn: host=pg dbname=lake
storage:
  data_path: s3://bucket/lake/
  s3_region: eu-west-1
memory_budget: 2GiB
log: {level: debug, format: json}
shutdown: {drain_timeout: 2m}
datasets:
  - topic: events
    table: events
    partition_by: [year(_inserted_at), month(_inserted_at)]
    flush: {max_bytes: 64MiB, interval: 30s}
  - name: views
    topic: pageviews
    schema: web
    table: pageviews
    partition_by: team_id
    rejects: {enabled: false, payload_limit: 1KiB}
    parquet: {compression: snappy, row_group_rows: 4096}
)");
  EXPECT_EQ(s.kafka.bootstrap_servers, "a:9092,b:9092");
  EXPECT_EQ(s.kafka.properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(s.kafka.properties.at("sasl.mechanisms"), "PLAIN");
  EXPECT_EQ(s.catalog.kind, CatalogKind::kPostgres);
  EXPECT_EQ(s.catalog.postgres_dsn, "host=pg dbname=lake");
  EXPECT_EQ(s.storage.data_path, "s3://bucket/lake/");
  EXPECT_EQ(s.memory_budget_bytes, 2LL << 30);
  EXPECT_EQ(s.log_level, "debug");
  EXPECT_EQ(s.log_format, "json");
  EXPECT_EQ(s.drain_timeout, milliseconds(120000));
  EXPECT_EQ(s.kafka.group_id, "weir-events-events");
  ASSERT_EQ(s.datasets.size(), 2u);
  EXPECT_EQ(s.datasets[0].name, "events");
  EXPECT_EQ(s.datasets[0].partition_by,
            (std::vector<std::string>{"year(_inserted_at)", "month(_inserted_at)"}));
  EXPECT_EQ(s.datasets[0].flush.max_bytes, 64 << 20);
  EXPECT_EQ(s.datasets[0].flush.interval, milliseconds(30000));
  EXPECT_EQ(s.datasets[1].name, "views");
  EXPECT_EQ(s.datasets[1].schema, "web");
  EXPECT_EQ(s.datasets[1].partition_by, std::vector<std::string>{"team_id"});
  EXPECT_FALSE(s.datasets[1].rejects_enabled);
  EXPECT_EQ(s.datasets[1].rejects_payload_limit, 1024);
  EXPECT_EQ(s.datasets[1].compression, "snappy");
  EXPECT_EQ(s.datasets[1].row_group_rows, 4096);
  EXPECT_EQ(s.datasets[1].flush.max_bytes, 100 << 20);
}

Env MillpondEnv() {
  return {
      {"KAFKA_BOOTSTRAP_SERVERS", "b1:9092"},
      {"KAFKA_TOPIC", "events_json"},
      {"REPLICA_COUNT", "4"},
      {"POD_NAME", "millpond-events-2"},
      {"KAFKA_AUTO_OFFSET_RESET", "latest"},
      {"KAFKA_CONSUMER_SECURITY_PROTOCOL", "SASL_SSL"},
      {"KAFKA_CONSUMER_QUEUED_MAX_MESSAGES_KBYTES", "32768"},
      {"FLUSH_SIZE", "52428800"},
      {"FLUSH_INTERVAL_MS", "30000"},
      {"CONSUME_BATCH_SIZE", "500"},
      {"FETCH_MIN_BYTES", "2097152"},
      {"FETCH_MAX_WAIT_MS", "250"},
      {"DUCKLAKE_TABLE", "events"},
      {"DUCKLAKE_SCHEMA", "posthog"},
      {"DUCKLAKE_DATA_PATH", "s3://lake-bucket/data/"},
      {"DUCKLAKE_RDS_HOST", "rds.internal"},
      {"DUCKLAKE_RDS_PORT", "5433"},
      {"DUCKLAKE_RDS_DATABASE", "lake"},
      {"DUCKLAKE_RDS_USERNAME", "writer"},
      {"DUCKLAKE_RDS_PASSWORD", "hunter 2"},
      {"DUCKDB_S3_ACCESS_KEY_ID", "AKIA1"},
      {"DUCKDB_S3_SECRET_ACCESS_KEY", "s3cr3t"},
      {"DUCKDB_S3_REGION", "us-east-1"},
      {"DUCKDB_S3_ENDPOINT", "minio:9000"},
      {"DUCKDB_S3_USE_SSL", "false"},
      {"DUCKDB_S3_URL_STYLE", "path"},
      {"DUCKLAKE_PARTITION_BY", "year(_inserted_at),month(_inserted_at)"},
      {"MILLPOND_HTTP_PORT", "9100"},
      {"LOG_LEVEL", "WARNING"},
      {"MILLPOND_DESTINATION", "DuckLake"},
  };
}

TEST(MillpondTest, EveryVariableMapped) {
  auto loaded = Load("", MillpondEnv());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->warnings.empty());
  const IngestSettings& s = loaded->settings;
  EXPECT_EQ(s.kafka.bootstrap_servers, "b1:9092");
  EXPECT_EQ(s.kafka.group_id, "millpond-events_json-events");
  EXPECT_EQ(s.kafka.assignment, Assignment::kStatic);
  EXPECT_EQ(s.kafka.replica_count, 4);
  EXPECT_EQ(s.kafka.ordinal, 2);
  EXPECT_EQ(s.kafka.auto_offset_reset, "latest");
  EXPECT_EQ(s.kafka.properties,
            (std::map<std::string, std::string>{{"security.protocol", "SASL_SSL"},
                                                {"queued.max.messages.kbytes", "32768"}}));
  EXPECT_EQ(s.kafka.consume_batch_size, 500);
  EXPECT_EQ(s.kafka.fetch_min_bytes, 2097152);
  EXPECT_EQ(s.kafka.fetch_max_wait_ms, 250);
  EXPECT_EQ(s.catalog.kind, CatalogKind::kPostgres);
  EXPECT_EQ(s.catalog.postgres_host, "rds.internal");
  EXPECT_EQ(s.catalog.postgres_port, 5433);
  EXPECT_EQ(s.catalog.postgres_database, "lake");
  EXPECT_EQ(s.catalog.postgres_user, "writer");
  EXPECT_EQ(s.catalog.postgres_password, "hunter 2");
  EXPECT_EQ(s.catalog.postgres_dsn,
            "host=rds.internal port=5433 dbname=lake user=writer password='hunter 2'");
  EXPECT_EQ(s.storage.data_path, "s3://lake-bucket/data/");
  EXPECT_EQ(s.storage.s3_access_key_id, "AKIA1");
  EXPECT_EQ(s.storage.s3_secret_access_key, "s3cr3t");
  EXPECT_EQ(s.storage.s3_region, "us-east-1");
  EXPECT_EQ(s.storage.s3_endpoint, "minio:9000");
  EXPECT_FALSE(s.storage.s3_use_ssl);
  EXPECT_EQ(s.storage.s3_url_style, "path");
  EXPECT_EQ(s.http_port, 9100);
  EXPECT_EQ(s.log_level, "warn");
  ASSERT_EQ(s.datasets.size(), 1u);
  const DatasetSettings& d = s.datasets[0];
  EXPECT_EQ(d.name, "events");
  EXPECT_EQ(d.topic, "events_json");
  EXPECT_EQ(d.schema, "posthog");
  EXPECT_EQ(d.table, "events");
  EXPECT_EQ(d.partition_by,
            (std::vector<std::string>{"year(_inserted_at)", "month(_inserted_at)"}));
  EXPECT_EQ(d.flush.max_bytes, 52428800);
  EXPECT_EQ(d.flush.interval, milliseconds(30000));
}

TEST(MillpondTest, GroupIdAndDefaultsOfTheContract) {
  Env env = MillpondEnv();
  env["GROUP_ID"] = "custom-group";
  env.erase("DUCKLAKE_RDS_PORT");
  env.erase("DUCKLAKE_RDS_DATABASE");
  env.erase("DUCKLAKE_RDS_USERNAME");
  const IngestSettings s = LoadOk("", env);
  EXPECT_EQ(s.kafka.group_id, "custom-group");
  EXPECT_EQ(s.catalog.postgres_dsn,
            "host=rds.internal port=5432 dbname=ducklake user=ducklake password='hunter 2'");
}

TEST(MillpondTest, ConsumerAutoOffsetResetRefused) {
  Env env = Minimal();
  env["KAFKA_CONSUMER_AUTO_OFFSET_RESET"] = "latest";
  const std::string error = ErrorOf("", env);
  EXPECT_NE(error.find("KAFKA_CONSUMER_AUTO_OFFSET_RESET: value \"latest\" is refused; set "
                       "KAFKA_AUTO_OFFSET_RESET"),
            std::string::npos)
      << error;
}

TEST(MillpondTest, UnknownAndUnusedVariablesWarn) {
  Env env = Minimal();
  env["MILLPOND_FLUSH_SIZE"] = "1";
  env["DUCKLAKE_CONNECTION"] = "ducklake:postgres:...";
  env["WEIR_KAFKA_BOOTSTRAP_SERVER"] = "typo";
  env["WEIR_TEST_KAFKA"] = "harness";
  auto loaded = Load("", env);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->warnings,
            (std::vector<std::string>{
                "DUCKLAKE_CONNECTION is a millpond variable weir does not use (weir writes the "
                "catalog itself from DUCKLAKE_RDS_* (or catalog.*))",
                "MILLPOND_FLUSH_SIZE is a millpond variable weir does not use (unknown millpond "
                "variable)",
                "WEIR_KAFKA_BOOTSTRAP_SERVER is not a weir setting (ignored)"}));
}

TEST(MillpondTest, RefusedFeaturesAndDestination) {
  Env env = Minimal();
  // Every record stage of millpond is accepted now; what stays refused is refused as millpond
  // refuses it.
  env["KAFKA_CONSUMER_AUTO_OFFSET_RESET"] = "earliest";
  env["MILLPOND_DESTINATION"] = "hoglake";
  const std::string error = ErrorOf("", env);
  EXPECT_NE(error.find("KAFKA_CONSUMER_AUTO_OFFSET_RESET: value \"earliest\" is refused"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("MILLPOND_DESTINATION: value \"hoglake\" is not supported"),
            std::string::npos);
}

TEST(MillpondTest, SortByIsAcceptedWithMillpondsGrammar) {
  Env env = Minimal();
  env["MILLPOND_SORT_BY"] = "team_id,timestamp";
  EXPECT_EQ(LoadOk("", env).datasets[0].sort_by,
            (std::vector<std::string>{"team_id", "timestamp"}));
  env = Minimal();
  env["WEIR_SORT_BY"] = "ts";
  EXPECT_EQ(LoadOk("", env).datasets[0].sort_by, std::vector<std::string>{"ts"});
  env["WEIR_SORT_BY"] = "ts,team-id";
  EXPECT_NE(ErrorOf("", env).find("sort_by: value \"team-id\" is not a column name"),
            std::string::npos);
  env["WEIR_SORT_BY"] = "ts,ts";
  EXPECT_NE(ErrorOf("", env).find("sort_by: column \"ts\" is listed twice"), std::string::npos);
}

TEST(LoadTest, PrecedenceDefaultsYamlMillpondWeirCli) {
  const std::string yaml = R"(
kafka: {bootstrap_servers: "k:9092"}
datasets:
  - {topic: events, table: events, flush: {max_bytes: 1MiB}}
)";
  EXPECT_EQ(LoadOk(yaml).datasets[0].flush.max_bytes, 1 << 20);
  Env env = {{"FLUSH_SIZE", "2097152"}};
  EXPECT_EQ(LoadOk(yaml, env).datasets[0].flush.max_bytes, 2 << 20);
  env["WEIR_FLUSH_MAX_BYTES"] = "3MiB";
  EXPECT_EQ(LoadOk(yaml, env).datasets[0].flush.max_bytes, 3 << 20);
  env["WEIR_DATASET_EVENTS_FLUSH_MAX_BYTES"] = "4MiB";
  EXPECT_EQ(LoadOk(yaml, env).datasets[0].flush.max_bytes, 4 << 20);
  EXPECT_EQ(LoadOk(yaml, env, {{"flush.max_bytes", "5MiB"}}).datasets[0].flush.max_bytes, 5 << 20);
  EXPECT_EQ(
      LoadOk(yaml, env, {{"flush.max_bytes", "5MiB"}, {"datasets.events.flush.max_bytes", "6MiB"}})
          .datasets[0]
          .flush.max_bytes,
      6 << 20);
  // Process settings, and map settings merging key by key.
  const std::string yaml_kafka = R"(
kafka: {bootstrap_servers: "yaml:1", properties: {a.b: yaml, c.d: yaml}}
datasets: [{topic: t, table: t}]
)";
  Env kafka_env = {{"KAFKA_BOOTSTRAP_SERVERS", "millpond:1"},
                   {"KAFKA_CONSUMER_A_B", "millpond"},
                   {"WEIR_KAFKA_PROPERTIES_C_D", "weir"}};
  IngestSettings s = LoadOk(yaml_kafka, kafka_env);
  EXPECT_EQ(s.kafka.bootstrap_servers, "millpond:1");
  EXPECT_EQ(s.kafka.properties,
            (std::map<std::string, std::string>{{"a.b", "millpond"}, {"c.d", "weir"}}));
  kafka_env["WEIR_KAFKA_BOOTSTRAP_SERVERS"] = "weir:1";
  EXPECT_EQ(LoadOk(yaml_kafka, kafka_env).kafka.bootstrap_servers, "weir:1");
  s = LoadOk(yaml_kafka, kafka_env,
             {{"kafka.bootstrap_servers", "cli:1"}, {"kafka.properties.a.b", "cli"}});
  EXPECT_EQ(s.kafka.bootstrap_servers, "cli:1");
  EXPECT_EQ(s.kafka.properties.at("a.b"), "cli");
}

TEST(LoadTest, UnknownYamlKeyNamesThePath) {
  const std::string error = ErrorOf(R"(
kafka: {bootstrap_server: "k:9092"}
datasets:
  - {topic: t, table: t, flush: {max_byte: 1}}
)");
  EXPECT_NE(error.find("kafka.bootstrap_server: unknown key (config line 2)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("datasets[0].flush.max_byte: unknown key (config line 4)"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf("bogus: 1\n", Minimal()).find("bogus: unknown key"), std::string::npos);
  EXPECT_NE(ErrorOf("kafka: [1]\n", Minimal()).find("kafka: must be a mapping"), std::string::npos);
  EXPECT_NE(ErrorOf("kafka: {bootstrap_servers: [a]}\n", Minimal())
                .find("kafka.bootstrap_servers: must be a single value"),
            std::string::npos);
  EXPECT_NE(ErrorOf("kafka: {\n", Minimal()).find("config: not valid YAML"), std::string::npos);
  // A syntax error is the only error: nothing else was read, so nothing else is reported.
  const std::string syntax = ErrorOf("kafka: {\n", {});
  EXPECT_EQ(syntax.find("required"), std::string::npos) << syntax;
  EXPECT_EQ(std::count(syntax.begin(), syntax.end(), '\n'), 0) << syntax;
}

TEST(ValidateTest, ErrorsNameSettingValueAndOrigin) {
  Env env = Minimal();
  env["WEIR_FLUSH_MAX_BYTES"] = "12x";
  env["WEIR_KAFKA_CONSUME_BATCH_SIZE"] = "0";
  env["WEIR_KAFKA_AUTO_OFFSET_RESET"] = "newest";
  env["WEIR_FLUSH_INTERVAL"] = "60";
  env["WEIR_REJECTS_ENABLED"] = "maybe";
  env["WEIR_SCHEMA"] = "my-schema";
  env["WEIR_PARTITION_BY"] = "week(_inserted_at),bucket(id, 4)";
  env["WEIR_HTTP_PORT"] = "x";
  const std::string error = ErrorOf("", env);
  for (const char* expected : {
           "flush.max_bytes: value \"12x\" is not a byte size (e.g. 1048576, 64KiB, 100MiB, "
           "1GB) (dataset \"events\", from WEIR_FLUSH_MAX_BYTES)",
           "kafka.consume_batch_size: value \"0\" is out of range [1, 100000] (from "
           "WEIR_KAFKA_CONSUME_BATCH_SIZE)",
           "kafka.auto_offset_reset: value \"newest\" is not one of earliest, latest (from "
           "WEIR_KAFKA_AUTO_OFFSET_RESET)",
           "flush.interval: value \"60\" is not a duration (e.g. 500ms, 60s, 2m, 1h) (dataset "
           "\"events\", from WEIR_FLUSH_INTERVAL)",
           "rejects.enabled: value \"maybe\" is not a boolean",
           "schema: value \"my-schema\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*) (dataset "
           "\"events\", from WEIR_SCHEMA)",
           "partition_by: value \"week(_inserted_at)\" is not a partition key",
           "partition_by: value \"bucket(id, 4)\" is not a partition key",
           "http.port: value \"x\" is not an integer (from WEIR_HTTP_PORT)",
       }) {
    EXPECT_NE(error.find(expected), std::string::npos) << expected << "\nin:\n" << error;
  }
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 8) << error;  // one line each
}

TEST(ValidateTest, RequiredAndCrossFieldRules) {
  std::string error = ErrorOf("");
  EXPECT_NE(error.find("kafka.bootstrap_servers: required, not set (YAML kafka.bootstrap_servers, "
                       "WEIR_KAFKA_BOOTSTRAP_SERVERS, KAFKA_BOOTSTRAP_SERVERS)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("datasets: at least one dataset is required"), std::string::npos);

  error = ErrorOf("datasets: [{topic: t}, {table: u}]", {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k"}});
  EXPECT_NE(error.find("table: required, not set (YAML datasets[].table, WEIR_TABLE, "
                       "DUCKLAKE_TABLE) (dataset \"#1\")"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("topic: required, not set"), std::string::npos);

  error = ErrorOf("datasets: [{topic: t, table: a}, {topic: t, table: a, name: b}]",
                  {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k"}});
  EXPECT_NE(error.find("topic: value \"t\" is read by two datasets (dataset \"b\", from config "
                       "line 1)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("table: value \"main.a\" is written by two datasets"), std::string::npos);

  Env env = Minimal();
  env["WEIR_KAFKA_ASSIGNMENT"] = "static";
  env["WEIR_KAFKA_REPLICA_COUNT"] = "2";
  env["WEIR_KAFKA_ORDINAL"] = "2";
  env["WEIR_CATALOG_KIND"] = "postgres";
  env["WEIR_STORAGE_DATA_PATH"] = "s3://bucket/x/";
  env["WEIR_STORAGE_S3_ACCESS_KEY_ID"] = "AKIA";
  error = ErrorOf("", env);
  for (const char* expected : {
           "kafka.ordinal: value \"2\" is not below kafka.replica_count 2 (static assignment) "
           "(from WEIR_KAFKA_ORDINAL)",
           "catalog.postgres_dsn: required when catalog.kind is postgres",
           "storage.s3_region: required (or storage.s3_endpoint) for data_path "
           "\"s3://bucket/x/\"",
           "storage.s3_secret_access_key: must be set together",
       }) {
    EXPECT_NE(error.find(expected), std::string::npos) << expected << "\nin:\n" << error;
  }
  env = Minimal();
  env["WEIR_KAFKA_ASSIGNMENT"] = "static";
  env["WEIR_KAFKA_REPLICA_COUNT"] = "2";
  env["WEIR_KAFKA_ORDINAL"] = "1";
  env["WEIR_KAFKA_GROUP_PROTOCOL"] = "consumer";
  env["WEIR_KAFKA_PROPERTIES_GROUP_PROTOCOL"] = "classic";
  error = ErrorOf("", env);
  for (const char* expected : {
           "kafka.group_protocol: value \"consumer\" needs kafka.assignment group (static "
           "assignment joins no group)",
           "kafka.properties: group.protocol is set by kafka.group_protocol",
       }) {
    EXPECT_NE(error.find(expected), std::string::npos) << expected << "\nin:\n" << error;
  }
  env = Minimal();
  env["WEIR_KAFKA_GROUP_PROTOCOL"] = "consumer";
  EXPECT_EQ(LoadOk("", env).kafka.group_protocol, "consumer");
  EXPECT_EQ(LoadOk("", Minimal()).kafka.group_protocol, "classic");
  env["WEIR_KAFKA_GROUP_PROTOCOL"] = "eager";
  EXPECT_NE(ErrorOf("", env).find("kafka.group_protocol"), std::string::npos);
  env = Minimal();
  env["WEIR_CATALOG_KIND"] = "postgres";
  env["WEIR_CATALOG_POSTGRES_DSN"] = "host=a";
  env["WEIR_CATALOG_POSTGRES_HOST"] = "b";
  EXPECT_NE(ErrorOf("", env).find("catalog.postgres_dsn: set either it or catalog.postgres_host, "
                                  "not both (from WEIR_CATALOG_POSTGRES_DSN)"),
            std::string::npos);
  env = Minimal();
  env["WEIR_STORAGE_DATA_PATH"] = "gs://bucket/";
  EXPECT_NE(ErrorOf("", env).find("storage.data_path: value \"gs://bucket/\" is neither"),
            std::string::npos);
}

TEST(LoadTest, OrdinalFromPodNameOrHostname) {
  Env env = Minimal();
  env["WEIR_KAFKA_ASSIGNMENT"] = "static";
  env["WEIR_KAFKA_REPLICA_COUNT"] = "8";
  env["POD_NAME"] = "weir-3";
  env["HOSTNAME"] = "weir-5";
  EXPECT_EQ(LoadOk("", env).kafka.ordinal, 3);
  env.erase("POD_NAME");
  EXPECT_EQ(LoadOk("", env).kafka.ordinal, 5);
  env["WEIR_KAFKA_ORDINAL"] = "7";
  EXPECT_EQ(LoadOk("", env).kafka.ordinal, 7);
  env.erase("WEIR_KAFKA_ORDINAL");
  env["HOSTNAME"] = "laptop";
  EXPECT_NE(ErrorOf("", env).find("kafka.ordinal: not set, and HOSTNAME \"laptop\" has no "
                                  "trailing -<n>"),
            std::string::npos);
  env.erase("HOSTNAME");
  EXPECT_NE(ErrorOf("", env).find("neither POD_NAME nor HOSTNAME is set"), std::string::npos);
  env["POD_NAME"] = "weir-9";
  EXPECT_NE(ErrorOf("", env).find("kafka.ordinal: value \"9\" is not below kafka.replica_count 8"),
            std::string::npos);
  // Group assignment ignores the pod name.
  env["WEIR_KAFKA_ASSIGNMENT"] = "group";
  EXPECT_EQ(LoadOk("", env).kafka.ordinal, 0);
}

TEST(LoadTest, DatasetVariablesAndOverridesByName) {
  const std::string yaml = R"(
kafka: {bootstrap_servers: k}
datasets:
  - {name: events, topic: a, table: a}
  - {name: events_v2, topic: b, table: b}
)";
  const IngestSettings s = LoadOk(
      yaml, {{"WEIR_DATASET_EVENTS_V2_FLUSH_INTERVAL", "5s"}, {"WEIR_DATASET_EVENTS_TOPIC", "a2"}});
  EXPECT_EQ(s.datasets[0].topic, "a2");
  EXPECT_EQ(s.datasets[0].flush.interval, milliseconds(60000));
  EXPECT_EQ(s.datasets[1].flush.interval, milliseconds(5000));
  EXPECT_NE(ErrorOf(yaml, {{"WEIR_DATASET_OTHER_TOPIC", "x"}})
                .find("WEIR_DATASET_OTHER_TOPIC: no dataset named like this (datasets: events, "
                      "events_v2)"),
            std::string::npos);
  EXPECT_NE(ErrorOf(yaml, {{"WEIR_DATASET_EVENTS_COLOR", "x"}})
                .find("WEIR_DATASET_EVENTS_COLOR: \"COLOR\" is not a dataset setting"),
            std::string::npos);
  EXPECT_NE(ErrorOf(yaml, {}, {{"kafka.color", "x"}}).find("--set kafka.color: unknown setting"),
            std::string::npos);
  std::map<std::string, std::string> overrides;
  EXPECT_TRUE(AddOverride("kafka.group_id=g=1", &overrides).ok());
  EXPECT_EQ(overrides.at("kafka.group_id"), "g=1");
  EXPECT_FALSE(AddOverride("kafka.group_id", &overrides).ok());
}

TEST(DescribeTest, SecretsAreMasked) {
  Env env = MillpondEnv();
  env["KAFKA_CONSUMER_SASL_PASSWORD"] = "kafkapass";
  const IngestSettings s = LoadOk("", env);
  const std::string text = Describe(s);
  EXPECT_EQ(text.find("hunter"), std::string::npos) << text;
  EXPECT_EQ(text.find("s3cr3t"), std::string::npos) << text;
  EXPECT_EQ(text.find("kafkapass"), std::string::npos) << text;
  EXPECT_NE(text.find("catalog.postgres_password = ****\n"), std::string::npos) << text;
  EXPECT_NE(text.find("storage.s3_secret_access_key = ****\n"), std::string::npos);
  EXPECT_NE(text.find("catalog.postgres_dsn = host=rds.internal port=5433 dbname=lake "
                      "user=writer password=****\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sasl.password=****"), std::string::npos);
  EXPECT_NE(text.find("datasets[0].flush.max_bytes = 50MiB\n"), std::string::npos);
  EXPECT_NE(text.find("kafka.bootstrap_servers = b1:9092\n"), std::string::npos);
  EXPECT_EQ(MaskConninfo("postgresql://u:pw@h/db?password=x&a=b"),
            "postgresql://u:****@h/db?password=****&a=b");
  EXPECT_EQ(MaskConninfo("host=h password = 'a b\\' c' user=u"), "host=h password = **** user=u");
}

TEST(DescribeTest, TheStartLogsOnlyWhatWasGivenOrDerivedWithWhereItCameFrom) {
  const IngestSettings s = LoadOk("", {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
                                       {"WEIR_TOPIC", "events"},
                                       {"WEIR_TABLE", "events"},
                                       {"WEIR_CATALOG_POSTGRES_PASSWORD", "hunter2"},
                                       {"WEIR_CATALOG_KIND", "postgres"},
                                       {"WEIR_CATALOG_POSTGRES_HOST", "pg"}});
  const std::string text = DescribeChanged(s);
  EXPECT_NE(text.find("kafka.bootstrap_servers = k:9092  (from WEIR_KAFKA_BOOTSTRAP_SERVERS)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("datasets[0].topic = events  (from WEIR_TOPIC)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kafka.group_id = weir-events-events  (derived)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("catalog.postgres_password = ****  (from WEIR_CATALOG_POSTGRES_PASSWORD)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("hunter2"), std::string::npos) << text;
  // Settings at their defaults are left to the debug level's whole table.
  EXPECT_EQ(text.find("flush.max_bytes"), std::string::npos) << text;
  EXPECT_EQ(text.find("memory_budget"), std::string::npos) << text;
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 15) << text;
  EXPECT_NE(Describe(s).find("datasets[0].flush.max_bytes = "), std::string::npos);
}

TEST(LoadTest, YamlFile) {
  const std::string path = testing::TempDir() + "/weir_config_test.yaml";
  std::ofstream(path) << "kafka: {bootstrap_servers: k}\ndatasets: [{topic: t, table: t}]\n"
                         "bogus: 1\n";
  LoadInput in;
  in.yaml_path = path;
  auto loaded = LoadIngestSettings(in);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), "bogus: unknown key (" + path + " line 3)");
  in.yaml_path = "/nonexistent/weir.yaml";
  EXPECT_EQ(LoadIngestSettings(in).status().message(),
            "config file \"/nonexistent/weir.yaml\": cannot be read");
}

TEST(ValidateTest, PartitionKeys) {
  EXPECT_EQ(ParsePartitionKey("team_id")->transform, "identity");
  EXPECT_EQ(ParsePartitionKey("hour(_inserted_at)")->transform, "hour");
  EXPECT_EQ(ParsePartitionKey("day(ts)")->column, "ts");
  EXPECT_FALSE(ParsePartitionKey("day(ts"));
  EXPECT_FALSE(ParsePartitionKey("day(1ts)"));
  EXPECT_FALSE(ParsePartitionKey("bucket(ts)"));
  EXPECT_FALSE(ParsePartitionKey(""));
  EXPECT_EQ(ParsePartitionKey("bucket[16](user_id)")->transform, "bucket[16]");
  EXPECT_EQ(ParsePartitionKey("truncate[4](name)")->column, "name");
  EXPECT_FALSE(ParsePartitionKey("bucket[0](id)"));
  EXPECT_FALSE(ParsePartitionKey("truncate[](id)"));
  EXPECT_FALSE(ParsePartitionKey("bucket[-2](id)"));
  EXPECT_TRUE(ValidateIngestSettings(LoadOk("", Minimal())).ok());
}

TEST(ValidateTest, IcebergSettings) {
  Env env = Minimal();
  env["WEIR_LAKE_FORMAT"] = "iceberg";
  const IngestSettings defaults = LoadOk("", env);
  EXPECT_EQ(defaults.lake_format, "iceberg");
  EXPECT_EQ(defaults.iceberg.catalog, "sql");
  EXPECT_EQ(defaults.iceberg.sqlite_path, "weir-lake/catalog.db");
  env["WEIR_ICEBERG_CATALOG"] = "rest";
  EXPECT_NE(ErrorOf("", env).find("iceberg.uri: required when iceberg.catalog is rest"),
            std::string::npos);
  env["WEIR_ICEBERG_URI"] = "http://localhost:8181";
  env["WEIR_ICEBERG_TOKEN"] = "t";
  env["WEIR_ICEBERG_CREDENTIAL"] = "a:b";
  EXPECT_NE(ErrorOf("", env).find("iceberg.credential: set either"), std::string::npos);
  env.erase("WEIR_ICEBERG_CREDENTIAL");
  EXPECT_TRUE(ValidateIngestSettings(LoadOk("", env)).ok());
  env["WEIR_ICEBERG_CATALOG"] = "glue";
  EXPECT_NE(ErrorOf("", env).find("iceberg.catalog: value \"glue\" is not one of sql, rest"),
            std::string::npos);
  env = Minimal();
  env["WEIR_PARTITION_BY"] = "bucket[0](id)";
  EXPECT_NE(ErrorOf("", env).find("partition_by: value \"bucket[0](id)\" is not a partition key"),
            std::string::npos);
}

TEST(ValidateTest, ObjectStoreLocations) {
  // The SQL warehouse of Iceberg on S3 needs a region or an endpoint, on Azure an account.
  Env env = Minimal();
  env["WEIR_LAKE_FORMAT"] = "iceberg";
  env["WEIR_ICEBERG_WAREHOUSE"] = "s3://bucket/wh";
  EXPECT_NE(ErrorOf("", env).find("storage.s3_region: required (or storage.s3_endpoint) for "
                                  "warehouse \"s3://bucket/wh\""),
            std::string::npos);
  env["WEIR_STORAGE_S3_REGION"] = "us-east-1";
  EXPECT_TRUE(ValidateIngestSettings(LoadOk("", env)).ok());
  env["WEIR_ICEBERG_WAREHOUSE"] = "abfss://lake/wh";
  EXPECT_NE(ErrorOf("", env).find("storage.azure_account_name: required for iceberg.warehouse "
                                  "\"abfss://lake/wh\""),
            std::string::npos);
  env["WEIR_ICEBERG_WAREHOUSE"] = "abfss://lake@acct.dfs.core.windows.net/wh";
  EXPECT_TRUE(ValidateIngestSettings(LoadOk("", env)).ok());
  env["WEIR_ICEBERG_WAREHOUSE"] = "gs://bucket/wh";
  EXPECT_NE(ErrorOf("", env).find("iceberg.warehouse: value \"gs://bucket/wh\" is neither"),
            std::string::npos);
  // DuckLake's data path on Azure.
  env = Minimal();
  env["WEIR_STORAGE_DATA_PATH"] = "az://lake/data/";
  EXPECT_NE(ErrorOf("", env).find("storage.azure_account_name: required for storage.data_path"),
            std::string::npos);
  env["WEIR_STORAGE_AZURE_ACCOUNT_NAME"] = "acct";
  EXPECT_TRUE(ValidateIngestSettings(LoadOk("", env)).ok());
  env["WEIR_STORAGE_DATA_PATH"] = "abfss:///data/";
  EXPECT_NE(ErrorOf("", env).find("storage.data_path: value \"abfss:///data/\" has no container"),
            std::string::npos);
}

}  // namespace
}  // namespace weir::config
