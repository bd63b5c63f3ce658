#include "base/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

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

// The line LogWithFields writes to stderr, without its timestamp, level and thread prefix.
std::string LoggedLine(LogFormat format, std::initializer_list<LogField> fields) {
  EXPECT_TRUE(ConfigureLogging("info", format).ok());
  testing::internal::CaptureStderr();
  LogWithFields(spdlog::level::warn, "Connect \"x\" failed", fields);
  spdlog::default_logger()->flush();
  const std::string line = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(ConfigureLogging("info", LogFormat::kText).ok());
  return line;
}

TEST(LoggingTest, JsonLinesCarryEachFieldAsAKeyOfItsOwn) {
  const std::string line = LoggedLine(
      LogFormat::kJson, {{"client", "rdkafka#producer-1"}, {"broker", "h:1/\"b\""}, {"x", ""}});
  EXPECT_EQ(line.substr(0, 7), "{\"ts\":\"") << line;
  const size_t level = line.find(R"(","level":"warning","thread":)");
  ASSERT_NE(level, std::string::npos) << line;
  EXPECT_EQ(line.substr(line.find(",\"msg\":")),
            R"(,"msg":"Connect \"x\" failed","client":"rdkafka#producer-1","broker":"h:1/\"b\""})"
            "\n");
}

TEST(LoggingTest, TextLinesCarryFieldsAsKeyValuePairsQuotedWhenNeeded) {
  const std::string line = LoggedLine(
      LogFormat::kText,
      {{"client", "rdkafka#producer-1"}, {"empty", ""}, {"broker", "a b"}, {"eq", "k=v"}});
  const std::string tail =
      "] Connect \"x\" failed client=rdkafka#producer-1 broker=\"a b\" "
      "eq=\"k=v\"\n";
  ASSERT_GE(line.size(), tail.size()) << line;
  EXPECT_EQ(line.substr(line.size() - tail.size()), tail) << line;
  EXPECT_NE(line.find(" warning ["), std::string::npos) << line;
}

TEST(LoggingTest, PlainLinesHaveNoFields) {
  ASSERT_TRUE(ConfigureLogging("info", LogFormat::kJson).ok());
  testing::internal::CaptureStderr();
  spdlog::info("plain");
  spdlog::default_logger()->flush();
  const std::string line = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ConfigureLogging("info", LogFormat::kText).ok());
  EXPECT_EQ(line.substr(line.find(",\"msg\":")), ",\"msg\":\"plain\"}\n") << line;
}

}  // namespace
}  // namespace weir
