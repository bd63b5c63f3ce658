// Consumer against the harness broker: static and group assignment starting at the listener's
// (ledger) offsets, pause/resume, stale-offset recovery with the gap counted, offset commits,
// and a missing topic. Every test asserts exact records (partition, offset, payload).
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness_env.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"
#include "kafka/kafka_error.h"
#include "kafka/rdkafka_handles.h"

namespace weir::kafka {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Payload(int32_t partition, int i) {
  return "p" + std::to_string(partition) + "-" + std::to_string(i);
}

// Produces `count` records to one partition with an idempotent producer, payloads
// Payload(partition, first..first+count-1).
void Produce(const std::string& bootstrap, const std::string& topic, int32_t partition, int count,
             int first = 0) {
  RdKafkaConfPtr conf(rd_kafka_conf_new());
  char error[512];
  for (const auto& [k, v] : std::map<std::string, std::string>{
           {"bootstrap.servers", bootstrap}, {"enable.idempotence", "true"}, {"linger.ms", "5"}}) {
    ASSERT_EQ(rd_kafka_conf_set(conf.get(), k.c_str(), v.c_str(), error, sizeof error),
              RD_KAFKA_CONF_OK);
  }
  RdKafkaPtr producer(rd_kafka_new(RD_KAFKA_PRODUCER, conf.release(), error, sizeof error));
  ASSERT_NE(producer, nullptr) << error;
  for (int i = first; i < first + count; ++i) {
    const std::string key = "k" + std::to_string(i);
    const std::string value = Payload(partition, i);
    rd_kafka_vu_t fields[5];
    fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    fields[0].u.cstr = topic.c_str();
    fields[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    fields[1].u.i32 = partition;
    fields[2].vtype = RD_KAFKA_VTYPE_KEY;
    fields[2].u.mem = {const_cast<char*>(key.data()), key.size()};
    fields[3].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[3].u.mem = {const_cast<char*>(value.data()), value.size()};
    fields[4].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    fields[4].u.i = RD_KAFKA_MSG_F_COPY;
    ASSERT_TRUE(KafkaError(rd_kafka_produceva(producer.get(), fields, 5), "produce").ok());
  }
  ASSERT_EQ(rd_kafka_flush(producer.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

// Moves the partition's log start to `before` (kafka-delete-records).
void DeleteRecords(const std::string& bootstrap, const std::string& topic, int32_t partition,
                   int64_t before) {
  RdKafkaConfPtr conf(rd_kafka_conf_new());
  char error[512];
  ASSERT_EQ(
      rd_kafka_conf_set(conf.get(), "bootstrap.servers", bootstrap.c_str(), error, sizeof error),
      RD_KAFKA_CONF_OK);
  RdKafkaPtr rk(rd_kafka_new(RD_KAFKA_PRODUCER, conf.release(), error, sizeof error));
  ASSERT_NE(rk, nullptr) << error;
  PartitionListPtr offsets(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(offsets.get(), topic.c_str(), partition)->offset = before;
  rd_kafka_DeleteRecords_t* request = rd_kafka_DeleteRecords_new(offsets.get());
  QueuePtr queue(rd_kafka_queue_new(rk.get()));
  rd_kafka_DeleteRecords(rk.get(), &request, 1, nullptr, queue.get());
  rd_kafka_DeleteRecords_destroy(request);
  EventPtr event(rd_kafka_queue_poll(queue.get(), 30000));
  ASSERT_NE(event, nullptr);
  ASSERT_EQ(rd_kafka_event_error(event.get()), RD_KAFKA_RESP_ERR_NO_ERROR)
      << rd_kafka_event_error_string(event.get());
  const rd_kafka_topic_partition_list_t* result =
      rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(event.get()));
  ASSERT_EQ(result->cnt, 1);
  EXPECT_EQ(result->elems[0].err, RD_KAFKA_RESP_ERR_NO_ERROR);
  EXPECT_EQ(result->elems[0].offset, before);
}

// A stand-in for the pipeline: start offsets from a shared ledger; on revoke, "commits" the
// next offset of what it delivered into that ledger.
class LedgerListener : public AssignmentListener {
 public:
  explicit LedgerListener(std::map<TopicPartition, int64_t>* ledger) : ledger_(ledger) {}

  Result<std::map<TopicPartition, int64_t>> OnAssigned(
      const std::vector<TopicPartition>& partitions) override {
    assigned.insert(assigned.end(), partitions.begin(), partitions.end());
    std::map<TopicPartition, int64_t> starts;
    for (const TopicPartition& tp : partitions) {
      const auto found = ledger_->find(tp);
      if (found != ledger_->end()) starts[tp] = found->second;
    }
    return starts;
  }
  void OnRevoked(const std::vector<TopicPartition>& partitions) override {
    revoked.insert(revoked.end(), partitions.begin(), partitions.end());
    for (const TopicPartition& tp : partitions) {
      const auto found = next.find(tp);
      if (found != next.end()) (*ledger_)[tp] = found->second;
    }
  }
  void OnLost(const std::vector<TopicPartition>& partitions) override {
    lost.insert(lost.end(), partitions.begin(), partitions.end());
  }

  // The sink: records every delivered record and checks its payload.
  void Deliver(const Message& m) {
    const TopicPartition tp{std::string(m.topic), m.partition};
    EXPECT_EQ(m.payload, Payload(m.partition, static_cast<int>(m.offset)));
    EXPECT_FALSE(m.key_is_null);
    EXPECT_GT(m.timestamp_ms, 0);
    records[tp].push_back(m.offset);
    next[tp] = m.offset + 1;
  }

  std::vector<TopicPartition> assigned, revoked, lost;
  std::map<TopicPartition, std::vector<int64_t>> records;
  std::map<TopicPartition, int64_t> next;

 private:
  std::map<TopicPartition, int64_t>* ledger_;
};

size_t Total(const LedgerListener& listener) {
  size_t total = 0;
  for (const auto& [tp, offsets] : listener.records) total += offsets.size();
  return total;
}

// Polls until `done` or the deadline, then once more for `quiet` to catch extra records.
void PollUntil(Consumer& consumer, LedgerListener& listener, const std::function<bool()>& done,
               milliseconds quiet = milliseconds(1500)) {
  const auto sink = [&](const Message& m) { listener.Deliver(m); };
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    auto polled = consumer.Poll(milliseconds(200), 1000, sink);
    ASSERT_TRUE(polled.ok()) << polled.status().ToString();
  }
  const auto quiet_end = std::chrono::steady_clock::now() + quiet;
  while (std::chrono::steady_clock::now() < quiet_end) {
    auto polled = consumer.Poll(milliseconds(100), 1000, sink);
    ASSERT_TRUE(polled.ok()) << polled.status().ToString();
  }
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> offsets;
  for (int64_t o = from; o < to; ++o) offsets.push_back(o);
  return offsets;
}

ConsumerConfig StaticConfig(const std::string& bootstrap, const std::string& topic,
                            int replica_count, int ordinal) {
  ConsumerConfig config;
  config.bootstrap_servers = bootstrap;
  config.group_id = topic + "-group";
  config.assignment = ConsumerConfig::Assignment::kStatic;
  config.replica_count = replica_count;
  config.ordinal = ordinal;
  config.topics = {topic};
  config.fetch_min_bytes = 1;
  config.fetch_max_wait_ms = 100;
  return config;
}

TEST(KafkaConsumerTest, StaticModeOwnsItsModuloPartitionsFromTheLedgerOffsets) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-static");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 6).ok()) << CreateTopic(bootstrap, topic, 6).ToString();
  for (int32_t p = 0; p < 6; ++p) ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, p, 10));
  EXPECT_EQ(PartitionCount(bootstrap, topic).ValueOrDie(), 6);

  std::map<TopicPartition, int64_t> ledger{{{topic, 1}, 5}, {{topic, 2}, 7}};
  LedgerListener listener(&ledger);
  auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 3, 1), &listener);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  PollUntil(**consumer, listener, [&] { return Total(listener) >= 15; });

  const std::vector<TopicPartition> owned{{topic, 1}, {topic, 4}};
  EXPECT_EQ(listener.assigned, owned);
  EXPECT_EQ((*consumer)->Assignment(), owned);
  EXPECT_EQ(listener.records.size(), 2u);
  EXPECT_EQ((listener.records[{topic, 1}]), Range(5, 10)) << "starts at the ledger offset";
  EXPECT_EQ((listener.records[{topic, 4}]), Range(0, 10)) << "no ledger offset: earliest";
  EXPECT_EQ((*consumer)->gap_records_total(), 0);
  for (const PartitionLag& lag : (*consumer)->Lag()) {
    EXPECT_EQ(lag.position, 10) << ToString(lag.partition);
    EXPECT_EQ(lag.high_watermark, 10) << ToString(lag.partition);
    EXPECT_EQ(lag.lag, 0) << ToString(lag.partition);
  }
  ASSERT_TRUE((*consumer)->Close().ok());
  EXPECT_EQ(listener.revoked, owned);
  EXPECT_TRUE((*consumer)->Close().ok()) << "idempotent";
}

