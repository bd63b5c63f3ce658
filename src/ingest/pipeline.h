// The ingest pipeline: Kafka → decode → buffer → Parquet → one lake commit per flush, exactly
// once through the offset ledger.
//
// Threads:
//  - the poll thread (the caller of Run): polls Kafka, decodes records into each dataset's
//    buffer, seals buffers on size or age, pauses partitions when the memory budget is spent,
//    commits Kafka offsets after lake commits. It never waits on storage or the catalog, except
//    inside a rebalance (revoked partitions are flushed and committed before they are released).
//  - with decode_threads > 1, that many decode workers per streaming dataset: the poll thread
//    copies each record to the worker of its partition, and waits for them (Drain) before it
//    seals, hands over or drops what they decoded.
//  - one flush thread per dataset: writes files and commits them, in order.
// Lifecycle: Make → Run (until the stop token or a fatal error; drains before returning). The
// stop token also ends every retry wait of the flush threads and the consumer's reconnects.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/log_rate_limiter.h"
#include "base/status.h"
#include "decode/json_batch_builder.h"
#include "ingest/dataset_writer.h"
#include "ingest/decode_workers.h"
#include "ingest/kafka_statistics.h"
#include "ingest/lake_progress.h"
#include "ingest/record_source.h"
#include "ingest/routed_writer.h"
#include "ingest/stage_times.h"
#include "kafka/consumer.h"
#include "kafka/consumer_config.h"
#include "lake/catalog.h"
#include "observe/metrics_registry.h"
#include "observe/status_model.h"
#include "records/jmespath/mapping.h"
#include "records/metadata_columns.h"
#include "records/record_filter.h"
#include "records/typed_columns.h"
#include "records/variant_columns.h"

namespace weir::ingest {

struct DecodeShard;

struct DatasetOptions {
  DatasetConfig config;
  int64_t flush_max_bytes = 100 << 20;
  // Arrow bytes at which the open buffer is handed to the flush thread as a part of the flush
  // (flush.part_bytes): the flush is written as it arrives and committed once, at
  // flush_max_bytes / flush_interval (DatasetWriter's streamed flush); 0: flushes are written
  // whole. Routed and sorted datasets are always written whole (a sort needs every row).
  int64_t flush_part_bytes = 16 << 20;
  std::chrono::milliseconds flush_interval{60000};
  decode::DecodeOptions decode;
  // Set: records are mapped column → JMESPath expression (records/mapped_batch_builder.h);
  // unset: top-level keys become columns (decode/json_batch_builder.h).
  std::shared_ptr<const records::jmespath::Mapping> mapping;
  // Columns pinned to a type, cast on the flush thread before each write.
  records::TypedColumns typed_columns;
  // The allowlist and denylist, applied on the flush thread after the typed columns; null: none.
  std::shared_ptr<const records::RecordFilter> filter;
  // Ledger topics of a record source other than Kafka that feed this dataset too (the file
  // source's `file:<sha256>` keys); `config.topic` always does.
  std::vector<std::string> source_topics;
  // Kafka metadata written with each row (records/metadata_columns.h); empty: none.
  std::vector<records::MetadataColumn> metadata_columns;
  // Set: rows are routed to tables by a field (ingest/routed_writer.h).
  std::optional<RouteConfig> route;
  // JSON-text columns also written as `<column>_variant`, on the flush thread.
  records::VariantColumns variant_columns;
  // An upsert dataset (config.upsert_key set) whose key values come from the message key, a
  // JSON object whose fields are added to the record's (ingest/upsert_rows.h).
  bool upsert_key_from_kafka_key = false;
};

struct PipelineOptions {
  kafka::ConsumerConfig consumer;  // topics are taken from the datasets
  std::vector<DatasetOptions> datasets;
  int64_t memory_budget_bytes = 1LL << 30;
  int consume_batch_size = 1000;
  // Threads that decode the records of a streaming dataset (ingest/decode_workers.h), each on
  // its own partitions; 1: decoded on the poll thread. Datasets whose flushes are written whole
  // (routed, sorted, upsert) are always decoded on the poll thread.
  int decode_threads = 1;
  std::chrono::milliseconds drain_timeout{96000};
  // Fed with records, rejects, lag, pauses and commits for /status (optional; outlives the
  // pipeline).
  observe::StatusModel* status = nullptr;
  // Unset: the Kafka consumer of `consumer`. Set: this source instead (`weir ingest --from`);
  // when it is exhausted, Run flushes and commits everything and returns.
  RecordSourceFactory source;
};

class Pipeline final : public kafka::AssignmentListener {
 public:
  // Refuses (naming the setting) a dataset whose table spec the catalog's format cannot hold.
  static Result<std::unique_ptr<Pipeline>> Make(PipelineOptions options, lake::Catalog* catalog,
                                                observe::MetricsRegistry* metrics);
  ~Pipeline() override;

