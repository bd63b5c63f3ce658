// bloom_filter_columns (issue 13): loads from its variable, and every invalid value stops
// loading naming the setting and the column.
#include <gtest/gtest.h>

#include "config/load.h"
#include "ingest_env.h"

namespace weir::config {
namespace {

using test_env::Env;
using test_env::Load;

TEST(BloomSettings, ColumnsLoadFromTheirVariable) {
  auto loaded = Load({{"WEIR_BLOOM_FILTER_COLUMNS", "id,name"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->settings.datasets.at(0).bloom_filter_columns,
            (std::vector<std::string>{"id", "name"}));
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_TRUE(defaults->settings.datasets.at(0).bloom_filter_columns.empty());
  // With a mapping, its columns, the metadata columns and _inserted_at are known.
  auto mapped = Load({{"WEIR_MAPPING_USER", "user.id"},
                      {"WEIR_METADATA_COLUMNS", "src_topic:topic"},
                      {"WEIR_BLOOM_FILTER_COLUMNS", "user,src_topic,_inserted_at"}});
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
}

TEST(BloomSettings, EveryInvalidValueStopsLoadingNamingTheSettingAndTheColumn) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"WEIR_BLOOM_FILTER_COLUMNS", "id,id"}},
       "bloom_filter_columns: column \"id\" is listed twice"},
      {{{"WEIR_BLOOM_FILTER_COLUMNS", "a-b"}},
       "bloom_filter_columns: value \"a-b\" is not a column name"},
      {{{"WEIR_BLOOM_FILTER_COLUMNS", "ok"}, {"WEIR_TYPED_COLUMNS", "ok:boolean"}},
       "bloom_filter_columns: column \"ok\" is a boolean typed column"},
      {{{"WEIR_BLOOM_FILTER_COLUMNS", "user,nope"}, {"WEIR_MAPPING_USER", "user.id"}},
       "bloom_filter_columns: unknown column \"nope\""},
  };
  for (const auto& [env, message] : cases) {
    auto bad = Load(env);
    ASSERT_FALSE(bad.ok()) << message;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
  }
}

TEST(BloomSettings, TheWalSidecarNeedsWalModeAndListedColumns) {
  auto loaded = Load({{"WEIR_INGEST_MODE", "wal"},
                      {"WEIR_BLOOM_FILTER_COLUMNS", "id"},
                      {"WEIR_WAL_BLOOM_SIDECAR", "true"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_TRUE(loaded->settings.datasets.at(0).wal_bloom_sidecar);
  auto defaults = Load({{"WEIR_INGEST_MODE", "wal"}, {"WEIR_BLOOM_FILTER_COLUMNS", "id"}});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_FALSE(defaults->settings.datasets.at(0).wal_bloom_sidecar);
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"WEIR_BLOOM_FILTER_COLUMNS", "id"}, {"WEIR_WAL_BLOOM_SIDECAR", "true"}},
       "wal.bloom_sidecar: needs ingest.mode wal"},
      {{{"WEIR_INGEST_MODE", "wal"}, {"WEIR_WAL_BLOOM_SIDECAR", "true"}},
       "wal.bloom_sidecar: needs a non-empty bloom_filter_columns"},
  };
  for (const auto& [env, message] : cases) {
    auto bad = Load(env);
    ASSERT_FALSE(bad.ok()) << message;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
  }
}

}  // namespace
}  // namespace weir::config
