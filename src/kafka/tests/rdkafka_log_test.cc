#include "kafka/rdkafka_log.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "base/logging.h"
#include "kafka/rdkafka_handles.h"

namespace weir::kafka {
namespace {

using std::chrono::milliseconds;

TEST(RdKafkaLogTest, SyslogLevelsMapToSpdlogLevels) {
  EXPECT_EQ(LevelOfSyslog(0), spdlog::level::critical);
  EXPECT_EQ(LevelOfSyslog(2), spdlog::level::critical);
  EXPECT_EQ(LevelOfSyslog(3), spdlog::level::err);
  EXPECT_EQ(LevelOfSyslog(4), spdlog::level::warn);
  EXPECT_EQ(LevelOfSyslog(5), spdlog::level::info);
  EXPECT_EQ(LevelOfSyslog(6), spdlog::level::info);
  EXPECT_EQ(LevelOfSyslog(7), spdlog::level::debug);
}

TEST(RdKafkaLogTest, BrokerThreadLinesGiveTheBrokerAndTheBareMessage) {
  const RdKafkaLine line = ParseRdKafkaLine(
      "[thrd:127.0.0.1:1/bootstrap]: 127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: "
      "Connection refused (after 0ms in state CONNECT)");
  EXPECT_EQ(line.broker, "127.0.0.1:1/bootstrap");
  EXPECT_EQ(line.message,
            "Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms in state CONNECT)");
}

TEST(RdKafkaLogTest, TheBrokersCurrentNameWinsOverItsThreadsName) {
  const RdKafkaLine line = ParseRdKafkaLine(
      "[thrd:127.0.0.1:46783/bootstrap]: 127.0.0.1:46783/1: Disconnected (after 5009ms in state "
      "UP)");
  EXPECT_EQ(line.broker, "127.0.0.1:46783/1");
  EXPECT_EQ(line.message, "Disconnected (after 5009ms in state UP)");
}

TEST(RdKafkaLogTest, GroupCoordinatorLinesGiveTheCoordinatorsAddress) {
  const RdKafkaLine line = ParseRdKafkaLine(
      "[thrd:GroupCoordinator]: GroupCoordinator: 127.0.0.1:46783: Connect to "
      "ipv4#127.0.0.1:46783 failed: Connection refused (after 0ms in state CONNECT)");
  EXPECT_EQ(line.broker, "127.0.0.1:46783");
  EXPECT_EQ(line.message,
            "GroupCoordinator: Connect to ipv4#127.0.0.1:46783 failed: Connection refused (after "
            "0ms in state CONNECT)");
}

TEST(RdKafkaLogTest, BrokerThreadLinesWithoutTheBrokerPrefixKeepTheirMessage) {
  const RdKafkaLine line = ParseRdKafkaLine("[thrd:localhost:9092/1]: 1/1 brokers are down");
  EXPECT_EQ(line.broker, "localhost:9092/1");
  EXPECT_EQ(line.message, "1/1 brokers are down");
}

TEST(RdKafkaLogTest, OtherThreadsAndPlainLinesHaveNoBroker) {
  const RdKafkaLine main = ParseRdKafkaLine("[thrd:main]: Group \"g\" changed join state");
  EXPECT_EQ(main.broker, "");
  EXPECT_EQ(main.message, "Group \"g\" changed join state");
  const RdKafkaLine spaced = ParseRdKafkaLine("[thrd:app]: Some words: and more");
  EXPECT_EQ(spaced.broker, "");
  EXPECT_EQ(spaced.message, "Some words: and more");
  const RdKafkaLine plain = ParseRdKafkaLine("Configuration property x is deprecated");
  EXPECT_EQ(plain.broker, "");
  EXPECT_EQ(plain.message, "Configuration property x is deprecated");
}

TEST(RdKafkaLogTest, KindIgnoresDigitsButNotClientFacilityOrBroker) {
  const auto kind = [](std::string_view client, std::string_view broker, std::string_view text) {
    return RepeatedLineLimiter::KindOf(client, "FAIL", broker, text);
  };
  EXPECT_EQ(kind("c#1", "b:1/1", "Connect to ipv4#h:1 failed: refused (after 0ms in state X)"),
            kind("c#1", "b:1/1",
                 "Connect to ipv4#h:1 failed: refused (after 12ms in state X, 3 identical "
                 "error(s) suppressed)"));
  EXPECT_EQ(kind("c#1", "", "1/3 brokers are down"), kind("c#1", "", "2/3 brokers are down"));
  EXPECT_NE(kind("c#1", "b:1/1", "refused"), kind("c#1", "b:2/2", "refused"));
  EXPECT_NE(kind("c#1", "b:1/1", "refused"), kind("c#1", "b:1/1", "timed out"));
  EXPECT_NE(RepeatedLineLimiter::KindOf("c", "FAIL", "b", "x"),
            RepeatedLineLimiter::KindOf("c", "ERROR", "b", "x"));
}

TEST(RdKafkaLogTest, RepeatsWithinTheWindowAreCountedAndReportedWithTheNextLine) {
  ManualClock clock(std::chrono::system_clock::time_point(std::chrono::hours(1000)));
  RepeatedLineLimiter limiter(clock, milliseconds(10000));
  EXPECT_EQ(limiter.Admit("a"), std::optional<int64_t>(0));
  EXPECT_EQ(limiter.Admit("b"), std::optional<int64_t>(0)) << "another kind is not limited";
  clock.Advance(milliseconds(9999));
  EXPECT_EQ(limiter.Admit("a"), std::nullopt);
  EXPECT_EQ(limiter.Admit("a"), std::nullopt);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(limiter.Admit("a"), std::optional<int64_t>(2));
  EXPECT_EQ(limiter.Admit("a"), std::nullopt);
  clock.Advance(milliseconds(10000));
  EXPECT_EQ(limiter.Admit("a"), std::optional<int64_t>(1));
}

// A loopback port with nothing listening on it.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

TEST(RdKafkaLogTest, AClientOfAnUnreachableBrokerLogsOnlyWeirJsonLinesNamingClientAndBroker) {
  const std::string broker = "127.0.0.1:" + std::to_string(ClosedPort());
  ASSERT_TRUE(ConfigureLogging("info", LogFormat::kJson).ok());
  testing::internal::CaptureStderr();
  {
    RdKafkaConfPtr conf(rd_kafka_conf_new());
    char error[512] = {};
    ASSERT_EQ(
        rd_kafka_conf_set(conf.get(), "bootstrap.servers", broker.c_str(), error, sizeof error),
        RD_KAFKA_CONF_OK);
    RouteLogToWeir(conf.get());
    RdKafkaPtr rk(rd_kafka_new(RD_KAFKA_PRODUCER, conf.release(), error, sizeof error));
    ASSERT_NE(rk, nullptr) << error;
    const rd_kafka_metadata_t* metadata = nullptr;
    // Fails after its timeout; meanwhile the broker thread logs a refused connection about
    // once a second (librdkafka's own "identical error(s) suppressed" lines).
    EXPECT_NE(rd_kafka_metadata(rk.get(), 1, nullptr, &metadata, 3000), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  spdlog::default_logger()->flush();
  const std::string captured = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ConfigureLogging("info", LogFormat::kText).ok());
  const std::vector<std::string> lines = Lines(captured);
  ASSERT_FALSE(lines.empty()) << "librdkafka logged nothing";
  int refused = 0;
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.starts_with("{\"ts\":\"") && line.ends_with("}")) << line;
    if (line.find("\"msg\":\"librdkafka FAIL: Connect to ipv4#" + broker) != std::string::npos) {
      ++refused;
      EXPECT_NE(line.find("\"client\":\"rdkafka#producer-"), std::string::npos) << line;
      EXPECT_NE(line.find("\"broker\":\"" + broker + "/bootstrap\""), std::string::npos) << line;
    }
  }
  EXPECT_EQ(refused, 1) << "repeated refusals are rate limited to one line\n" << captured;
}

}  // namespace
}  // namespace weir::kafka
