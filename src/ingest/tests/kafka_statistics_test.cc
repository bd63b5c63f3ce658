#include "ingest/kafka_statistics.h"

#include <gtest/gtest.h>

namespace weir::ingest {
namespace {

TEST(KafkaStatisticsTest, TopLevelCountersAndPartitionLagBecomeGauges) {
  observe::MetricsRegistry registry;
  KafkaStatistics statistics(&registry);
  statistics.Update(R"({"name": "c#1", "replyq": 0, "msg_cnt": 12, "rx": 345, "rxmsgs": 9000,
    "topics": {"events": {"topic": "events", "partitions": {
      "0": {"partition": 0, "consumer_lag": 7, "fetchq_cnt": 3},
      "-1": {"partition": -1, "consumer_lag": -1, "fetchq_cnt": 0}}}}})");
  const std::string text = registry.Render();
  EXPECT_NE(text.find("weir_librdkafka_msg_cnt 12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("weir_librdkafka_rxmsgs 9000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("weir_librdkafka_consumer_lag{partition=\"0\",topic=\"events\"} 7\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("weir_librdkafka_fetchq_messages{partition=\"0\",topic=\"events\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("partition=\"-1\""), std::string::npos) << "the internal partition -1";
}

TEST(KafkaStatisticsTest, MalformedStatisticsKeepThePreviousValues) {
  observe::MetricsRegistry registry;
  KafkaStatistics statistics(&registry);
  statistics.Update(R"({"msg_cnt": 5})");
  statistics.Update("{not json");
  EXPECT_NE(registry.Render().find("weir_librdkafka_msg_cnt 5\n"), std::string::npos);
}

}  // namespace
}  // namespace weir::ingest
