// MakeConsumerConf: the librdkafka values weir sets, passthrough, and the refusals.
#include <string>

#include <gtest/gtest.h>

#include "kafka/consumer_config.h"

namespace weir::kafka {
namespace {

ConsumerConfig BaseConfig() {
  ConsumerConfig config;
  config.bootstrap_servers = "broker-1:9092,broker-2:9092";
  config.group_id = "weir-events";
  config.topics = {"events"};
  return config;
}

std::string Get(rd_kafka_conf_t* conf, const std::string& name) {
  char value[512] = {};
  size_t size = sizeof value;
  if (rd_kafka_conf_get(conf, name.c_str(), value, &size) != RD_KAFKA_CONF_OK) return "<unset>";
  return value;
}

void ExpectFatalMentioning(const ConsumerConfig& config, const std::string& text) {
  auto conf = MakeConsumerConf(config);
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(ClassOf(conf.status()), ErrorClass::kFatal);
  EXPECT_NE(conf.status().message().find(text), std::string::npos) << conf.status().ToString();
}

TEST(MakeConsumerConfTest, SetsEveryValueInGroupMode) {
  ConsumerConfig config = BaseConfig();
  config.isolation_level = "read_uncommitted";
  config.fetch_min_bytes = 4096;
  config.fetch_max_wait_ms = 250;
  config.queued_max_messages_kbytes = 2048;
  config.statistics_interval = std::chrono::milliseconds(15000);
  auto conf = MakeConsumerConf(config);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  rd_kafka_conf_t* c = conf->get();
  EXPECT_EQ(Get(c, "bootstrap.servers"), "broker-1:9092,broker-2:9092");
  EXPECT_EQ(Get(c, "group.id"), "weir-events");
  EXPECT_EQ(Get(c, "partition.assignment.strategy"), "cooperative-sticky");
  EXPECT_EQ(Get(c, "enable.auto.commit"), "false");
  EXPECT_EQ(Get(c, "enable.auto.offset.store"), "false");
  EXPECT_EQ(Get(c, "isolation.level"), "read_uncommitted");
  EXPECT_EQ(Get(c, "fetch.min.bytes"), "4096");
  EXPECT_EQ(Get(c, "fetch.wait.max.ms"), "250");
  EXPECT_EQ(Get(c, "queued.max.messages.kbytes"), "2048");
  EXPECT_EQ(Get(c, "statistics.interval.ms"), "15000");
  // Consumer resets stale offsets itself (to count the gap), so librdkafka must report them.
  EXPECT_EQ(Get(c, "auto.offset.reset"), "error");
}

TEST(MakeConsumerConfTest, DefaultsAreReadCommittedAndBoundedPrefetch) {
  auto conf = MakeConsumerConf(BaseConfig());
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "isolation.level"), "read_committed");
  EXPECT_EQ(Get(conf->get(), "fetch.min.bytes"), "1048576");
  EXPECT_EQ(Get(conf->get(), "fetch.wait.max.ms"), "500");
  EXPECT_EQ(Get(conf->get(), "queued.max.messages.kbytes"), "65536");
  EXPECT_EQ(Get(conf->get(), "fetch.queue.backoff.ms"), "10");
  EXPECT_EQ(Get(conf->get(), "statistics.interval.ms"), "0");
}

TEST(MakeConsumerConfTest, StaticModeLeavesTheAssignmentStrategyAlone) {
  ConsumerConfig config = BaseConfig();
  config.assignment = ConsumerConfig::Assignment::kStatic;
  config.replica_count = 3;
  config.ordinal = 2;
  config.properties = {{"partition.assignment.strategy", "range"}};
  auto conf = MakeConsumerConf(config);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "partition.assignment.strategy"), "range");
}

TEST(MakeConsumerConfTest, TheConsumerProtocolLeavesAssignmentToTheBroker) {
  ConsumerConfig config = BaseConfig();
  config.group_protocol = ConsumerConfig::GroupProtocol::kConsumer;
  auto conf = MakeConsumerConf(config);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "group.protocol"), "consumer");
  // Not cooperative-sticky: librdkafka refuses a client-side assignor under KIP-848.
  EXPECT_EQ(Get(conf->get(), "partition.assignment.strategy"), "range,roundrobin");
  auto classic = MakeConsumerConf(BaseConfig());
  ASSERT_TRUE(classic.ok());
  EXPECT_EQ(Get(classic->get(), "group.protocol"), "classic");

  // What KIP-848 moves to the broker is refused with the reason, not at librdkafka's start.
  for (const char* property :
       {"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"}) {
    config.properties = {{property, "6000"}};
    ExpectFatalMentioning(config, std::string(property) +
                                      "=6000 is not allowed with "
                                      "group_protocol consumer");
  }
  config.properties = {{"group.protocol", "classic"}};
  ExpectFatalMentioning(config, "group.protocol=classic is not allowed");
  config.properties.clear();
  config.assignment = ConsumerConfig::Assignment::kStatic;
  ExpectFatalMentioning(config, "group_protocol consumer needs group assignment");
}

