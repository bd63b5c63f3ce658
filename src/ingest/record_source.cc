#include "ingest/record_source.h"

#include <random>

#include <spdlog/spdlog.h>

namespace weir::ingest {
namespace {

class KafkaSource final : public RecordSource {
 public:
  explicit KafkaSource(std::unique_ptr<kafka::Consumer> consumer)
      : consumer_(std::move(consumer)) {}

  Result<int> Poll(std::chrono::milliseconds timeout, int max_records,
                   const std::function<void(const kafka::Message&)>& sink) override {
    return consumer_->Poll(timeout, max_records, sink);
  }
  Status Pause(const std::vector<kafka::TopicPartition>& partitions) override {
    return consumer_->Pause(partitions);
  }
  Status Resume(const std::vector<kafka::TopicPartition>& partitions) override {
    return consumer_->Resume(partitions);
  }
  std::vector<kafka::TopicPartition> Assignment() const override { return consumer_->Assignment(); }
  Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>& next_offsets) override {
    return consumer_->CommitOffsets(next_offsets);
  }
  std::vector<kafka::PartitionLag> Lag() const override { return consumer_->Lag(); }
  std::optional<kafka::BrokerTrouble> BrokerTrouble(std::chrono::milliseconds timeout) override {
    consumer_->RecheckBrokers(timeout);
    return consumer_->broker_trouble();
  }
  Status Close() override { return consumer_->Close(); }

 private:
  std::unique_ptr<kafka::Consumer> consumer_;
};

}  // namespace

SourceRetry::SourceRetry() : backoff_(BackoffPolicy{}, std::random_device{}()) {}

Result<std::chrono::milliseconds> SourceRetry::Failed(const Status& polled) {
  if (ClassOf(polled) != ErrorClass::kRetriable) return polled;
  const auto delay = backoff_.Next();
  if (!delay) return WithContext(polled, "Kafka consumer (retry budget spent)");
  spdlog::warn("Kafka consumer failed ({}); reconnecting in {} ms", polled.message(),
               delay->count());
  return *delay;
}

Result<std::unique_ptr<RecordSource>> MakeKafkaSource(
    const kafka::ConsumerConfig& config, kafka::AssignmentListener* listener,
    std::function<void(std::string_view json)> statistics) {
  WEIR_ASSIGN_OR_RAISE(auto consumer, kafka::Consumer::Make(config, listener));
  consumer->SetStatisticsSink(std::move(statistics));
  return std::unique_ptr<RecordSource>(std::make_unique<KafkaSource>(std::move(consumer)));
}

}  // namespace weir::ingest
