#include "base/logging.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(LoggingTest, AcceptsKnownLevelsInAnyCase) {
  for (const char* level : {"trace", "DEBUG", "Info", "warn", "WARNING", "error", "off"}) {
    EXPECT_TRUE(ConfigureLogging(level, LogFormat::kText).ok()) << level;
  }
}

TEST(LoggingTest, RejectsAnUnknownLevelNamingIt) {
  const Status status = ConfigureLogging("loud", LogFormat::kJson);
  ASSERT_TRUE(status.IsInvalid());
  EXPECT_NE(status.message().find("'loud'"), std::string::npos);
}

TEST(LoggingTest, JsonEscapeHandlesQuotesControlsAndUtf8) {
  EXPECT_EQ(JsonEscape("a\"b\\c\nd\te\x01"), "a\\\"b\\\\c\\nd\\te\\u0001");
  EXPECT_EQ(JsonEscape("h\xC3\xA9"), "h\xC3\xA9");
}

}  // namespace
}  // namespace weir
