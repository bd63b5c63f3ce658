#include "kafka/admin.h"

#include <algorithm>
#include <thread>

#include "kafka/kafka_error.h"
#include "kafka/rdkafka_handles.h"
#include "kafka/rdkafka_log.h"

namespace weir::kafka {
namespace {

struct TopicDestroy {
  void operator()(rd_kafka_topic_t* topic) const { rd_kafka_topic_destroy(topic); }
};
struct NewTopicDestroy {
  void operator()(rd_kafka_NewTopic_t* topic) const { rd_kafka_NewTopic_destroy(topic); }
};

int TimeoutMs(std::chrono::milliseconds timeout) { return static_cast<int>(timeout.count()); }

// A producer handle: the lightest client that can do metadata, watermark and admin calls.
Result<RdKafkaPtr> Connect(const std::string& bootstrap) {
  RdKafkaConfPtr conf(rd_kafka_conf_new());
  char error[512] = {};
  for (const auto& [name, value] :
       {std::pair<const char*, std::string>{"bootstrap.servers", bootstrap},
        {"allow.auto.create.topics", "false"},
        {"log_level", "3"}}) {
    if (rd_kafka_conf_set(conf.get(), name, value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      return ClassifiedError(
          ErrorClass::kFatal, "librdkafka", "CONF_INVALID",
          std::string("librdkafka refused property ") + name + "=" + value + ": " + error);
    }
  }
  RouteLogToWeir(conf.get());
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf.get(), error, sizeof error);
  if (rk == nullptr) {
    return ClassifiedError(ErrorClass::kFatal, "librdkafka", "_INVALID_ARG",
                           std::string("cannot create a Kafka client: ") + error);
  }
  conf.release();  // rd_kafka_new took ownership
  return RdKafkaPtr(rk);
}

}  // namespace

Result<int> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                           std::chrono::milliseconds timeout) {
  std::unique_ptr<rd_kafka_topic_t, TopicDestroy> handle(
      rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  if (handle == nullptr) {
    return KafkaError(rd_kafka_last_error(), "topic " + topic + ": cannot make a topic handle");
  }
  const rd_kafka_metadata_t* raw = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, handle.get(), &raw, TimeoutMs(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(err, "topic " + topic + ": metadata request failed");
  }
  MetadataPtr metadata(raw);
  for (int i = 0; i < metadata->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& found = metadata->topics[i];
    if (topic != found.topic) continue;
    if (found.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
        found.err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
      return ClassifiedError(ErrorClass::kFatal, "librdkafka", rd_kafka_err2name(found.err),
                             "topic " + topic + " does not exist");
    }
    if (found.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaError(found.err, "topic " + topic + ": metadata");
    }
    return found.partition_cnt;
  }
  return ClassifiedError(ErrorClass::kFatal, "librdkafka", "UNKNOWN_TOPIC_OR_PART",
                         "topic " + topic + " does not exist");
}

Result<int> PartitionCount(const std::string& bootstrap, const std::string& topic,
                           std::chrono::milliseconds timeout) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaPtr rk, Connect(bootstrap));
  return PartitionCount(rk.get(), topic, timeout);
}

