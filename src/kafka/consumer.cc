#include "kafka/consumer.h"

#include <algorithm>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "kafka/admin.h"
#include "kafka/kafka_error.h"
#include "kafka/rdkafka_log.h"

namespace weir::kafka {
namespace {

constexpr int kBrokerTimeoutMs = 10000;

std::vector<TopicPartition> ToVector(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> partitions;
  if (list == nullptr) return partitions;
  partitions.reserve(static_cast<size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) {
    partitions.push_back({list->elems[i].topic, list->elems[i].partition});
  }
  return partitions;
}

PartitionListPtr ToList(const std::vector<TopicPartition>& partitions) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  }
  return list;
}

std::string Join(const std::vector<TopicPartition>& partitions) {
  std::string text;
  for (const TopicPartition& tp : partitions) {
    if (!text.empty()) text += ", ";
    text += ToString(tp);
  }
  return text;
}

// The first per-partition error of `list` after a librdkafka call, as a Status.
Status PartitionErrors(const rd_kafka_topic_partition_list_t* list, std::string_view what) {
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& elem = list->elems[i];
    if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaError(elem.err, std::string(what) + " " + ToString({elem.topic, elem.partition}));
    }
  }
  return Status::OK();
}

}  // namespace

std::string ToString(const TopicPartition& tp) {
  return tp.topic + "[" + std::to_string(tp.partition) + "]";
}

std::optional<std::string_view> HeaderValue(const Message& message, std::string_view name) {
  if (message.native == nullptr) return std::nullopt;
  rd_kafka_headers_t* headers = nullptr;
  // librdkafka parses the headers on first access and keeps them with the message; the call
  // does not modify what the views point at.
  if (rd_kafka_message_headers(const_cast<rd_kafka_message_t*>(message.native), &headers) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      headers == nullptr) {
    return std::nullopt;
  }
  const std::string key(name);
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_header_get_last(headers, key.c_str(), &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      value == nullptr) {
    return std::nullopt;
  }
  return std::string_view(static_cast<const char*>(value), size);
}

Consumer::Consumer(const ConsumerConfig& config, AssignmentListener* listener,
                   bool reset_to_earliest)
    : config_(config), listener_(listener), reset_to_earliest_(reset_to_earliest) {}

Result<std::unique_ptr<Consumer>> Consumer::Make(const ConsumerConfig& config,
                                                 AssignmentListener* listener) {
  WEIR_ASSIGN_OR_RAISE(RdKafkaConfPtr conf, MakeConsumerConf(config));
  WEIR_ASSIGN_OR_RAISE(const bool reset_to_earliest, ResetsToEarliest(config.auto_offset_reset));
  std::unique_ptr<Consumer> consumer(new Consumer(config, listener, reset_to_earliest));
  rd_kafka_conf_set_opaque(conf.get(), consumer.get());
  RouteLogToWeir(conf.get());
  rd_kafka_conf_set_error_cb(conf.get(), ErrorCallback);
  rd_kafka_conf_set_stats_cb(conf.get(), StatisticsCallback);
  const bool group = config.assignment == ConsumerConfig::Assignment::kGroup;
  if (group) rd_kafka_conf_set_rebalance_cb(conf.get(), RebalanceCallback);

  char error[512] = {};
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), error, sizeof error);
  if (rk == nullptr) {
    return ClassifiedError(ErrorClass::kFatal, "librdkafka", "_INVALID_ARG",
                           std::string("cannot create the Kafka consumer: ") + error);
  }
  conf.release();  // rd_kafka_new took ownership
  consumer->rk_.reset(rk);
  // Rebalances, errors and statistics are all served by the consumer queue, i.e. by Poll.
  WEIR_RETURN_NOT_OK(CheckKafka(rd_kafka_poll_set_consumer(rk), "redirecting the main queue"));

  if (group) {
    std::vector<TopicPartition> subscription;
    for (const std::string& topic : config.topics) {
      subscription.push_back({topic, RD_KAFKA_PARTITION_UA});
    }
    const rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, ToList(subscription).get());
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError(err, "subscribing");
    return consumer;
  }
  for (const std::string& topic : config.topics) {
    WEIR_ASSIGN_OR_RAISE(const int count, PartitionCount(rk, topic));
    for (int32_t p = 0; p < count; ++p) {
      if (p % config.replica_count == config.ordinal) {
        consumer->static_partitions_.push_back({topic, p});
      }
    }
  }
  if (consumer->static_partitions_.empty()) {
    spdlog::warn("kafka: replica {} of {} owns no partition of {} topic(s)", config.ordinal,
                 config.replica_count, config.topics.size());
  }
  return consumer;
}

