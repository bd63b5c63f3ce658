#include "config/docs.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace weir::config {
namespace {

TEST(DocsTest, ConfigurationMarkdownIsCurrent) {
  std::ifstream file(std::string(WEIR_SOURCE_DIR) + "/docs/CONFIGURATION.md");
  std::stringstream committed;
  committed << file.rdbuf();
  EXPECT_TRUE(committed.str() == RenderConfigurationMarkdown())
      << "docs/CONFIGURATION.md is stale: run build/<preset>/src/config/weir_config_docs > "
         "docs/CONFIGURATION.md";
}

TEST(DocsTest, EverySettingHasARow) {
  const std::string text = RenderConfigurationMarkdown();
  for (const char* name : {"`kafka.bootstrap_servers`", "`datasets[].flush.max_bytes`",
                           "`WEIR_KAFKA_PROPERTIES_<KEY>`", "`FLUSH_SIZE`", "`REPLICA_COUNT`",
                           "`KAFKA_CONSUMER_AUTO_OFFSET_RESET`", "`shutdown.drain_timeout`"}) {
    EXPECT_NE(text.find(name), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace weir::config