Status CreateTopic(const std::string& bootstrap, const std::string& topic, int partitions) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaPtr rk, Connect(bootstrap));
  char error[512] = {};
  std::unique_ptr<rd_kafka_NewTopic_t, NewTopicDestroy> new_topic(
      rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, error, sizeof error));
  if (new_topic == nullptr) {
    return ClassifiedError(ErrorClass::kFatal, "librdkafka", "_INVALID_ARG",
                           "topic " + topic + ": " + error);
  }
  QueuePtr queue(rd_kafka_queue_new(rk.get()));
  rd_kafka_NewTopic_t* topics[] = {new_topic.get()};
  rd_kafka_CreateTopics(rk.get(), topics, 1, nullptr, queue.get());
  EventPtr event(rd_kafka_queue_poll(queue.get(), TimeoutMs(kAdminTimeout)));
  if (event == nullptr) {
    return KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT, "topic " + topic + ": create");
  }
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(rd_kafka_event_error(event.get()), "topic " + topic + ": create");
  }
  size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  for (size_t i = 0; i < count; ++i) {
    const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      return KafkaError(
          err, "topic " + topic + ": create: " + rd_kafka_topic_result_error_string(results[i]));
    }
  }
  // The broker answers before every partition has a leader; wait for the metadata to show it.
  const auto deadline = std::chrono::steady_clock::now() + kAdminTimeout;
  while (true) {
    Result<int> count_now = PartitionCount(rk.get(), topic, std::chrono::milliseconds(5000));
    if (count_now.ok() && *count_now >= partitions) return Status::OK();
    if (std::chrono::steady_clock::now() > deadline) {
      return count_now.ok() ? KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT,
                                         "topic " + topic + ": partitions not ready")
                            : count_now.status();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& bootstrap,
                                               const std::string& topic, int32_t partition) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaPtr rk, Connect(bootstrap));
  int64_t low = -1;
  int64_t high = -1;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      rk.get(), topic.c_str(), partition, &low, &high, TimeoutMs(kAdminTimeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(
        err, "topic " + topic + " partition " + std::to_string(partition) + ": watermarks");
  }
  return std::make_pair(low, high);
}

namespace {

// A short-lived consumer handle with `config`'s connection properties that never joins the
// group (it subscribes to nothing).
Result<RdKafkaPtr> ClientOf(const ConsumerConfig& config) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaConfPtr conf, MakeConsumerConf(config));
  RouteLogToWeir(conf.get());
  char error[512] = {};
  rd_kafka_t* raw = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), error, sizeof error);
  if (raw == nullptr) {
    return ClassifiedError(ErrorClass::kFatal, "librdkafka", "_INVALID_ARG",
                           std::string("cannot create a Kafka client: ") + error);
  }
  conf.release();  // rd_kafka_new took ownership
  return RdKafkaPtr(raw);
}

}  // namespace

Result<int> ClusterBrokers(const ConsumerConfig& config, std::chrono::milliseconds timeout) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaPtr rk, ClientOf(config));
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk.get(), /*all_topics=*/0, nullptr, &metadata, TimeoutMs(timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError(err, "asking the cluster for brokers");
  const int brokers = metadata->broker_cnt;
  rd_kafka_metadata_destroy(metadata);
  return brokers;
}

Result<std::map<int32_t, int64_t>> GroupCommittedOffsets(const ConsumerConfig& config,
                                                         const std::string& topic,
                                                         std::chrono::milliseconds timeout) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaPtr rk, ClientOf(config));
  WEIR_ASSIGN_OR_RAISE(const int partitions, PartitionCount(rk.get(), topic, timeout));
  PartitionListPtr list(rd_kafka_topic_partition_list_new(partitions));
  for (int32_t p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p);
  }
  WEIR_RETURN_NOT_OK(CheckKafka(rd_kafka_committed(rk.get(), list.get(), TimeoutMs(timeout)),
                                "reading the committed offsets of group " + config.group_id));
  std::map<int32_t, int64_t> committed;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& elem = list->elems[i];
    if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaError(elem.err, "reading the committed offset of " + topic + "[" +
                                      std::to_string(elem.partition) + "]");
    }
    if (elem.offset >= 0) committed[elem.partition] = elem.offset;
  }
  rd_kafka_consumer_close(rk.get());
  return committed;
}

Result<std::map<int32_t, int64_t>> GroupCommittedOffsetsWithin(const ConsumerConfig& config,
                                                               const std::string& topic,
                                                               std::chrono::milliseconds budget) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + budget;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto offsets = GroupCommittedOffsets(
        config, topic, std::max(std::chrono::milliseconds(100), std::min(left, kAdminTimeout)));
    if (offsets.ok() || ClassOf(offsets.status()) != ErrorClass::kRetriable ||
        Clock::now() + std::chrono::milliseconds(500) >= deadline) {
      return offsets;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace weir::kafka