Consumer::~Consumer() {
  const Status status = Close();
  if (!status.ok()) spdlog::warn("kafka: closing the consumer: {}", status.ToString());
}

Status Consumer::Close() {
  if (closed_ || rk_ == nullptr) return Status::OK();
  closed_ = true;
  if (wedged_) {
    // No broker hears this client: its partitions are the group's to give again (the
    // coordinator expired the session long ago), and a leave request would wait for nothing.
    if (!owned_.empty()) listener_->OnLost(Assignment());
    owned_.clear();
    rd_kafka_destroy_flags(rk_.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    return Status::OK();
  }
  if (config_.assignment == ConsumerConfig::Assignment::kStatic && !owned_.empty()) {
    listener_->OnRevoked(Assignment());
    owned_.clear();
    const rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), nullptr);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      spdlog::warn("kafka: unassigning: {}", rd_kafka_err2str(err));
    }
  }
  // In group mode this serves the final revoke through OnRebalance, then leaves the group.
  const rd_kafka_resp_err_t err = rd_kafka_consumer_close(rk_.get());
  owned_.clear();
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError(err, "closing the consumer");
  return Status::OK();
}

void Consumer::RebalanceCallback(rd_kafka_t*, rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<Consumer*>(opaque)->OnRebalance(err, partitions);
}

void Consumer::ErrorCallback(rd_kafka_t*, int err, const char* reason, void* opaque) {
  static_cast<Consumer*>(opaque)->OnError(static_cast<rd_kafka_resp_err_t>(err), reason);
}

int Consumer::StatisticsCallback(rd_kafka_t*, char* json, size_t json_len, void* opaque) {
  auto* consumer = static_cast<Consumer*>(opaque);
  if (consumer->statistics_sink_) consumer->statistics_sink_(std::string_view(json, json_len));
  return 0;  // librdkafka frees the JSON
}

void Consumer::OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions) {
  const bool cooperative =
      std::string_view(rd_kafka_rebalance_protocol(rk_.get())) == "COOPERATIVE";
  const std::vector<TopicPartition> changed = ToVector(partitions);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    spdlog::info("kafka: assigned {}", Join(changed));
    BrokersAnswered();  // the group coordinator answered
    const Status started = StartPartitions(partitions);
    const Status assigned =
        cooperative ? KafkaError(rd_kafka_incremental_assign(rk_.get(), partitions), "assigning")
                    : CheckKafka(rd_kafka_assign(rk_.get(), partitions), "assigning");
    if (!started.ok()) {
      // Keep the group protocol going, but never deliver these partitions: Poll fails now.
      for (const TopicPartition& tp : changed) owned_[tp].blocked = true;
      rd_kafka_pause_partitions(rk_.get(), partitions);
      spdlog::error("kafka: starting {}: {}", Join(changed), started.ToString());
      Fail(WithContext(started, "assigning partitions"));
    } else if (!assigned.ok()) {
      Fail(assigned);
    }
    return;
  }
  if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
    if (rd_kafka_assignment_lost(rk_.get())) {
      spdlog::warn("kafka: lost {}", Join(changed));
      listener_->OnLost(changed);
    } else {
      spdlog::info("kafka: revoked {}", Join(changed));
      listener_->OnRevoked(changed);
    }
    for (const TopicPartition& tp : changed) owned_.erase(tp);
    const Status unassigned =
        cooperative
            ? KafkaError(rd_kafka_incremental_unassign(rk_.get(), partitions), "unassigning")
            : CheckKafka(rd_kafka_assign(rk_.get(), nullptr), "unassigning");
    if (!unassigned.ok()) Fail(unassigned);
    return;
  }
  // A rebalance error: the assignment is gone without a revoke; treat it as lost.
  spdlog::error("kafka: rebalance failed: {}", rd_kafka_err2str(err));
  listener_->OnLost(Assignment());
  owned_.clear();
  rd_kafka_assign(rk_.get(), nullptr);
}

