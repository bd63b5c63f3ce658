// The Kafka consumer: group (cooperative-sticky) or static partition assignment, every assigned
// partition started at the offset the ledger gives, stale offsets reset with the gap counted.
//
// Threading: Make and Close may run on any thread (not concurrently with anything else); every
// other member is called from one poll thread. AssignmentListener callbacks run on that thread,
// inside Poll (rebalances, the static assignment on the first Poll) or inside Close (the final
// revoke). librdkafka's log lines go to spdlog from its own threads.
//
// Lifecycle: Make → Poll ... → Close (the destructor closes too). The listener must outlive the
// consumer. After Poll returns an error the consumer stays failed (every later Poll returns the
// same error): close it, and make a new one after a backoff if the error is retriable.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kafka/consumer_config.h"
#include "kafka/rdkafka_handles.h"

namespace weir::kafka {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const TopicPartition&) const = default;
};

// "topic[partition]", for logs and error context.
std::string ToString(const TopicPartition& tp);

// One record; its views are valid only during the sink call.
struct Message {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string_view key;
  std::string_view payload;
  int64_t timestamp_ms = -1;  // -1 when the record has none
  bool key_is_null = true;
  // The librdkafka message the views point into (for HeaderValue); null in tests that build
  // a Message by hand.
  const rd_kafka_message_t* native = nullptr;
};

// The value of the last header named `name` (exact, case-sensitive) of `message`; nullopt when
// the record has no such header or its value is null. Valid while the message is.
std::optional<std::string_view> HeaderValue(const Message& message, std::string_view name);

// Consumer lag of one owned partition; -1 where not known yet.
struct PartitionLag {
  TopicPartition partition;
  int64_t position = -1;        // next offset to deliver
  int64_t high_watermark = -1;  // cached from the last fetch
  int64_t lag = -1;             // high_watermark - position
};

// The brokers have been unreachable since `since` (the first transport error of the current
// run of them, as librdkafka reported it), with the newest error's words.
struct BrokerTrouble {
  std::chrono::system_clock::time_point since;
  std::string error;
};

// Told about partitions as they come and go; all calls on the poll thread.
class AssignmentListener {
 public:
  virtual ~AssignmentListener() = default;
  // Newly assigned partitions: returns each one's start offset (the ledger's next_offset). A
  // partition absent from the map starts at the auto_offset_reset point. An error leaves the
  // consumer failed (see the file comment).
  virtual Result<std::map<TopicPartition, int64_t>> OnAssigned(
      const std::vector<TopicPartition>& partitions) = 0;
  // Called before the partitions are released: flush and commit (or abandon) their data here.
  virtual void OnRevoked(const std::vector<TopicPartition>& partitions) = 0;
  // The partitions are already owned by someone else: abandon their data, commit nothing.
  virtual void OnLost(const std::vector<TopicPartition>& partitions) = 0;
};

class Consumer {
 public:
  // Connects, and subscribes (group mode) or checks that every topic exists and works out the
  // owned partitions (static mode; they are assigned on the first Poll). A missing topic in
  // static mode is a fatal error naming it.
  static Result<std::unique_ptr<Consumer>> Make(const ConsumerConfig& config,
                                                AssignmentListener* listener);
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Waits up to `timeout` for records and hands up to `max_messages` of them to `sink`, in
  // offset order per partition; returns how many. Serves rebalances. Partition EOF and
  // transient errors are logged and skipped; fatal errors (librdkafka fatal state,
  // authentication, unknown topic) and listener failures are returned.
  Result<int> Poll(std::chrono::milliseconds timeout, int max_messages,
                   const std::function<void(const Message&)>& sink);

  // Stops / restarts delivery of owned partitions; the consumer stays in the group.
  Status Pause(const std::vector<TopicPartition>& partitions);
  Status Resume(const std::vector<TopicPartition>& partitions);

  // The partitions this consumer owns now.
  std::vector<TopicPartition> Assignment() const;

  // Commits next offsets to Kafka synchronously, for lag tooling only (the lake ledger is the
  // truth). Partitions no longer owned are skipped with a log line.
  Status CommitOffsets(const std::map<TopicPartition, int64_t>& next_offsets);

  // The group's committed next offsets; partitions without one are absent.
  Result<std::map<TopicPartition, int64_t>> Committed(const std::vector<TopicPartition>& partitions,
                                                      std::chrono::milliseconds timeout);

  // Revokes every partition through the listener, leaves the group. Idempotent.
  Status Close();

  // Lag of every owned partition, from cached watermarks (no broker round trip).
  std::vector<PartitionLag> Lag() const;