// Both group protocols: classic (cooperative-sticky in the client) and KIP-848 (the broker
// assigns; its session timeout comes from the harness broker's group.consumer.* settings).
class GroupHandOverTest : public ::testing::TestWithParam<ConsumerConfig::GroupProtocol> {};

TEST_P(GroupHandOverTest, GroupModeHandsPartitionsOverAtTheLedgerOffsetWithoutDuplicates) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-group");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 4).ok()) << CreateTopic(bootstrap, topic, 4).ToString();
  for (int32_t p = 0; p < 4; ++p) ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, p, 25));

  ConsumerConfig config;
  config.bootstrap_servers = bootstrap;
  config.group_id = topic + "-group";
  config.topics = {topic};
  config.fetch_min_bytes = 1;
  config.fetch_max_wait_ms = 100;
  config.group_protocol = GetParam();
  if (GetParam() == ConsumerConfig::GroupProtocol::kClassic) {
    config.properties = {{"session.timeout.ms", "10000"}, {"heartbeat.interval.ms", "500"}};
  }

  std::map<TopicPartition, int64_t> ledger;
  LedgerListener first_listener(&ledger);
  LedgerListener second_listener(&ledger);
  auto first = Consumer::Make(config, &first_listener);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  PollUntil(**first, first_listener, [&] { return Total(first_listener) >= 100; });
  ASSERT_EQ((*first)->Assignment().size(), 4u);
  ASSERT_EQ(Total(first_listener), 100u);

  auto second = Consumer::Make(config, &second_listener);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  const auto sink1 = [&](const Message& m) { first_listener.Deliver(m); };
  const auto sink2 = [&](const Message& m) { second_listener.Deliver(m); };
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while ((*second)->Assignment().empty() || (*first)->Assignment().size() == 4u) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the second consumer never joined";
    ASSERT_TRUE((*first)->Poll(milliseconds(100), 1000, sink1).ok());
    ASSERT_TRUE((*second)->Poll(milliseconds(100), 1000, sink2).ok());
  }
  // Both joined: produce more, which each must read from where the other left off.
  for (int32_t p = 0; p < 4; ++p) ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, p, 25, 25));
  const auto drain_end = std::chrono::steady_clock::now() + seconds(60);
  while (Total(first_listener) + Total(second_listener) < 200 &&
         std::chrono::steady_clock::now() < drain_end) {
    ASSERT_TRUE((*first)->Poll(milliseconds(100), 1000, sink1).ok());
    ASSERT_TRUE((*second)->Poll(milliseconds(100), 1000, sink2).ok());
  }
  for (int i = 0; i < 10; ++i) {  // anything more would be a duplicate
    ASSERT_TRUE((*first)->Poll(milliseconds(100), 1000, sink1).ok());
    ASSERT_TRUE((*second)->Poll(milliseconds(100), 1000, sink2).ok());
  }

  const std::vector<TopicPartition> a = (*first)->Assignment();
  const std::vector<TopicPartition> b = (*second)->Assignment();
  std::set<TopicPartition> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  EXPECT_EQ(all.size(), 4u) << "disjoint and covering";
  EXPECT_EQ(a.size() + b.size(), 4u);
  EXPECT_FALSE(b.empty());
  EXPECT_EQ(std::set<TopicPartition>(first_listener.revoked.begin(), first_listener.revoked.end()),
            std::set<TopicPartition>(b.begin(), b.end()))
      << "the first consumer was told before the moved partitions left";
  EXPECT_TRUE(first_listener.lost.empty());

  EXPECT_EQ(Total(first_listener) + Total(second_listener), 200u);
  for (int32_t p = 0; p < 4; ++p) {
    const TopicPartition tp{topic, p};
    std::vector<int64_t> offsets = first_listener.records[tp];
    const std::vector<int64_t>& more = second_listener.records[tp];
    offsets.insert(offsets.end(), more.begin(), more.end());
    EXPECT_EQ(offsets, Range(0, 50)) << ToString(tp) << ": each offset exactly once, in order";
  }
  ASSERT_TRUE((*second)->Close().ok());
  ASSERT_TRUE((*first)->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(Protocols, GroupHandOverTest,
                         ::testing::Values(ConsumerConfig::GroupProtocol::kClassic,
                                           ConsumerConfig::GroupProtocol::kConsumer),
                         [](const auto& protocol) {
                           return protocol.param == ConsumerConfig::GroupProtocol::kClassic
                                      ? "Classic"
                                      : "Consumer";
                         });

TEST(KafkaConsumerTest, PauseStopsOnePartitionAndResumeRestoresIt) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-pause");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 2).ok()) << CreateTopic(bootstrap, topic, 2).ToString();
  for (int32_t p = 0; p < 2; ++p) ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, p, 20));

  std::map<TopicPartition, int64_t> ledger;
  LedgerListener listener(&ledger);
  auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 1, 0), &listener);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  // Read a little of both, then pause partition 0 with records of it likely prefetched.
  PollUntil(
      **consumer, listener, [&] { return listener.records.size() == 2; }, milliseconds(0));
  ASSERT_TRUE((*consumer)->Pause({{topic, 0}}).ok());
  const size_t before_pause = listener.records[{topic, 0}].size();
  ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, 0, 10, 20));
  ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, 1, 10, 20));
  PollUntil(**consumer, listener, [&] { return listener.records[{topic, 1}].size() == 30; });
  EXPECT_EQ((listener.records[{topic, 1}]), Range(0, 30)) << "the other partition flows";
  EXPECT_EQ((listener.records[{topic, 0}].size()), before_pause) << "nothing while paused";

  ASSERT_TRUE((*consumer)->Resume({{topic, 0}}).ok());
  PollUntil(**consumer, listener, [&] { return listener.records[{topic, 0}].size() >= 30; });
  EXPECT_EQ((listener.records[{topic, 0}]), Range(0, 30)) << "resumed with nothing lost";
}