void Consumer::OnError(rd_kafka_resp_err_t err, const char* reason) {
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    char fatal[512] = {};
    const rd_kafka_resp_err_t original = rd_kafka_fatal_error(rk_.get(), fatal, sizeof fatal);
    Fail(ClassifiedError(ErrorClass::kFatal, "librdkafka", rd_kafka_err2name(original),
                         std::string("fatal consumer error: ") + fatal));
    return;
  }
  if (ClassifyKafkaError(err) == ErrorClass::kFatal) {
    Fail(ClassifiedError(ErrorClass::kFatal, "librdkafka", rd_kafka_err2name(err), reason));
    return;
  }
  spdlog::warn("kafka: {} ({})", reason, rd_kafka_err2name(err));
  // A failed connection makes the brokers suspect (one of several going away is no trouble:
  // the others serve its partitions once they move); RecheckBrokers decides.
  if (err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
      err == RD_KAFKA_RESP_ERR__RESOLVE) {
    if (!broker_suspect_) broker_suspect_ = BrokerTrouble{std::chrono::system_clock::now(), ""};
    broker_suspect_->error = fmt::format("{} ({})", reason, rd_kafka_err2name(err));
    if (broker_trouble_) broker_trouble_->error = broker_suspect_->error;
  }
}

void Consumer::RecheckBrokers(std::chrono::milliseconds timeout) {
  // Records arriving prove the brokers answer; otherwise ask (librdkafka does not report every
  // lost connection through the error callback: a broker that shuts down cleanly says nothing).
  const auto now = std::chrono::system_clock::now();
  if (!broker_suspect_ && !broker_trouble_ && now - last_answer_ < kBrokerRecheckAfter) return;
  const rd_kafka_metadata_t* metadata = nullptr;
  // Any answer from a broker will do: the cheapest request asks about no topic.
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_.get(), /*all_topics=*/0, nullptr, &metadata,
                                                    static_cast<int>(timeout.count()));
  if (metadata != nullptr) rd_kafka_metadata_destroy(metadata);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (broker_trouble_) spdlog::info("kafka: the brokers answer again");
    BrokersAnswered();
    return;
  }
  if (!broker_trouble_) {
    // Since the first failed connection, or else since a broker last answered.
    broker_trouble_ = broker_suspect_.value_or(BrokerTrouble{last_answer_, ""});
    if (broker_trouble_->error.empty()) broker_trouble_->error = rd_kafka_err2str(err);
    spdlog::warn("kafka: no broker answers ({})", broker_trouble_->error);
  }
  if (wedged_ || now - broker_trouble_->since < kWedgedAfter ||
      now - last_fresh_probe_ < kWedgedAfter) {
    return;
  }
  last_fresh_probe_ = now;
  const auto brokers = ClusterBrokers(
      config_, std::max<std::chrono::milliseconds>(timeout, std::chrono::seconds(5)));
  if (!brokers.ok() || *brokers == 0) return;  // the cluster is down for everyone: wait
  wedged_ = true;
  const auto down_s =
      std::chrono::duration_cast<std::chrono::seconds>(now - broker_trouble_->since).count();
  spdlog::warn(
      "kafka: the brokers answer a new client ({} broker(s)) but not this consumer, unreachable "
      "for {} s (its broker list went empty while the cluster restarted); making a new consumer",
      *brokers, down_s);
  Fail(ClassifiedError(ErrorClass::kRetriable, "kafka", "client_wedged",
                       fmt::format("the consumer lost every broker {} s ago while the cluster "
                                   "answers a new client",
                                   down_s)));
}

void Consumer::BrokersAnswered() {
  last_answer_ = std::chrono::system_clock::now();
  broker_suspect_.reset();
  broker_trouble_.reset();
}

void Consumer::Fail(Status status) {
  if (failure_.ok()) failure_ = std::move(status);
}

