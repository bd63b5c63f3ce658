// The Kafka consumer's settings as a plain struct (the config stage fills it), and the one
// function that turns them into a librdkafka configuration.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "kafka/rdkafka_handles.h"

namespace weir::kafka {

struct ConsumerConfig {
  std::string bootstrap_servers;
  std::string group_id;  // required in both modes; in static mode it only stores offsets
  // kGroup: a consumer group with cooperative-sticky rebalancing. kStatic: this replica owns
  // partition p of every topic when p % replica_count == ordinal.
  enum class Assignment { kGroup, kStatic } assignment = Assignment::kGroup;
  // Group mode only. kClassic: the classic protocol with cooperative-sticky assignment.
  // kConsumer: KIP-848 (group.protocol=consumer); the broker assigns, incrementally.
  enum class GroupProtocol { kClassic, kConsumer } group_protocol = GroupProtocol::kClassic;
  int replica_count = 1;
  int ordinal = 0;
  // Where a partition starts when the ledger has no offset for it, and where it resumes when
  // its ledger offset is no longer in the log: "earliest" or "latest".
  std::string auto_offset_reset = "earliest";
  std::string isolation_level = "read_committed";
  int fetch_min_bytes = 1048576;
  int fetch_max_wait_ms = 500;
  // librdkafka properties, applied last. Refused: enable.auto.commit and
  // enable.auto.offset.store other than "false", auto.offset.reset (use auto_offset_reset),
  // group.protocol (use group_protocol), in classic group mode partition.assignment.strategy
  // other than "cooperative-sticky", and under the consumer protocol the properties it moves
  // to the broker (partition.assignment.strategy, session.timeout.ms, heartbeat.interval.ms).
  std::map<std::string, std::string> properties;
  std::vector<std::string> topics;
  // Bounded prefetch (librdkafka counts the whole consumer queue). librdkafka 2.0 stops
  // fetching once the queue is over this bound and waits before fetching again, so the bound
  // must hold more than that pause's worth of records: 16 MiB capped weir at ~20k events/s of
  // 1.4 KB, 64 MiB lets the decoder set the pace (bench/e2e_bench.py).
  int64_t queued_max_messages_kbytes = 65536;
  // How long librdkafka waits to fetch again once its queue is over that bound; its default of
  // 1000 ms let a 32 MiB queue run dry between fetches: the poll thread waited on Kafka for 38
  // of 59 s of the reference benchmark, at half the throughput of 10 ms (bench/README.md).
  int fetch_queue_backoff_ms = 10;
  std::chrono::milliseconds statistics_interval{0};  // 0: no statistics
};

// True when `policy` ("earliest"/"smallest"/"beginning") resets to the start of the log,
// false for "latest"/"largest"/"end"; an error for anything else.
Result<bool> ResetsToEarliest(const std::string& policy);

// Validates `config` and builds the librdkafka configuration: bootstrap.servers, group.id,
// enable.auto.commit=false, enable.auto.offset.store=false, isolation.level, fetch.min.bytes,
// fetch.wait.max.ms, queued.max.messages.kbytes, fetch.queue.backoff.ms, statistics.interval.ms,
// in group mode
// partition.assignment.strategy=cooperative-sticky, then `properties`.
// auto.offset.reset is set to "error": every assigned partition gets an explicit start offset
// (its ledger offset, or the auto_offset_reset point), and an offset that falls out of the log
// is reset by Consumer itself so the skipped records are counted (see Consumer).
// Errors are fatal and name the setting or property and its value.
Result<RdKafkaConfPtr> MakeConsumerConf(const ConsumerConfig& config);

}  // namespace weir::kafka
