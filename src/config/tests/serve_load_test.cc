// LoadServeSettings: weir serve's settings from the same table, sources and checks as ingest's.
#include <gtest/gtest.h>

#include "config/describe.h"
#include "config/load.h"
#include "config/setting_table.h"
#include "config/validate.h"

namespace weir::config {
namespace {

using std::chrono::milliseconds;
using Env = std::map<std::string, std::string>;

Result<LoadedServeSettings> Load(std::string yaml, Env env = {}, Env overrides = {}) {
  LoadInput in;
  if (!yaml.empty()) in.yaml_text = std::move(yaml);
  in.environment = std::move(env);
  in.overrides = std::move(overrides);
  return LoadServeSettings(in);
}

ServeSettings LoadOk(std::string yaml, Env env = {}, Env overrides = {}) {
  auto loaded = Load(std::move(yaml), std::move(env), std::move(overrides));
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? loaded->settings : ServeSettings{};
}

std::string ErrorOf(std::string yaml, Env env = {}, Env overrides = {}) {
  auto loaded = Load(std::move(yaml), std::move(env), std::move(overrides));
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

TEST(ServeLoadTest, Defaults) {
  auto loaded = Load("");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->warnings.empty());
  const ServeSettings& s = loaded->settings;
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.port, 5432);
  EXPECT_EQ(s.tls_dir, "weir-lake/serve-tls");
  EXPECT_EQ(s.max_connections, 100);
  EXPECT_EQ(s.max_connections_per_ip, 20);
  EXPECT_EQ(s.max_failed_logins, 5);
  EXPECT_EQ(s.ban_seconds, 300);
  EXPECT_EQ(s.statement_timeout, milliseconds(0));
  EXPECT_EQ(s.idle_session_timeout, milliseconds(3600000));
  EXPECT_EQ(s.shutdown_timeout, milliseconds(30000));
  EXPECT_EQ(s.authentication_timeout, milliseconds(60000));
  EXPECT_EQ(s.send_timeout, milliseconds(60000));
  EXPECT_EQ(s.session_memory_bytes, 256LL << 20);
  EXPECT_EQ(s.memory_limit, "");
  EXPECT_EQ(s.threads, 0);
  EXPECT_EQ(s.http_port, -1);
  EXPECT_TRUE(s.query_log);
  EXPECT_EQ(s.catalog.kind, CatalogKind::kSqlite);
  EXPECT_EQ(s.catalog.sqlite_path, "weir-lake/catalog.sqlite");
  EXPECT_EQ(s.log_level, "info");
}

TEST(ServeLoadTest, EveryServeSettingHasItsVariableAndSharedDefaultsAgree) {
  int serve_only = 0;
  for (const Setting& setting : SettingTable()) {
    if (!UsedBy(setting, Command::kServe)) continue;
    if (!UsedBy(setting, Command::kIngest)) {
      ++serve_only;
      EXPECT_EQ(setting.name.substr(0, 6), "serve.") << setting.name;
      EXPECT_EQ(EnvName(setting), "WEIR_" + EnvToken(setting.name));
      EXPECT_EQ(EnvName(setting).substr(0, 11), "WEIR_SERVE_") << setting.name;
      continue;
    }
    EXPECT_EQ(setting.get_process(IngestSettings{}), setting.get_serve(ServeSettings{}))
        << setting.name;
  }
  EXPECT_EQ(serve_only, 19);
}

TEST(ServeLoadTest, IcebergRestSettingsAreIngestsAndSqlCatalogsAreRefused) {
  // The same variables and --set names as weir ingest's.
  ServeSettings s = LoadOk("",
                           {{"WEIR_LAKE_FORMAT", "iceberg"},
                            {"WEIR_ICEBERG_CATALOG", "rest"},
                            {"WEIR_ICEBERG_URI", "http://catalog:8181"},
                            {"WEIR_ICEBERG_CREDENTIAL", "client:s3cret"}},
                           {{"iceberg.warehouse", "lakehouse"},
                            {"serve.iceberg_timeout", "5s"},
                            {"serve.iceberg_locations", "s3://bucket/wh/,/data/wh"}});
  EXPECT_EQ(s.lake_format, "iceberg");
  EXPECT_EQ(s.iceberg.catalog, "rest");
  EXPECT_EQ(s.iceberg.uri, "http://catalog:8181");
  EXPECT_EQ(s.iceberg.credential, "client:s3cret");
  EXPECT_EQ(s.iceberg.warehouse, "lakehouse");
  EXPECT_EQ(s.iceberg_timeout, milliseconds(5000));
  EXPECT_EQ(s.iceberg_locations, (std::vector<std::string>{"s3://bucket/wh/", "/data/wh"}));
  EXPECT_EQ(Describe(s).find("s3cret"), std::string::npos) << Describe(s);
  // DuckDB's iceberg extension has no SQL catalog: the embedded default is refused by name.
  const std::string sql = ErrorOf("", {{"WEIR_LAKE_FORMAT", "iceberg"}});
  EXPECT_NE(sql.find("iceberg.catalog: weir serve reads Iceberg through a REST catalog only"),
            std::string::npos)
      << sql;
  EXPECT_NE(ErrorOf("", {}, {{"lake.format", "iceberg"}, {"iceberg.catalog", "rest"}})
                .find("iceberg.uri: required when iceberg.catalog is rest"),
            std::string::npos);
  EXPECT_NE(ErrorOf("", {},
                    {{"lake.format", "iceberg"},
                     {"iceberg.catalog", "rest"},
                     {"iceberg.uri", "http://c"},
                     {"iceberg.credential", "no-colon"}})
                .find("iceberg.credential: is not client_id:client_secret"),
            std::string::npos);
  EXPECT_NE(ErrorOf("", {}, {{"serve.iceberg_timeout", "10ms"}})
                .find("serve.iceberg_timeout: value \"10ms\" is out of range [1s, 1h]"),
            std::string::npos);
}

TEST(ServeLoadTest, PrecedenceYamlEnvironmentSet) {
  const std::string yaml = R"(
catalog: {sqlite_path: /yaml/catalog.sqlite}
serve:
  port: 6000
  statement_timeout: 1s
  session_memory: 64MiB
  query_log: false
)";
  ServeSettings s = LoadOk(yaml);
  EXPECT_EQ(s.port, 6000);
  EXPECT_EQ(s.statement_timeout, milliseconds(1000));
  EXPECT_EQ(s.session_memory_bytes, 64LL << 20);
  EXPECT_FALSE(s.query_log);
  EXPECT_EQ(s.catalog.sqlite_path, "/yaml/catalog.sqlite");
  Env env = {{"WEIR_SERVE_PORT", "6001"},
             {"WEIR_SERVE_STATEMENT_TIMEOUT", "300ms"},
             {"WEIR_CATALOG_SQLITE_PATH", "/env/catalog.sqlite"},
             {"WEIR_SERVE_IDLE_SESSION_TIMEOUT", "0"}};
  s = LoadOk(yaml, env);
  EXPECT_EQ(s.port, 6001);
  EXPECT_EQ(s.statement_timeout, milliseconds(300));
  EXPECT_EQ(s.idle_session_timeout, milliseconds(0));
  EXPECT_EQ(s.catalog.sqlite_path, "/env/catalog.sqlite");
  EXPECT_EQ(s.session_memory_bytes, 64LL << 20);  // still the YAML's
  s = LoadOk(yaml, env,
             {{"serve.port", "6002"},
              {"serve.statement_timeout", "2s"},
              {"catalog.sqlite_path", "/cli/catalog.sqlite"}});
  EXPECT_EQ(s.port, 6002);
  EXPECT_EQ(s.statement_timeout, milliseconds(2000));
  EXPECT_EQ(s.catalog.sqlite_path, "/cli/catalog.sqlite");
}