Result<std::pair<int64_t, int64_t>> Consumer::QueryWatermarks(const TopicPartition& tp) {
  int64_t low = -1;
  int64_t high = -1;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      rk_.get(), tp.topic.c_str(), tp.partition, &low, &high, kBrokerTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError(err, ToString(tp) + ": watermarks");
  return std::make_pair(low, high);
}

void Consumer::RecordGap(const TopicPartition& tp, int64_t from, int64_t to) {
  gap_records_total_ += to - from;
  spdlog::warn(
      "kafka: {}: offset {} is no longer in the log; resuming at {} ({}): {} records skipped",
      ToString(tp), from, to, config_.auto_offset_reset, to - from);
}

Result<int64_t> Consumer::CheckLedgerOffset(const TopicPartition& tp, int64_t offset) {
  WEIR_ASSIGN_OR_RAISE(const auto watermarks, QueryWatermarks(tp));
  const auto [low, high] = watermarks;
  if (offset >= low) return offset;  // past the end: the fetch reports out of range
  const int64_t to = reset_to_earliest_ ? low : high;
  RecordGap(tp, offset, to);
  return to;
}

Status Consumer::StartPartitions(rd_kafka_topic_partition_list_t* partitions) {
  const std::vector<TopicPartition> assigned = ToVector(partitions);
  WEIR_ASSIGN_OR_RAISE(const auto starts, listener_->OnAssigned(assigned));
  for (int i = 0; i < partitions->cnt; ++i) {
    rd_kafka_topic_partition_t& elem = partitions->elems[i];
    const TopicPartition& tp = assigned[static_cast<size_t>(i)];
    PartitionState& state = owned_[tp];
    state = PartitionState{};
    const auto start = starts.find(tp);
    if (start == starts.end()) {
      elem.offset = reset_to_earliest_ ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
      continue;
    }
    WEIR_ASSIGN_OR_RAISE(elem.offset, CheckLedgerOffset(tp, start->second));
    state.next_offset = elem.offset;
  }
  return Status::OK();
}

Status Consumer::AssignStatic() {
  static_assigned_ = true;
  if (static_partitions_.empty()) return Status::OK();
  spdlog::info("kafka: replica {} of {} assigned {}", config_.ordinal, config_.replica_count,
               Join(static_partitions_));
  PartitionListPtr list = ToList(static_partitions_);
  Status started = StartPartitions(list.get());
  if (!started.ok()) {
    owned_.clear();
    Fail(WithContext(started, "assigning partitions"));
    return failure_;
  }
  const rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Fail(KafkaError(err, "assigning partitions"));
  return failure_;
}

Status Consumer::RecoverOutOfRange(const TopicPartition& tp, int64_t from) {
  const auto owned = owned_.find(tp);
  if (owned == owned_.end()) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(const auto watermarks, QueryWatermarks(tp));
  const auto [low, high] = watermarks;
  const int64_t to = reset_to_earliest_ ? low : high;
  PartitionListPtr list = ToList({tp});
  list->elems[0].offset = to;
  // librdkafka stopped fetching the partition (auto.offset.reset=error), and a stopped
  // partition cannot be seeked: re-add it to the assignment at the reset point instead.
  WEIR_RETURN_NOT_OK(
      KafkaError(rd_kafka_incremental_unassign(rk_.get(), list.get()), "resetting offset of"));
  WEIR_RETURN_NOT_OK(
      KafkaError(rd_kafka_incremental_assign(rk_.get(), list.get()), "resetting offset of"));
  if (from >= 0 && from < to) {
    RecordGap(tp, from, to);
  } else {
    spdlog::warn("kafka: {}: offset {} is outside the log [{}, {}); resuming at {} ({})",
                 ToString(tp), from, low, high, to, config_.auto_offset_reset);
  }
  owned->second.next_offset = to;
  return Status::OK();
}

