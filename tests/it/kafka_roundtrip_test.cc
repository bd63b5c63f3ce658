// librdkafka against the harness broker: create a topic, produce 10,000 messages with delivery
// reports, consume them back in a fresh group; exact count and content.
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "harness_env.h"

namespace weir {
namespace {

constexpr int kMessages = 10000;
constexpr int kPartitions = 4;

struct KafkaDestroy {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct ConfDestroy {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct MessageDestroy {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
struct PartitionListDestroy {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    rd_kafka_topic_partition_list_destroy(l);
  }
};
using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaDestroy>;
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, ConfDestroy>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDestroy>;

ConfPtr MakeConf(const std::map<std::string, std::string>& settings) {
  ConfPtr conf(rd_kafka_conf_new());
  char error[512];
  for (const auto& [key, value] : settings) {
    EXPECT_EQ(rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), error, sizeof error),
              RD_KAFKA_CONF_OK)
        << key << ": " << error;
  }
  return conf;
}

KafkaPtr MakeClient(rd_kafka_type_t type, ConfPtr conf) {
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), error, sizeof error);
  EXPECT_NE(rk, nullptr) << error;
  if (rk != nullptr) conf.release();  // rd_kafka_new took ownership
  return KafkaPtr(rk);
}

std::string Payload(int i) {
  return R"({"id":)" + std::to_string(i) + R"(,"event":"e)" + std::to_string(i % 13) + R"("})";
}

void CreateTopic(rd_kafka_t* rk, const std::string& topic) {
  char error[512];
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), kPartitions, 1, error, sizeof error);
  ASSERT_NE(new_topic, nullptr) << error;
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &new_topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  ASSERT_NE(event, nullptr) << "CreateTopics timed out";
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event);
  ASSERT_NE(result, nullptr);
  size_t count = 0;
  const rd_kafka_topic_result_t** topics = rd_kafka_CreateTopics_result_topics(result, &count);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(rd_kafka_topic_result_error(topics[0]), RD_KAFKA_RESP_ERR_NO_ERROR)
      << rd_kafka_topic_result_error_string(topics[0]);
  rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
}

int g_delivered_ok = 0;
int g_delivery_failed = 0;

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  (message->err == RD_KAFKA_RESP_ERR_NO_ERROR ? g_delivered_ok : g_delivery_failed)++;
}

TEST(KafkaRoundTripTest, ProducesAndConsumesTenThousandMessagesExactly) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-roundtrip");

  ConfPtr producer_conf = MakeConf(
      {{"bootstrap.servers", bootstrap}, {"enable.idempotence", "true"}, {"linger.ms", "5"}});
  rd_kafka_conf_set_dr_msg_cb(producer_conf.get(), OnDelivery);
  KafkaPtr producer = MakeClient(RD_KAFKA_PRODUCER, std::move(producer_conf));
  ASSERT_NE(producer, nullptr);
  ASSERT_NO_FATAL_FAILURE(CreateTopic(producer.get(), topic));

  for (int i = 0; i < kMessages; ++i) {
    const std::string key = "k-" + std::to_string(i);
    const std::string value = Payload(i);
    rd_kafka_vu_t fields[4];
    fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    fields[0].u.cstr = topic.c_str();
    fields[1].vtype = RD_KAFKA_VTYPE_KEY;
    fields[1].u.mem = {const_cast<char*>(key.data()), key.size()};
    fields[2].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[2].u.mem = {const_cast<char*>(value.data()), value.size()};
    fields[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    fields[3].u.i = RD_KAFKA_MSG_F_COPY;
    rd_kafka_resp_err_t err;
    while (true) {
      rd_kafka_error_t* error = rd_kafka_produceva(producer.get(), fields, 4);
      err = error == nullptr ? RD_KAFKA_RESP_ERR_NO_ERROR : rd_kafka_error_code(error);
      if (error != nullptr) rd_kafka_error_destroy(error);
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
      rd_kafka_poll(producer.get(), 100);
    }
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  }
  ASSERT_EQ(rd_kafka_flush(producer.get(), 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(g_delivered_ok, kMessages);
  EXPECT_EQ(g_delivery_failed, 0);

  KafkaPtr consumer =
      MakeClient(RD_KAFKA_CONSUMER, MakeConf({{"bootstrap.servers", bootstrap},
                                              {"group.id", topic + "-group"},
                                              {"auto.offset.reset", "earliest"},
                                              {"enable.auto.commit", "false"},
                                              {"isolation.level", "read_committed"}}));
  ASSERT_NE(consumer, nullptr);
  rd_kafka_poll_set_consumer(consumer.get());
  std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroy> subscription(
      rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(subscription.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(consumer.get(), subscription.get()), RD_KAFKA_RESP_ERR_NO_ERROR);

  std::set<int> ids;
  std::map<int32_t, int64_t> last_offset;
  int received = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (received < kMessages && std::chrono::steady_clock::now() < deadline) {
    MessagePtr message(rd_kafka_consumer_poll(consumer.get(), 500));
    if (!message) continue;
    if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
    ASSERT_EQ(message->err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_message_errstr(message.get());
    const std::string key(static_cast<const char*>(message->key), message->key_len);
    const std::string value(static_cast<const char*>(message->payload), message->len);
    ASSERT_EQ(key.rfind("k-", 0), 0u) << key;
    const int id = std::stoi(key.substr(2));
    EXPECT_EQ(value, Payload(id));
    auto [it, fresh] = last_offset.try_emplace(message->partition, message->offset);
    if (!fresh) {
      EXPECT_GT(message->offset, it->second) << "offsets go forward within a partition";
      it->second = message->offset;
    }
    ids.insert(id);
    ++received;
  }
  // Anything more within a short wait would be a duplicate.
  MessagePtr extra(rd_kafka_consumer_poll(consumer.get(), 2000));
  EXPECT_TRUE(!extra || extra->err != RD_KAFKA_RESP_ERR_NO_ERROR) << "an 10,001st message";
  extra.reset();

  EXPECT_EQ(received, kMessages);
  EXPECT_EQ(ids.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(*ids.begin(), 0);
  EXPECT_EQ(*ids.rbegin(), kMessages - 1);
  EXPECT_EQ(last_offset.size(), static_cast<size_t>(kPartitions))
      << "the keys spread over every partition";
  EXPECT_EQ(rd_kafka_consumer_close(consumer.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
}

}  // namespace
}  // namespace weir
