#include "kafka/consumer_config.h"

#include <string_view>
#include <utility>

namespace weir::kafka {
namespace {

Status ConfigError(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "librdkafka", "_INVALID_ARG", std::move(message));
}

Status Set(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
  char error[512] = {};
  const rd_kafka_conf_res_t res =
      rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error);
  if (res == RD_KAFKA_CONF_OK) return Status::OK();
  return ClassifiedError(ErrorClass::kFatal, "librdkafka",
                         res == RD_KAFKA_CONF_UNKNOWN ? "CONF_UNKNOWN" : "CONF_INVALID",
                         "librdkafka refused property " + name + "=" + value + ": " + error);
}

// A passthrough property that would break weir's offset handling, with the value weir needs
// (empty: may not be set at all).
struct Forbidden {
  std::string_view name;
  std::string_view required;
  std::string_view reason;
  bool group_only;
};

constexpr Forbidden kForbidden[] = {
    {"enable.auto.commit", "false", "weir commits Kafka offsets itself, after the lake commit",
     false},
    {"enable.auto.offset.store", "false",
     "weir commits Kafka offsets itself, after the lake commit", false},
    {"auto.offset.reset", "", "use the auto_offset_reset setting (weir resets and counts gaps)",
     false},
    {"partition.assignment.strategy", "cooperative-sticky",
     "group mode needs cooperative rebalancing to flush revoked partitions", true},
    {"group.protocol", "", "use the group_protocol setting", false},
};

// What KIP-848 moves to the broker: librdkafka refuses these under group.protocol=consumer.
constexpr std::string_view kBrokerSideUnderConsumerProtocol[] = {
    "partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms"};

}  // namespace

Result<bool> ResetsToEarliest(const std::string& policy) {
  if (policy == "earliest" || policy == "smallest" || policy == "beginning") return true;
  if (policy == "latest" || policy == "largest" || policy == "end") return false;
  return ConfigError("auto_offset_reset must be earliest or latest, got \"" + policy + "\"");
}

Result<RdKafkaConfPtr> MakeConsumerConf(const ConsumerConfig& config) {
  const bool group = config.assignment == ConsumerConfig::Assignment::kGroup;
  if (config.bootstrap_servers.empty()) return ConfigError("bootstrap_servers is empty");
  if (config.group_id.empty()) return ConfigError("group_id is empty");
  if (config.topics.empty()) return ConfigError("topics is empty");
  for (const std::string& topic : config.topics) {
    if (topic.empty()) return ConfigError("topics contains an empty topic name");
  }
  if (!group &&
      (config.replica_count < 1 || config.ordinal < 0 || config.ordinal >= config.replica_count)) {
    return ConfigError("static assignment needs 0 <= ordinal < replica_count, got ordinal " +
                       std::to_string(config.ordinal) + " and replica_count " +
                       std::to_string(config.replica_count));
  }
  WEIR_RETURN_NOT_OK(ResetsToEarliest(config.auto_offset_reset).status());
  const bool consumer_protocol =
      group && config.group_protocol == ConsumerConfig::GroupProtocol::kConsumer;
  if (!group && config.group_protocol == ConsumerConfig::GroupProtocol::kConsumer) {
    return ConfigError("group_protocol consumer needs group assignment (static joins no group)");
  }
  for (const auto& [name, value] : config.properties) {
    if (consumer_protocol) {
      for (std::string_view broker_side : kBrokerSideUnderConsumerProtocol) {
        if (name != broker_side) continue;
        return ConfigError("kafka property " + name + "=" + value +
                           " is not allowed with group_protocol consumer: the broker's group "
                           "configuration decides it (KIP-848)");
      }
    }
    for (const Forbidden& forbidden : kForbidden) {
      if (consumer_protocol && name == "partition.assignment.strategy") continue;
      if (name != forbidden.name || (forbidden.group_only && !group)) continue;
      if (!forbidden.required.empty() && value == forbidden.required) continue;
      return ConfigError("kafka property " + name + "=" + value +
                         " is not allowed: " + std::string(forbidden.reason));
    }
  }

  RdKafkaConfPtr conf(rd_kafka_conf_new());
  const std::pair<std::string, std::string> settings[] = {
      {"bootstrap.servers", config.bootstrap_servers},
      {"group.id", config.group_id},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "error"},
      {"isolation.level", config.isolation_level},
      {"fetch.min.bytes", std::to_string(config.fetch_min_bytes)},
      {"fetch.wait.max.ms", std::to_string(config.fetch_max_wait_ms)},
      {"queued.max.messages.kbytes", std::to_string(config.queued_max_messages_kbytes)},
      {"fetch.queue.backoff.ms", std::to_string(config.fetch_queue_backoff_ms)},
      {"statistics.interval.ms", std::to_string(config.statistics_interval.count())},
  };
  for (const auto& [name, value] : settings) {
    WEIR_RETURN_NOT_OK(Set(conf.get(), name, value));
  }
  if (consumer_protocol) {
    WEIR_RETURN_NOT_OK(Set(conf.get(), "group.protocol", "consumer"));
  } else if (group) {
    WEIR_RETURN_NOT_OK(Set(conf.get(), "partition.assignment.strategy", "cooperative-sticky"));
  }
  for (const auto& [name, value] : config.properties) {
    WEIR_RETURN_NOT_OK(Set(conf.get(), name, value));
  }
  return conf;
}

}  // namespace weir::kafka
