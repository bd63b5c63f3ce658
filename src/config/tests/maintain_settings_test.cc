// `weir maintain`'s settings (issue 16): a dataset's maintain.* policies and the --serve
// process's port load from variables, and every invalid value or combination stops loading
// naming the setting.
#include <gtest/gtest.h>

#include "config/load.h"
#include "ingest_env.h"

namespace weir::config {
namespace {

using test_env::Env;
using test_env::Load;

TEST(MaintainSettings, PoliciesAndTheServePortLoadFromVariables) {
  auto loaded = Load({{"WEIR_MAINTAIN_TARGET_FILE_SIZE", "256MiB"},
                      {"WEIR_MAINTAIN_TIERS_SMALL", "8MiB"},
                      {"WEIR_MAINTAIN_TIERS_LARGE", "200MiB"},
                      {"WEIR_MAINTAIN_EXPIRE_OLDER_THAN", "2d"},
                      {"WEIR_MAINTAIN_EXPIRE_RETAIN_LAST", "3"},
                      {"WEIR_MAINTAIN_EXPIRE_INTERVAL", "0s"},
                      {"WEIR_MAINTAIN_ORPHANS_OLDER_THAN", "2h"},
                      {"WEIR_MAINTAIN_ORPHANS_INTERVAL", "30m"},
                      {"WEIR_MAINTAIN_HTTP_PORT", "9123"},
                      {"WEIR_MAINTAIN_STATS_INTERVAL", "5s"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const MaintainSettings& m = loaded->settings.datasets.at(0).maintain;
  EXPECT_EQ(m.target_file_size, 256LL << 20);
  EXPECT_EQ(m.small_file_size, 8LL << 20);
  EXPECT_EQ(m.large_file_size, 200LL << 20);
  EXPECT_EQ(m.expire_older_than.count(), 2 * 86400000LL);
  EXPECT_EQ(m.expire_retain_last, 3);
  EXPECT_EQ(m.expire_interval.count(), 0);
  EXPECT_EQ(m.orphans_older_than.count(), 2 * 3600000LL);
  EXPECT_EQ(m.orphans_interval.count(), 30 * 60000LL);
  EXPECT_EQ(loaded->settings.maintain_http_port, 9123);
  EXPECT_EQ(loaded->settings.maintain_stats_interval.count(), 5000);
  // The defaults are a valid configuration.
  auto defaults = Load({});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->settings.datasets.at(0).maintain.orphans_older_than.count(), 86400000);
}

TEST(MaintainSettings, TheTiersFollowATargetSetAloneSoItNeverStopsIngest) {
  auto loaded = Load({{"WEIR_MAINTAIN_TARGET_FILE_SIZE", "1MiB"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const MaintainSettings& m = loaded->settings.datasets.at(0).maintain;
  EXPECT_EQ(m.target_file_size, 1LL << 20);
  EXPECT_EQ(m.small_file_size, 128LL << 10);
  EXPECT_EQ(m.large_file_size, 512LL << 10);
  // A tier set by hand stays as set, the other follows the target.
  auto small =
      Load({{"WEIR_MAINTAIN_TARGET_FILE_SIZE", "1GiB"}, {"WEIR_MAINTAIN_TIERS_SMALL", "32MiB"}});
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->settings.datasets.at(0).maintain.small_file_size, 32LL << 20);
  EXPECT_EQ(small->settings.datasets.at(0).maintain.large_file_size, 512LL << 20);
}

TEST(MaintainSettings, EveryInvalidValueStopsLoadingNamingTheSetting) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"WEIR_MAINTAIN_TIERS_SMALL", "64MiB"}},
       "maintain.tiers.small: value \"67108864\" is not below maintain.tiers.large (67108864)"},
      {{{"WEIR_MAINTAIN_TIERS_LARGE", "200MiB"}},
       "maintain.tiers.large: value \"209715200\" is above maintain.target_file_size"},
      {{{"WEIR_MAINTAIN_EXPIRE_INTERVAL", "500ms"}},
       "maintain.expire.interval: value \"500ms\" is below 1s (0 turns the policy off)"},
      {{{"WEIR_MAINTAIN_ORPHANS_INTERVAL", "10ms"}}, "maintain.orphans.interval"},
      {{{"WEIR_MAINTAIN_COMPACT_INTERVAL", "999ms"}}, "maintain.compact.interval"},
      {{{"WEIR_MAINTAIN_ORPHANS_OLDER_THAN", "10s"}}, "maintain.orphans.older_than"},
      {{{"WEIR_MAINTAIN_EXPIRE_RETAIN_LAST", "0"}}, "maintain.expire.retain_last"},
      {{{"WEIR_MAINTAIN_TARGET_FILE_SIZE", "10KiB"}}, "maintain.target_file_size"},
      {{{"WEIR_MAINTAIN_HTTP_PORT", "70000"}}, "maintain.http_port"},
      {{{"WEIR_MAINTAIN_STATS_INTERVAL", "10ms"}}, "maintain.stats_interval"},
      {{{"WEIR_MAINTAIN_EXPIRE_OLDER_THAN", "soon"}}, "maintain.expire.older_than"},
  };
  for (const auto& [env, message] : cases) {
    auto bad = Load(env);
    ASSERT_FALSE(bad.ok()) << message;
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
  }
}

}  // namespace
}  // namespace weir::config