TEST(ServeLoadTest, SharedCatalogStorageAndLogSettings) {
  // The millpond variables of shared settings apply; its refusals concern ingest only.
  const Env env = {{"DUCKLAKE_RDS_HOST", "rds.internal"},
                   {"DUCKLAKE_RDS_PASSWORD", "hunter 2"},
                   {"DUCKDB_S3_REGION", "us-east-1"},
                   {"LOG_LEVEL", "WARNING"},
                   {"MILLPOND_TYPED_COLUMNS", "ts:timestamptz"},
                   {"REPLICA_COUNT", "3"}};
  auto loaded = Load("", env);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->warnings.empty());
  const ServeSettings& s = loaded->settings;
  EXPECT_EQ(s.catalog.kind, CatalogKind::kPostgres);
  EXPECT_EQ(s.catalog.postgres_dsn,
            "host=rds.internal port=5432 dbname=ducklake user=ducklake password='hunter 2'");
  EXPECT_EQ(s.storage.s3_region, "us-east-1");
  EXPECT_EQ(s.log_level, "warn");
  const std::string described = Describe(s);
  EXPECT_NE(described.find("serve.port = 5432\n"), std::string::npos) << described;
  EXPECT_NE(described.find("catalog.postgres_password = ****\n"), std::string::npos);
  EXPECT_EQ(described.find("hunter"), std::string::npos) << described;
  EXPECT_EQ(described.find("kafka."), std::string::npos) << described;

  const std::string error =
      ErrorOf("catalog: {kind: postgres}\n", {{"WEIR_STORAGE_S3_ACCESS_KEY_ID", "AKIA"}});
  EXPECT_NE(error.find("catalog.postgres_dsn: required when catalog.kind is postgres"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("storage.s3_secret_access_key: must be set together"), std::string::npos)
      << error;
}