  // The brokers' trouble: since the first failed connection, once RecheckBrokers found no
  // broker answering; nullopt once a record, an assignment or a recheck shows one answers.
  const std::optional<BrokerTrouble>& broker_trouble() const { return broker_trouble_; }
  // After a failed connection, while in trouble, or when no record came for
  // kBrokerRecheckAfter: asks the cluster for its metadata (at most `timeout`); no answer
  // confirms the trouble, an answer ends it. No-op otherwise.
  //
  // A client can lose every broker for good: librdkafka (2.10 and later) forgets the brokers a
  // Metadata answer leaves out, and a cluster that is starting (a KRaft broker not yet
  // unfenced) answers with none, so the client has nobody left to ask (librdkafka issue 5301).
  // Once the trouble has lasted kWedgedAfter, a new short-lived client asks the bootstrap
  // servers too (at most every kWedgedAfter); when it gets an answer this consumer fails with
  // a retriable "client_wedged" error: the pipeline makes a new consumer, as after any
  // retriable failure, and Close abandons the assignment without a group leave nobody hears.
  void RecheckBrokers(std::chrono::milliseconds timeout);
  static constexpr std::chrono::seconds kWedgedAfter{20};

  // Receives librdkafka's statistics JSON every statistics_interval, on the poll thread.
  void SetStatisticsSink(std::function<void(std::string_view json)> sink);

  // Records skipped because their offsets had left the log (retention, deleted records).
  int64_t gap_records_total() const { return gap_records_total_; }

 private:
  struct PartitionState {
    int64_t next_offset = -1;  // next offset to deliver; -1 until known
    bool paused = false;
    bool dropped_while_paused = false;  // a prefetched record was dropped: seek on resume
    bool blocked = false;               // OnAssigned failed: never delivered
  };
  // Orders TopicPartition and (topic view, partition) keys alike, so a message's partition is
  // found without copying its topic name.
  struct PartitionOrder {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, int32_t>(a.topic, a.partition) <
             std::pair<std::string_view, int32_t>(b.topic, b.partition);
    }
  };
  struct PartitionKey {
    std::string_view topic;
    int32_t partition;
  };

  Consumer(const ConsumerConfig& config, AssignmentListener* listener, bool reset_to_earliest);

  static void RebalanceCallback(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                rd_kafka_topic_partition_list_t* partitions, void* opaque);
  static void ErrorCallback(rd_kafka_t* rk, int err, const char* reason, void* opaque);
  static int StatisticsCallback(rd_kafka_t* rk, char* json, size_t json_len, void* opaque);

  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  void OnError(rd_kafka_resp_err_t err, const char* reason);
  // Asks the listener for start offsets and writes them (ledger offset, checked against the
  // log start, or the reset point) into `partitions`; records the partitions as owned.
  Status StartPartitions(rd_kafka_topic_partition_list_t* partitions);
  // The offset to start from for ledger offset `offset`: itself, or the reset point when the
  // log no longer holds it (the gap is counted).
  Result<int64_t> CheckLedgerOffset(const TopicPartition& tp, int64_t offset);
  Status AssignStatic();
  Status HandleMessageError(const rd_kafka_message_t& message);
  Status RecoverOutOfRange(const TopicPartition& tp, int64_t from);
  void RecordGap(const TopicPartition& tp, int64_t from, int64_t to);
  Result<std::pair<int64_t, int64_t>> QueryWatermarks(const TopicPartition& tp);
  void Fail(Status status);  // remembers the first failure

  const ConsumerConfig config_;
  AssignmentListener* const listener_;
  const bool reset_to_earliest_;
  RdKafkaPtr rk_;
  std::map<TopicPartition, PartitionState, PartitionOrder> owned_;
  std::vector<TopicPartition> static_partitions_;  // static mode: assigned on the first Poll
  bool static_assigned_ = false;
  bool closed_ = false;
  Status failure_;  // sticky: set once, returned by every later Poll
  int64_t gap_records_total_ = 0;
  std::function<void(std::string_view)> statistics_sink_;
  void BrokersAnswered();
  static constexpr std::chrono::seconds kBrokerRecheckAfter{5};
  // When a broker last answered (a record, an assignment, a metadata request).
  std::chrono::system_clock::time_point last_answer_ = std::chrono::system_clock::now();
  std::optional<BrokerTrouble> broker_suspect_;  // a connection failed since the last answer
  std::optional<BrokerTrouble> broker_trouble_;  // confirmed: no broker answered a recheck
  std::chrono::system_clock::time_point last_fresh_probe_{};  // a new client asked the cluster
  bool wedged_ = false;  // the brokers answer a new client but not this one
};

}  // namespace weir::kafka