TEST(KafkaConsumerTest, LedgerOffsetBelowTheLogStartResetsToEarliestAndCountsTheGap) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-stale");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 1).ok()) << CreateTopic(bootstrap, topic, 1).ToString();
  ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, 0, 20));
  ASSERT_NO_FATAL_FAILURE(DeleteRecords(bootstrap, topic, 0, 8));
  const auto watermarks = Watermarks(bootstrap, topic, 0);
  ASSERT_TRUE(watermarks.ok()) << watermarks.status().ToString();
  ASSERT_EQ(*watermarks, std::make_pair(int64_t{8}, int64_t{20}));

  std::map<TopicPartition, int64_t> ledger{{{topic, 0}, 3}};
  LedgerListener listener(&ledger);
  auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 1, 0), &listener);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  PollUntil(**consumer, listener, [&] { return Total(listener) >= 12; });
  EXPECT_EQ((listener.records[{topic, 0}]), Range(8, 20));
  EXPECT_EQ((*consumer)->gap_records_total(), 5) << "offsets 3..7 were gone";
}

TEST(KafkaConsumerTest, RecordsDeletedUnderAPausedConsumerAreCountedAsAGap) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-retention");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 1).ok()) << CreateTopic(bootstrap, topic, 1).ToString();
  ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, 0, 20));

  std::map<TopicPartition, int64_t> ledger{{{topic, 0}, 0}};
  LedgerListener listener(&ledger);
  auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 1, 0), &listener);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  PollUntil(
      **consumer, listener, [&] { return Total(listener) >= 20; }, milliseconds(0));
  // Paused at offset 20 (backpressure), retention removes 20..24 of the newer records.
  ASSERT_TRUE((*consumer)->Pause({{topic, 0}}).ok());
  ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, 0, 10, 20));
  ASSERT_NO_FATAL_FAILURE(DeleteRecords(bootstrap, topic, 0, 25));
  PollUntil(
      **consumer, listener, [] { return true; }, milliseconds(500));
  ASSERT_TRUE((*consumer)->Resume({{topic, 0}}).ok());
  PollUntil(**consumer, listener, [&] { return Total(listener) >= 25; });

  std::vector<int64_t> expected = Range(0, 20);
  for (int64_t o = 25; o < 30; ++o) expected.push_back(o);
  EXPECT_EQ((listener.records[{topic, 0}]), expected);
  EXPECT_EQ((*consumer)->gap_records_total(), 5) << "offsets 20..24 were deleted unread";
}