TEST(MakeConsumerConfTest, PassesPropertiesThroughLast) {
  ConsumerConfig config = BaseConfig();
  config.properties = {{"client.id", "weir-test"},
                       {"fetch.min.bytes", "1"},
                       {"session.timeout.ms", "12345"},
                       {"enable.auto.commit", "false"},
                       {"partition.assignment.strategy", "cooperative-sticky"}};
  auto conf = MakeConsumerConf(config);
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(conf->get(), "client.id"), "weir-test");
  EXPECT_EQ(Get(conf->get(), "fetch.min.bytes"), "1");
  EXPECT_EQ(Get(conf->get(), "session.timeout.ms"), "12345");
}

TEST(MakeConsumerConfTest, NamesThePropertyAndValueLibrdkafkaRefused) {
  ConsumerConfig config = BaseConfig();
  config.properties = {{"no.such.property", "1"}};
  ExpectFatalMentioning(config, "no.such.property=1");
  EXPECT_EQ(GetErrorDetail(MakeConsumerConf(config).status())->code(), "CONF_UNKNOWN");

  config.properties = {{"session.timeout.ms", "soon"}};
  ExpectFatalMentioning(config, "session.timeout.ms=soon");
  EXPECT_EQ(GetErrorDetail(MakeConsumerConf(config).status())->code(), "CONF_INVALID");

  config = BaseConfig();
  config.isolation_level = "sometimes";
  ExpectFatalMentioning(config, "isolation.level=sometimes");
  config = BaseConfig();
  config.fetch_max_wait_ms = -5;
  ExpectFatalMentioning(config, "fetch.wait.max.ms=-5");
}

TEST(MakeConsumerConfTest, RefusesOverridesOfOffsetHandling) {
  ConsumerConfig config = BaseConfig();
  config.properties = {{"enable.auto.commit", "true"}};
  ExpectFatalMentioning(config, "enable.auto.commit=true");
  config.properties = {{"enable.auto.offset.store", "true"}};
  ExpectFatalMentioning(config, "enable.auto.offset.store=true");
  config.properties = {{"partition.assignment.strategy", "range,roundrobin"}};
  ExpectFatalMentioning(config, "partition.assignment.strategy=range,roundrobin");
  config.properties = {{"auto.offset.reset", "earliest"}};
  ExpectFatalMentioning(config, "auto.offset.reset=earliest");

  config.assignment = ConsumerConfig::Assignment::kStatic;
  config.properties = {{"enable.auto.commit", "true"}};
  ExpectFatalMentioning(config, "enable.auto.commit=true");
}

TEST(MakeConsumerConfTest, ValidatesSettings) {
  ConsumerConfig config = BaseConfig();
  config.auto_offset_reset = "error";
  ExpectFatalMentioning(config, "auto_offset_reset");
  config = BaseConfig();
  config.group_id.clear();
  ExpectFatalMentioning(config, "group_id");
  config = BaseConfig();
  config.topics.clear();
  ExpectFatalMentioning(config, "topics");
  config = BaseConfig();
  config.bootstrap_servers.clear();
  ExpectFatalMentioning(config, "bootstrap_servers");
  config = BaseConfig();
  config.assignment = ConsumerConfig::Assignment::kStatic;
  config.replica_count = 3;
  config.ordinal = 3;
  ExpectFatalMentioning(config, "ordinal 3");
}

TEST(ResetsToEarliestTest, AcceptsLibrdkafkaSpellings) {
  for (const char* policy : {"earliest", "smallest", "beginning"}) {
    EXPECT_EQ(ResetsToEarliest(policy).ValueOrDie(), true) << policy;
  }
  for (const char* policy : {"latest", "largest", "end"}) {
    EXPECT_EQ(ResetsToEarliest(policy).ValueOrDie(), false) << policy;
  }
  EXPECT_FALSE(ResetsToEarliest("none").ok());
}

}  // namespace
}  // namespace weir::kafka
