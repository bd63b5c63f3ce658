// RAII owners for librdkafka's C handles: every handle has exactly one owner, released by the
// matching destroy call. A consumer `rd_kafka_t` must be closed (rd_kafka_consumer_close) before
// its RdKafkaPtr is reset; Consumer does that itself.
#pragma once

#include <librdkafka/rdkafka.h>

#include <memory>

namespace weir::kafka {

struct RdKafkaDestroy {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct RdKafkaConfDestroy {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct PartitionListDestroy {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
struct MessageDestroy {
  void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
};
struct RdKafkaErrorDestroy {
  void operator()(rd_kafka_error_t* error) const { rd_kafka_error_destroy(error); }
};
struct QueueDestroy {
  void operator()(rd_kafka_queue_t* queue) const { rd_kafka_queue_destroy(queue); }
};
struct EventDestroy {
  void operator()(rd_kafka_event_t* event) const { rd_kafka_event_destroy(event); }
};
struct MetadataDestroy {
  void operator()(const rd_kafka_metadata_t* metadata) const {
    rd_kafka_metadata_destroy(metadata);
  }
};

using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDestroy>;
using RdKafkaConfPtr = std::unique_ptr<rd_kafka_conf_t, RdKafkaConfDestroy>;
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroy>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDestroy>;
using RdKafkaErrorPtr = std::unique_ptr<rd_kafka_error_t, RdKafkaErrorDestroy>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, QueueDestroy>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDestroy>;
using MetadataPtr = std::unique_ptr<const rd_kafka_metadata_t, MetadataDestroy>;

}  // namespace weir::kafka