TEST(KafkaConsumerTest, OffsetOutOfRangeWhileFetchingResetsOnceWithoutLooping) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-range");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 1).ok()) << CreateTopic(bootstrap, topic, 1).ToString();
  ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, 0, 10));

  // A ledger offset past the log end (the topic was recreated): the broker reports it out of
  // range, and the consumer resumes at the reset point; nothing was skipped, so no gap.
  std::map<TopicPartition, int64_t> ledger{{{topic, 0}, 500}};
  LedgerListener listener(&ledger);
  auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 1, 0), &listener);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  PollUntil(**consumer, listener, [&] { return Total(listener) >= 10; });
  EXPECT_EQ((listener.records[{topic, 0}]), Range(0, 10));
  EXPECT_EQ((*consumer)->gap_records_total(), 0);
}

TEST(KafkaConsumerTest, CommittedOffsetsAreVisibleToANewConsumer) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-commit");
  ASSERT_TRUE(CreateTopic(bootstrap, topic, 2).ok()) << CreateTopic(bootstrap, topic, 2).ToString();
  for (int32_t p = 0; p < 2; ++p) ASSERT_NO_FATAL_FAILURE(Produce(bootstrap, topic, p, 10));

  std::map<TopicPartition, int64_t> ledger;
  LedgerListener listener(&ledger);
  {
    auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 1, 0), &listener);
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    PollUntil(
        **consumer, listener, [&] { return Total(listener) >= 20; }, milliseconds(0));
    const Status committed = (*consumer)->CommitOffsets(
        {{{topic, 0}, 7}, {{topic, 1}, 3}, {{topic, 9}, 1} /* not owned: skipped */});
    ASSERT_TRUE(committed.ok()) << committed.ToString();
  }
  LedgerListener other_listener(&ledger);
  auto other = Consumer::Make(StaticConfig(bootstrap, topic, 1, 0), &other_listener);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto committed = (*other)->Committed({{topic, 0}, {topic, 1}}, milliseconds(10000));
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  const std::map<TopicPartition, int64_t> expected{{{topic, 0}, 7}, {{topic, 1}, 3}};
  EXPECT_EQ(*committed, expected);
}

TEST(KafkaConsumerTest, StaticModeOnAMissingTopicIsFatalNamingIt) {
  WEIR_HARNESS_SETTING(bootstrap, "WEIR_TEST_KAFKA_BOOTSTRAP");
  const std::string topic = testing::UniqueName("it-kafka-missing");
  std::map<TopicPartition, int64_t> ledger;
  LedgerListener listener(&ledger);
  auto consumer = Consumer::Make(StaticConfig(bootstrap, topic, 2, 0), &listener);
  ASSERT_FALSE(consumer.ok());
  EXPECT_EQ(ClassOf(consumer.status()), ErrorClass::kFatal);
  EXPECT_NE(consumer.status().message().find("topic " + topic + " does not exist"),
            std::string::npos)
      << consumer.status().ToString();
  EXPECT_TRUE(listener.assigned.empty());

  const auto count = PartitionCount(bootstrap, topic);
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(ClassOf(count.status()), ErrorClass::kFatal);
}

}  // namespace
}  // namespace weir::kafka
