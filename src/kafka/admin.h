// Small Kafka admin calls, for startup checks, tests and the demo. Each call that takes a
// bootstrap address opens and closes its own short-lived client; any thread.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include <map>

#include "base/status.h"
#include "kafka/consumer_config.h"

namespace weir::kafka {

constexpr std::chrono::milliseconds kAdminTimeout{30000};

// The number of partitions of `topic`; fatal "topic X does not exist" when it is missing.
// Waits at most `timeout` for the broker's answer.
Result<int> PartitionCount(const std::string& bootstrap, const std::string& topic,
                           std::chrono::milliseconds timeout = kAdminTimeout);
// The same through an existing client `rk` (a consumer or producer).
Result<int> PartitionCount(rd_kafka_t* rk, const std::string& topic,
                           std::chrono::milliseconds timeout = kAdminTimeout);

// Creates `topic` with `partitions` partitions (replication factor 1) and waits until its
// metadata shows every partition with a leader. An existing topic is OK.
Status CreateTopic(const std::string& bootstrap, const std::string& topic, int partitions);

// The low and high watermarks (log start, log end) of one partition, from its leader.
Result<std::pair<int64_t, int64_t>> Watermarks(const std::string& bootstrap,
                                               const std::string& topic, int32_t partition);

// How many brokers the cluster lists to a new client made from `config`'s connection properties
// (a Metadata request for no topic, answered within `timeout`).
Result<int> ClusterBrokers(const ConsumerConfig& config, std::chrono::milliseconds timeout);

// The committed next offsets of `config.group_id` for every partition of `topic` (partitions
// without one are absent), read by a consumer handle that never joins the group, so asking
// does not rebalance the group's members. Uses `config`'s connection properties.
Result<std::map<int32_t, int64_t>> GroupCommittedOffsets(
    const ConsumerConfig& config, const std::string& topic,
    std::chrono::milliseconds timeout = kAdminTimeout);

// The same, retrying retriable errors (a group's coordinator not ready yet: "Not coordinator"
// right after the group's first use; a broker restarting) every half second until `budget`
// has passed; each attempt's own timeout ends within the budget too.
Result<std::map<int32_t, int64_t>> GroupCommittedOffsetsWithin(const ConsumerConfig& config,
                                                               const std::string& topic,
                                                               std::chrono::milliseconds budget);

}  // namespace weir::kafka