Status Consumer::HandleMessageError(const rd_kafka_message_t& message) {
  const TopicPartition tp{message.rkt != nullptr ? rd_kafka_topic_name(message.rkt) : "",
                          message.partition};
  switch (message.err) {
    case RD_KAFKA_RESP_ERR__PARTITION_EOF:
      return Status::OK();
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      return RecoverOutOfRange(tp, message.offset);
    case RD_KAFKA_RESP_ERR__FATAL: {
      char fatal[512] = {};
      const rd_kafka_resp_err_t original = rd_kafka_fatal_error(rk_.get(), fatal, sizeof fatal);
      return ClassifiedError(ErrorClass::kFatal, "librdkafka", rd_kafka_err2name(original),
                             std::string("fatal consumer error: ") + fatal);
    }
    default:
      break;
  }
  const std::string what = (tp.topic.empty() ? std::string("consumer") : "topic " + tp.topic) +
                           ": " + rd_kafka_message_errstr(&message);
  if (ClassifyKafkaError(message.err) == ErrorClass::kFatal) return KafkaError(message.err, what);
  spdlog::warn("kafka: {} ({})", what, rd_kafka_err2name(message.err));
  return Status::OK();
}

Result<int> Consumer::Poll(std::chrono::milliseconds timeout, int max_messages,
                           const std::function<void(const Message&)>& sink) {
  if (closed_) return Status::Invalid("kafka: Poll after Close");
  WEIR_RETURN_NOT_OK(failure_);
  if (config_.assignment == ConsumerConfig::Assignment::kStatic && !static_assigned_) {
    WEIR_RETURN_NOT_OK(AssignStatic());
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int delivered = 0;
  while (delivered < max_messages) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const int wait_ms = delivered > 0 ? 0 : static_cast<int>(std::max<int64_t>(0, left.count()));
    MessagePtr message(rd_kafka_consumer_poll(rk_.get(), wait_ms));
    WEIR_RETURN_NOT_OK(failure_);  // a callback served by this poll may have failed
    if (message == nullptr) {
      if (wait_ms == 0) break;
      continue;
    }
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const Status status = HandleMessageError(*message);
      if (!status.ok()) {
        Fail(status);
        return failure_;
      }
      continue;
    }
    const char* topic = rd_kafka_topic_name(message->rkt);
    const auto owned = owned_.find(PartitionKey{topic, message->partition});
    if (owned == owned_.end() || owned->second.blocked) continue;
    PartitionState& state = owned->second;
    if (state.paused) {
      state.dropped_while_paused = true;
      continue;
    }
    Message view;
    view.topic = topic;
    view.partition = message->partition;
    view.offset = message->offset;
    view.key_is_null = message->key == nullptr;
    if (!view.key_is_null) {
      view.key = std::string_view(static_cast<const char*>(message->key), message->key_len);
    }
    if (message->payload != nullptr) {
      view.payload = std::string_view(static_cast<const char*>(message->payload), message->len);
    }
    rd_kafka_timestamp_type_t timestamp_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    view.timestamp_ms = rd_kafka_message_timestamp(message.get(), &timestamp_type);
    view.native = message.get();
    sink(view);
    state.next_offset = message->offset + 1;
    last_answer_ = std::chrono::system_clock::now();  // a record came from a broker
    if (broker_suspect_ || broker_trouble_) BrokersAnswered();
    ++delivered;
  }
  return delivered;
}

Status Consumer::Pause(const std::vector<TopicPartition>& partitions) {
  PartitionListPtr list = ToList(partitions);
  WEIR_RETURN_NOT_OK(CheckKafka(rd_kafka_pause_partitions(rk_.get(), list.get()), "pausing"));
  WEIR_RETURN_NOT_OK(PartitionErrors(list.get(), "pausing"));
  for (const TopicPartition& tp : partitions) {
    const auto owned = owned_.find(tp);
    if (owned != owned_.end()) owned->second.paused = true;
  }
  return Status::OK();
}