  // Consumes until `stop` is requested (then flushes, commits and leaves the group) or a fatal
  // error. A stop also cuts every retry wait short: a flush that is backing off gives up (its
  // records are re-read from the ledger by the next start) instead of sleeping on.
  Status Run(std::stop_token stop);

  // For /readyz: partitions assigned (or waiting for an assignment) and not draining.
  bool ready() const { return ready_.load(); }
  // /readyz: assigned and not draining, with the brokers answering.
  observe::ProbeResult Readiness() const { return progress_.Readiness(ready_.load()); }
  // For /healthz: the poll loop went round recently.
  std::chrono::steady_clock::time_point last_loop() const { return last_loop_.load(); }

  Result<std::map<kafka::TopicPartition, int64_t>> OnAssigned(
      const std::vector<kafka::TopicPartition>& partitions) override;
  void OnRevoked(const std::vector<kafka::TopicPartition>& partitions) override;
  void OnLost(const std::vector<kafka::TopicPartition>& partitions) override;

 private:
  struct Dataset;
  using SteadyDuration = std::chrono::steady_clock::duration;
  Pipeline(PipelineOptions options, lake::Catalog* catalog, observe::MetricsRegistry* metrics);

  void Accept(const kafka::Message& message);
  // Decodes `message` into `shard` (the poll thread's, or on a decode worker its own):
  // appends its row, or rejects it. Returns the time spent decoding.
  SteadyDuration Decode(Dataset& dataset, DecodeShard& shard, const kafka::Message& message,
                        HeaderValues headers);
  void Seal(Dataset& dataset);
  // Hands the open buffer's rows to the flush thread as a part of the open flush (its ranges,
  // rejects and records stay until Seal).
  void SealPart(Dataset& dataset);
  // The shard's rows finished into a batch, with the metadata columns attached.
  Result<std::shared_ptr<arrow::RecordBatch>> FinishBatch(Dataset& dataset, DecodeShard& shard);
  // Hands `shard`'s rows to the flush thread as a part of the open flush.
  void QueuePart(Dataset& dataset, DecodeShard& shard);
  // Whether `dataset`'s flushes stream in parts.
  static bool Streams(const Dataset& dataset);
  void PublishPools();
  // Waits (up to a second) while a streaming dataset's flush thread has two parts to write.
  void WaitForStreamedParts();
  void SealDue(std::chrono::steady_clock::time_point now);
  void SealAll();
  void Abandon();
  // Waits until every flush thread is idle; false when `deadline` passed first.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);
  void FlushLoop(Dataset& dataset);
  // A routed dataset's write: RoutedWriter's, its routing counters published.
  Result<FlushOutcome> WriteRouted(Dataset& dataset, const SealedFlush& flush);
  void ApplyBackpressure();
  void CommitKafkaOffsets();
  void PublishDecodeStats(Dataset& dataset, DecodeShard& shard);
  // Adds counts by reason to `metric`.
  void AddFieldCounts(const std::string& dataset, const observe::MetricDef& metric,
                      const std::map<std::string, int64_t>& counts);
  // Tells the status model which partitions are paused, and why (none: resumed).
  void PublishPaused(const std::vector<kafka::TopicPartition>& paused, const std::string& reason);
  int64_t BufferedBytes() const;
  Status ConnectConsumer();
  void DropConsumer();
  void SetFatal(Status status);
  Status fatal() const;

  PipelineOptions options_;
  lake::Catalog* catalog_;
  std::stop_source stopping_;  // requested when Run's token is: the flush threads' token
  observe::MetricsRegistry* metrics_;
  StageTimes stage_times_;
  std::vector<std::unique_ptr<Dataset>> datasets_;
  std::map<std::string, Dataset*, std::less<>> by_topic_;
  std::unique_ptr<RecordSource> consumer_;
  LogRateLimiter field_log_limiter_{std::chrono::minutes(1)};  // poll and flush threads
  KafkaStatistics kafka_statistics_;
  LakeProgress progress_;        // lag by the lake's offsets, flushes in flight, the brokers
  observe::Gauge* decode_pool_;  // weir_arrow_pool_bytes{stage}
  observe::Gauge* encode_pool_;
  observe::Counter* decode_fresh_;  // weir_arrow_pool_fresh_bytes_total{stage}
  observe::Counter* encode_fresh_;

  // Poll thread only.
  std::map<kafka::TopicPartition, int64_t> next_start_;  // the ledger value of the next range
  bool paused_ = false;
  bool abandoning_ = false;
  std::chrono::steady_clock::duration decode_time_{};  // of the current Poll

  std::atomic<int64_t> inflight_bytes_{0};
  std::atomic<bool> restart_{false};  // a commit was fenced or partitions were lost
  std::atomic<bool> ready_{false};
  std::atomic<std::chrono::steady_clock::time_point> last_loop_{};
  mutable std::mutex mutex_;
  std::map<kafka::TopicPartition, int64_t> committed_;  // GUARDED_BY(mutex_), for Kafka
  Status fatal_;                                        // GUARDED_BY(mutex_)
};

}  // namespace weir::ingest