TEST(ServeLoadTest, BadValuesAreAllNamedWithValueAndOrigin) {
  const std::string error = ErrorOf("serve:\n  session_memory: 12x\n  host: \"\"\n",
                                    {{"WEIR_SERVE_PORT", "abc"},
                                     {"WEIR_SERVE_HTTP_PORT", "70000"},
                                     {"WEIR_SERVE_MEMORY_LIMIT", "lots"},
                                     {"WEIR_SERVE_QUERY_LOG", "maybe"}},
                                    {{"serve.statement_timeout", "soon"}});
  for (const char* line : {
           "serve.port: value \"abc\" is not an integer (from WEIR_SERVE_PORT)",
           "serve.http_port: value \"70000\" is out of range [-1, 65535] (from "
           "WEIR_SERVE_HTTP_PORT)",
           "serve.query_log: value \"maybe\" is not a boolean (true or false) (from "
           "WEIR_SERVE_QUERY_LOG)",
           "serve.session_memory: value \"12x\" is not a byte size (e.g. 1048576, 64KiB, 100MiB, "
           "1GB) (from config line 2)",
           "serve.statement_timeout: value \"soon\" is not a duration (e.g. 500ms, 60s, 2m, 1h) "
           "(from --set serve.statement_timeout)",
           "serve.memory_limit: value \"lots\" is not a DuckDB memory size (a number and a unit: "
           "4GB, 1.5GiB, 512MB) (from WEIR_SERVE_MEMORY_LIMIT)",
           "serve.host: required, not set (from config line 3)",
       }) {
    EXPECT_NE(error.find(line), std::string::npos) << line << "\n---\n" << error;
  }
  EXPECT_NE(ErrorOf("", {}, {{"serve.max_failed_logins", "0"}})
                .find("serve.max_failed_logins: value \"0\" is out of range [1, 10000]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("", {}, {{"serve.shutdown_timeout", "2h"}})
                .find("serve.shutdown_timeout: value \"2h\" is out of range [0, 1h]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("", {}, {{"serve.authentication_timeout", "0s"}})
                .find("serve.authentication_timeout: value \"0s\" is out of range [1s, 10m]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("", {}, {{"serve.authentication_timeout", "11m"}})
                .find("serve.authentication_timeout: value \"11m\" is out of range [1s, 10m]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("serve: {prot: 1}\n").find("serve.prot: unknown key (config line 1)"),
            std::string::npos);
}

TEST(ServeLoadTest, EachCommandLeavesTheOthersSettingsAlone) {
  // One file and one environment for both commands.
  const std::string yaml = R"(
kafka: {bootstrap_servers: "k:9092"}
catalog: {sqlite_path: /lake/catalog.sqlite}
datasets: [{topic: events, table: events}]
serve: {port: 6432}
)";
  const Env env = {{"WEIR_FLUSH_MAX_BYTES", "64MiB"},
                   {"WEIR_DATASET_EVENTS_FLUSH_INTERVAL", "30s"},
                   {"WEIR_KAFKA_PROPERTIES_SECURITY_PROTOCOL", "SASL_SSL"},
                   {"WEIR_SERVE_MAX_CONNECTIONS", "50"},
                   {"WEIR_SERVE_PASSWORD", "secret"}};
  auto serve = Load(yaml, env);
  ASSERT_TRUE(serve.ok()) << serve.status().message();
  EXPECT_TRUE(serve->warnings.empty());
  EXPECT_EQ(serve->settings.port, 6432);
  EXPECT_EQ(serve->settings.max_connections, 50);
  EXPECT_EQ(serve->settings.catalog.sqlite_path, "/lake/catalog.sqlite");

  LoadInput in;
  in.yaml_text = yaml;
  in.environment = env;
  in.environment["WEIR_SERVE_PORT"] = "not checked by ingest";
  auto ingest = LoadIngestSettings(in);
  ASSERT_TRUE(ingest.ok()) << ingest.status().message();
  EXPECT_TRUE(ingest->warnings.empty());
  EXPECT_EQ(ingest->settings.catalog.sqlite_path, "/lake/catalog.sqlite");
  EXPECT_EQ(ingest->settings.datasets[0].flush.interval, milliseconds(30000));

  // Given on the command line, the other command's settings are mistakes.
  in.overrides = {{"serve.port", "1"}};
  auto refused = LoadIngestSettings(in);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "--set serve.port: a setting of weir serve, not of weir ingest"),
            std::string::npos)
      << refused.status().message();
  const std::string error = ErrorOf("", {},
                                    {{"kafka.group_id", "g"},
                                     {"kafka.properties.security.protocol", "SSL"},
                                     {"datasets.events.topic", "t"},
                                     {"flush.max_bytes", "1MiB"},
                                     {"http.port", "1"},
                                     {"serve.prot", "1"}});
  for (const char* line :
       {"--set kafka.group_id: a setting of weir ingest, not of weir serve",
        "--set kafka.properties.security.protocol: a setting of weir ingest",
        "--set datasets.events.topic: a setting of weir ingest",
        "--set flush.max_bytes: a setting of weir ingest",
        "--set http.port: a setting of weir ingest", "--set serve.prot: unknown setting"}) {
    EXPECT_NE(error.find(line), std::string::npos) << line << "\n---\n" << error;
  }
}

TEST(ServeLoadTest, UnknownWeirServeVariablesWarnLikeOtherWeirVariables) {
  auto loaded = Load("", {{"WEIR_SERVE_PROT", "6000"},
                          {"WEIR_KAFKA_BOOTSTRAP_SERVER", "typo"},
                          {"WEIR_SERVE_NEW_PASSWORD", "secret"},
                          {"WEIR_TEST_SERVE", "harness"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->warnings,
            (std::vector<std::string>{"WEIR_KAFKA_BOOTSTRAP_SERVER is not a weir setting (ignored)",
                                      "WEIR_SERVE_PROT is not a weir setting (ignored)"}));
  LoadInput in;
  in.environment = {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
                    {"WEIR_TOPIC", "t"},
                    {"WEIR_TABLE", "t"},
                    {"WEIR_SERVE_PROT", "6000"}};
  auto ingest = LoadIngestSettings(in);
  ASSERT_TRUE(ingest.ok()) << ingest.status().message();
  EXPECT_EQ(ingest->warnings,
            (std::vector<std::string>{"WEIR_SERVE_PROT is not a weir setting (ignored)"}));
}

TEST(ServeLoadTest, TheExtensionDirectoryVariableIsASettingOfBothCommands) {
  // The engine read WEIR_DUCKDB_EXTENSION_DIR while the loader warned it was not a setting.
  auto loaded = Load("", {{"WEIR_DUCKDB_EXTENSION_DIR", "/opt/duckdb-extensions"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  EXPECT_EQ(loaded->settings.duckdb_extension_dir, "/opt/duckdb-extensions");
  LoadInput in;
  in.environment = {{"WEIR_KAFKA_BOOTSTRAP_SERVERS", "k:9092"},
                    {"WEIR_TOPIC", "t"},
                    {"WEIR_TABLE", "t"},
                    {"WEIR_DUCKDB_EXTENSION_DIR", "/opt/duckdb-extensions"}};
  auto ingest = LoadIngestSettings(in);
  ASSERT_TRUE(ingest.ok()) << ingest.status().message();
  EXPECT_TRUE(ingest->warnings.empty()) << ingest->warnings.front();
  EXPECT_EQ(ingest->settings.duckdb_extension_dir, "/opt/duckdb-extensions");
  EXPECT_EQ(Load("")->settings.duckdb_extension_dir, "");  // the build's directory
}

TEST(ServeLoadTest, DuckDbMemorySizes) {
  for (const char* good : {"4GB", "4 GB", "1.5GiB", "512mb", "10 bytes", "2g", "1TB", " 8 gib "}) {
    EXPECT_TRUE(IsDuckDbMemorySize(good)) << good;
  }
  for (const char* bad : {"", "4", "GB", "80%", "1.2.3GB", "4 PB", "1,5GB", "4GB extra"}) {
    EXPECT_FALSE(IsDuckDbMemorySize(bad)) << bad;
  }
}

}  // namespace
}  // namespace weir::config
