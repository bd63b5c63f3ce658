// How far the lake is behind Kafka, and whether anything is stuck, for both modes (direct and
// WAL) alike. The commit paths tell it what landed and how each flush is going; the poll loop
// publishes every few seconds:
//
//   weir_consumer_lag{topic,partition}        high watermark − the next offset in the lake (the
//                                             ledger: where a restart resumes); absent while
//                                             either is unknown, never a made-up 0
//   weir_consumer_fetch_lag{topic,partition}  high watermark − the consumer's position
//   weir_commit_in_flight_seconds{dataset}    how long the current flush has been running
//   weir_kafka_brokers_unreachable_seconds    how long the brokers have not answered
//
// and the same on /status and /status.json, with a warning in the log when a flush has been in
// flight for over kSlowFlush (a catalog that is locked or slow otherwise says nothing until the
// commit lands) and again every kSlowFlush while it stays so.
//
// A partition's lake offset comes from the ledger when it is assigned, then from every landed
// commit; a partition with no ledger row starts at the first offset consumed from it.
//
// Threading: every method may be called from any thread; one mutex, never held while calling
// out (the consumer, the registry's collector renders a copy).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ingest/record_source.h"
#include "kafka/consumer.h"
#include "observe/http_server.h"
#include "observe/metrics_registry.h"
#include "observe/status_model.h"

namespace weir::ingest {

inline constexpr std::chrono::seconds kSlowFlush{10};
inline constexpr std::chrono::seconds kProgressInterval{5};

class LakeProgress {
 public:
  // `status` may be null (no /status page); both must outlive this object.
  LakeProgress(observe::MetricsRegistry* metrics, observe::StatusModel* status);
  LakeProgress(const LakeProgress&) = delete;
  LakeProgress& operator=(const LakeProgress&) = delete;

  // Declares a dataset and the topic it reads; returns its status handle (null without a
  // model). Before the first Publish.
  observe::DatasetStatus* AddDataset(const std::string& name, const std::string& topic);

  // The status handle of a dataset declared before (null without a model or such a dataset).
  observe::DatasetStatus* StatusOf(const std::string& name) const;

  // Partitions assigned, with their ledger offsets (a partition absent: no row yet).
  void Assigned(const std::vector<kafka::TopicPartition>& partitions,
                const std::map<kafka::TopicPartition, int64_t>& ledger);
  // Partitions no longer owned: they leave the gauges and the page.
  void Released(const std::vector<kafka::TopicPartition>& partitions);
  // The first record of a partition that had no ledger row was consumed at `offset`.
  void FirstConsumed(const kafka::TopicPartition& partition, int64_t offset);
  // A commit landed: the lake holds the partition up to `next_offset`.
  void Committed(const std::string& topic, int32_t partition, int64_t next_offset);

  // A dataset's flush started / one of its attempts failed / it ended (landed or not).
  void FlushStarted(const std::string& dataset);
  void AttemptFailed(const std::string& dataset, const Status& error);
  void FlushEnded(const std::string& dataset, bool landed);

  // Since when the brokers have been unreachable, as of the last Publish (nullopt: they answer).
  std::optional<kafka::BrokerTrouble> broker_trouble() const;
  // /readyz of a pipeline that is `assigned` (partitions assigned, not draining): not ready
  // while the brokers are unreachable, saying since when.
  observe::ProbeResult Readiness(bool assigned) const;

  // Publishes what the comment above lists, at most every kProgressInterval (`force`: now).
  // Asks the source for its lag and its brokers' state (rechecked within one second while in
  // trouble). Poll thread.
  void Publish(RecordSource* source, bool force = false);

 private:
  struct DatasetEntry {
    std::string topic;
    observe::DatasetStatus* status = nullptr;
    std::optional<std::chrono::steady_clock::time_point> in_flight_since;
    std::chrono::steady_clock::time_point warned_at{};
    std::string last_error;
  };

  void Render(std::string& out) const;

  observe::MetricsRegistry* const metrics_;
  observe::StatusModel* const status_;
  mutable std::mutex mutex_;
  std::map<std::string, DatasetEntry> datasets_;                           // GUARDED_BY(mutex_)
  std::map<kafka::TopicPartition, int64_t> lake_next_;                     // GUARDED_BY(mutex_)
  std::map<kafka::TopicPartition, observe::PartitionProgress> published_;  // GUARDED_BY(mutex_)
  std::optional<kafka::BrokerTrouble> broker_trouble_;                     // GUARDED_BY(mutex_)
  std::chrono::steady_clock::time_point published_at_{};                   // poll thread only
};

}  // namespace weir::ingest
