// Upsert datasets' settings (issue 15): upsert.key and upsert.key_from load from variables,
// and every invalid value or combination stops loading naming the setting.
#include <gtest/gtest.h>

#include "config/load.h"
#include "ingest_env.h"

namespace weir::config {
namespace {

using test_env::Env;
using test_env::Load;

TEST(UpsertSettings, KeyAndKeySourceLoadFromVariables) {
  auto loaded = Load({{"WEIR_UPSERT_KEY", "merchant, w"},
                      {"WEIR_UPSERT_KEY_FROM", "kafka_key"},
                      {"WEIR_PARTITION_BY", "w"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const UpsertSettings& upsert = loaded->settings.datasets.at(0).upsert;
  EXPECT_EQ(upsert.key, (std::vector<std::string>{"merchant", "w"}));
  EXPECT_EQ(upsert.key_from, "kafka_key");
  // An append dataset by default, reading committed records only.
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_TRUE(defaults->settings.datasets.at(0).upsert.key.empty());
  EXPECT_EQ(defaults->settings.datasets.at(0).upsert.key_from, "value");
  EXPECT_EQ(defaults->settings.kafka.isolation_level, "read_committed");
}

TEST(UpsertSettings, AnIcebergLakeTakesUpsertDatasetsPartitionedByKeyColumns) {
  auto loaded = Load({{"WEIR_UPSERT_KEY", "g,w"},
                      {"WEIR_LAKE_FORMAT", "iceberg"},
                      {"WEIR_PARTITION_BY", "w,bucket[8](g)"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.datasets.at(0).upsert.key, (std::vector<std::string>{"g", "w"}));
}

TEST(UpsertSettings, IcebergDeletesAreEqualityByDefaultAndDeletionVectorsWhenAsked) {
  auto defaults = Load({{"WEIR_UPSERT_KEY", "g"}, {"WEIR_LAKE_FORMAT", "iceberg"}});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->settings.datasets.at(0).upsert.iceberg_deletes, IcebergDeletes::kEquality);
  auto dv = Load({{"WEIR_UPSERT_KEY", "g"},
                  {"WEIR_LAKE_FORMAT", "iceberg"},
                  {"WEIR_UPSERT_ICEBERG_DELETES", "deletion_vectors"}});
  ASSERT_TRUE(dv.ok()) << dv.status().message();
  EXPECT_EQ(dv->settings.datasets.at(0).upsert.iceberg_deletes, IcebergDeletes::kDeletionVectors);
}

TEST(UpsertSettings, EveryInvalidValueStopsLoadingNamingTheSetting) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"WEIR_UPSERT_KEY", "merchant,w"}, {"WEIR_PARTITION_BY", "day(_inserted_at),team"}},
       "partition_by: partition source column(s) _inserted_at, team are not in upsert.key "
       "(merchant, w)"},
      {{{"WEIR_UPSERT_KEY", "a,a"}}, "upsert.key: column \"a\" is listed twice"},
      {{{"WEIR_UPSERT_KEY", "a-b"}}, "upsert.key: value \"a-b\" is not a column name"},
      {{{"WEIR_UPSERT_KEY", "_inserted_at"}}, "upsert.key: column \"_inserted_at\""},
      {{{"WEIR_UPSERT_KEY_FROM", "kafka_key"}},
       "upsert.key_from: value \"kafka_key\" needs upsert.key"},
      {{{"WEIR_UPSERT_KEY_FROM", "header"}}, "upsert.key_from"},
      {{{"WEIR_UPSERT_KEY", "a"},
        {"WEIR_LAKE_FORMAT", "iceberg"},
        {"WEIR_PARTITION_BY", "a,bucket[4](b)"}},
       "partition_by: partition source column(s) b are not in upsert.key (a)"},
      {{{"WEIR_UPSERT_KEY", "a"}, {"WEIR_UPSERT_ICEBERG_DELETES", "deletion_vectors"}},
       "upsert.iceberg_deletes: value \"deletion_vectors\" needs lake.format iceberg"},
      {{{"WEIR_LAKE_FORMAT", "iceberg"}, {"WEIR_UPSERT_ICEBERG_DELETES", "deletion_vectors"}},
       "upsert.iceberg_deletes: value \"deletion_vectors\" needs upsert.key"},
      {{{"WEIR_UPSERT_KEY", "a"},
        {"WEIR_LAKE_FORMAT", "iceberg"},
        {"WEIR_UPSERT_ICEBERG_DELETES", "positional"}},
       "upsert.iceberg_deletes"},
      {{{"WEIR_UPSERT_KEY", "a"}, {"WEIR_ROUTE_TEMPLATE", "t_{a}"}},
       "route.template: an upsert dataset (upsert.key) cannot be routed"},
  };
  for (const auto& [env, message] : cases) {
    auto bad = Load(env);
    ASSERT_FALSE(bad.ok()) << message;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
  }
}

}  // namespace
}  // namespace weir::config