Status Consumer::Resume(const std::vector<TopicPartition>& partitions) {
  // Records prefetched before the pause were dropped, so fetch again from the next offset.
  std::vector<TopicPartition> rewind;
  for (const TopicPartition& tp : partitions) {
    const auto owned = owned_.find(tp);
    if (owned != owned_.end() && owned->second.dropped_while_paused &&
        owned->second.next_offset >= 0) {
      rewind.push_back(tp);
    }
  }
  if (!rewind.empty()) {
    PartitionListPtr seek = ToList(rewind);
    for (int i = 0; i < seek->cnt; ++i) {
      seek->elems[i].offset = owned_.find(rewind[static_cast<size_t>(i)])->second.next_offset;
    }
    WEIR_RETURN_NOT_OK(
        KafkaError(rd_kafka_seek_partitions(rk_.get(), seek.get(), kBrokerTimeoutMs), "seeking"));
    WEIR_RETURN_NOT_OK(PartitionErrors(seek.get(), "seeking"));
  }
  PartitionListPtr list = ToList(partitions);
  WEIR_RETURN_NOT_OK(CheckKafka(rd_kafka_resume_partitions(rk_.get(), list.get()), "resuming"));
  WEIR_RETURN_NOT_OK(PartitionErrors(list.get(), "resuming"));
  for (const TopicPartition& tp : partitions) {
    const auto owned = owned_.find(tp);
    if (owned == owned_.end()) continue;
    owned->second.paused = false;
    owned->second.dropped_while_paused = false;
  }
  return Status::OK();
}

std::vector<TopicPartition> Consumer::Assignment() const {
  std::vector<TopicPartition> partitions;
  partitions.reserve(owned_.size());
  for (const auto& [tp, state] : owned_) partitions.push_back(tp);
  return partitions;
}

Status Consumer::CommitOffsets(const std::map<TopicPartition, int64_t>& next_offsets) {
  std::vector<TopicPartition> partitions;
  std::vector<int64_t> offsets;
  for (const auto& [tp, offset] : next_offsets) {
    if (owned_.find(tp) == owned_.end()) {
      spdlog::info("kafka: not committing offset {} of {}: no longer owned", offset, ToString(tp));
      continue;
    }
    partitions.push_back(tp);
    offsets.push_back(offset);
  }
  if (partitions.empty()) return Status::OK();
  PartitionListPtr list = ToList(partitions);
  for (int i = 0; i < list->cnt; ++i) list->elems[i].offset = offsets[static_cast<size_t>(i)];

  struct Outcome {
    Status status;
  } outcome;
  auto on_commit = [](rd_kafka_t*, rd_kafka_resp_err_t, rd_kafka_topic_partition_list_t* result,
                      void* opaque) {
    auto* out = static_cast<Outcome*>(opaque);
    if (result != nullptr) out->status = PartitionErrors(result, "committing offset of");
  };
  const rd_kafka_resp_err_t err =
      rd_kafka_commit_queue(rk_.get(), list.get(), nullptr, on_commit, &outcome);
  if (err == RD_KAFKA_RESP_ERR__NO_OFFSET) return Status::OK();
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError(err, "committing offsets");
  return outcome.status;
}

Result<std::map<TopicPartition, int64_t>> Consumer::Committed(
    const std::vector<TopicPartition>& partitions, std::chrono::milliseconds timeout) {
  PartitionListPtr list = ToList(partitions);
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(rk_.get(), list.get(), static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError(err, "reading committed offsets");
  WEIR_RETURN_NOT_OK(PartitionErrors(list.get(), "reading the committed offset of"));
  std::map<TopicPartition, int64_t> committed;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& elem = list->elems[i];
    if (elem.offset >= 0) committed[{elem.topic, elem.partition}] = elem.offset;
  }
  return committed;
}

std::vector<PartitionLag> Consumer::Lag() const {
  std::vector<PartitionLag> lags;
  for (const auto& [tp, state] : owned_) {
    PartitionLag lag;
    lag.partition = tp;
    lag.position = state.next_offset;
    int64_t low = -1;
    int64_t high = -1;
    if (rd_kafka_get_watermark_offsets(rk_.get(), tp.topic.c_str(), tp.partition, &low, &high) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      lag.high_watermark = high;
    }
    if (lag.position >= 0 && lag.high_watermark >= 0) {
      lag.lag = std::max<int64_t>(0, lag.high_watermark - lag.position);
    }
    lags.push_back(std::move(lag));
  }
  return lags;
}

void Consumer::SetStatisticsSink(std::function<void(std::string_view json)> sink) {
  statistics_sink_ = std::move(sink);
}

}  // namespace weir::kafka
