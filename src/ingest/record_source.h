// The seam between the pipeline and whatever delivers its records: the Kafka consumer (always,
// for `weir ingest`) or a bounded source such as the file source of `weir ingest --from`
// (src/filesource). A source hands records to the pipeline's sink with their ledger
// coordinates (topic, partition, offset), asks the pipeline's AssignmentListener where each of
// its partitions starts (the offset ledger) and tells it when it is exhausted.
//
// Threading: every member is called from the pipeline's poll thread; the listener callbacks run
// on that thread, inside Poll or Close (as kafka/consumer.h documents for Kafka).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "base/backoff.h"
#include "base/status.h"
#include "kafka/consumer.h"
#include "kafka/consumer_config.h"

namespace weir::ingest {

class RecordSource {
 public:
  virtual ~RecordSource() = default;

  // Waits up to `timeout` for records and hands up to `max_records` of them to `sink`, in
  // offset order per partition; returns how many. The first call assigns the partitions
  // through the listener (which answers each one's ledger offset).
  virtual Result<int> Poll(std::chrono::milliseconds timeout, int max_records,
                           const std::function<void(const kafka::Message&)>& sink) = 0;
  // Stops / restarts delivery of owned partitions (the memory budget).
  virtual Status Pause(const std::vector<kafka::TopicPartition>& partitions) = 0;
  virtual Status Resume(const std::vector<kafka::TopicPartition>& partitions) = 0;
  virtual std::vector<kafka::TopicPartition> Assignment() const = 0;
  // Told each partition's next offset once the lake committed up to it (Kafka: committed to
  // the group for lag tooling; the lake ledger is the truth either way).
  virtual Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>& next_offsets) = 0;
  virtual std::vector<kafka::PartitionLag> Lag() const = 0;
  // Kafka: the brokers' trouble while they are unreachable (rechecked here at most every
  // call, within `timeout`); nullopt when they answer, and always for a bounded source.
  virtual std::optional<kafka::BrokerTrouble> BrokerTrouble(std::chrono::milliseconds /*timeout*/) {
    return std::nullopt;
  }
  // Revokes every partition through the listener. Idempotent.
  virtual Status Close() = 0;
  // A bounded source delivered every record it has: the pipeline flushes, commits and ends.
  // Kafka never is.
  virtual bool Exhausted() const { return false; }
};

// Makes the source of one run of the pipeline (again after a fence or a lost assignment,
// which restart consumption from the ledger).
using RecordSourceFactory =
    std::function<Result<std::unique_ptr<RecordSource>>(kafka::AssignmentListener* listener)>;

// What a failed Poll means, the same in every mode: a fatal error, or a retriable one once the
// retry budget is spent, ends the run (returned, with context); otherwise the pipeline drops
// its source and makes a new one after the returned delay (the new consumer starts every
// partition from the ledger). Records delivered renew the budget.
class SourceRetry {
 public:
  SourceRetry();
  Result<std::chrono::milliseconds> Failed(const Status& polled);
  void Delivered() { backoff_.Reset(); }

 private:
  Backoff backoff_;
};

// The Kafka consumer behind the seam; `statistics` receives librdkafka's statistics JSON.
Result<std::unique_ptr<RecordSource>> MakeKafkaSource(
    const kafka::ConsumerConfig& config, kafka::AssignmentListener* listener,
    std::function<void(std::string_view json)> statistics);

}  // namespace weir::ingest
