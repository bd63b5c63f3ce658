#include "ingest/pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/retry.h"
#include "files/rolling_parquet_writer.h"
#include "ingest/coercion_metrics.h"
#include "ingest/filter_metrics.h"
#include "ingest/memory_pools.h"
#include "ingest/pipeline_dataset.h"
#include "ingest/upsert_rows.h"
#include "observe/metric_names.h"
#include "records/mapped_batch_builder.h"

namespace weir::ingest {

Pipeline::Pipeline(PipelineOptions options, lake::Catalog* catalog,
                   observe::MetricsRegistry* metrics)
    : options_(std::move(options)),
      catalog_(catalog),
      metrics_(metrics),
      stage_times_(*metrics),
      kafka_statistics_(metrics),
      progress_(metrics, options_.status),
      decode_pool_(&metrics->Gauge(m::kArrowPoolBytes, {{std::string(m::kLabelStage), "decode"}})),
      encode_pool_(&metrics->Gauge(m::kArrowPoolBytes, {{std::string(m::kLabelStage), "encode"}})),
      decode_fresh_(
          &metrics->Counter(m::kArrowPoolFreshBytes, {{std::string(m::kLabelStage), "decode"}})),
      encode_fresh_(
          &metrics->Counter(m::kArrowPoolFreshBytes, {{std::string(m::kLabelStage), "encode"}})) {
  last_loop_.store(SteadyClock::now());
}

Pipeline::~Pipeline() {
  stopping_.request_stop();  // a flush thread still backing off gives up at once
  for (auto& dataset : datasets_) dataset->workers.reset();  // they use the pipeline's members
  for (auto& dataset : datasets_) {
    {
      std::lock_guard lock(dataset->mutex);
      dataset->stop = true;
    }
    dataset->changed.notify_all();
    if (dataset->thread.joinable()) dataset->thread.join();
    // Its encode lanes end here, while what their callbacks use (the dataset's mutex, the
    // pipeline's counters) is still there; an open streamed flush's files are deleted.
    dataset->writer.reset();
  }
}

Result<std::unique_ptr<Pipeline>> Pipeline::Make(PipelineOptions options, lake::Catalog* catalog,
                                                 observe::MetricsRegistry* metrics) {
  std::unique_ptr<Pipeline> pipeline(new Pipeline(std::move(options), catalog, metrics));
  auto& consumer = pipeline->options_.consumer;
  consumer.topics.clear();
  for (auto& options_of : pipeline->options_.datasets) {
    const std::string setting = "datasets[" + options_of.config.name + "].partition_by";
    for (const auto& key : options_of.config.partitioning) {
      const auto& typed = options_of.typed_columns.columns();
      const bool timestamp = std::any_of(typed.begin(), typed.end(), [&](const auto& column) {
        return column.type == records::TypedKind::kTimestampTz && column.column == key.column;
      });
      const bool uuid = std::any_of(typed.begin(), typed.end(), [&](const auto& column) {
        return column.type == records::TypedKind::kUuid && column.column == key.column;
      });
      if (uuid && key.transform.kind == lake::TransformKind::kTruncate) {
        return Status::Invalid(setting, ": partitioning by ", lake::ToString(key), ": ", key.column,
                               " is a typed uuid column, which truncate does not apply to; use "
                               "identity(",
                               key.column, ") or bucket[N](", key.column, ")");
      }
      if (key.column != kInsertedAt && key.transform.IsTime() && !timestamp) {
        return Status::Invalid(setting, ": partitioning by ", lake::ToString(key),
                               ": year/month/day/hour need a timestamp "
                               "column, and JSON values are never timestamps: pin it with "
                               "typed_columns ",
                               key.column,
                               ":timestamptz, or use a transform of _inserted_at "
                               "or identity(",
                               key.column, ")");
      }
    }
    WEIR_RETURN_NOT_OK(catalog->CheckSpec(DatasetWriter::Spec(options_of.config), setting));
    auto dataset = std::make_unique<Dataset>();
    if (options_of.flush_part_bytes > 0) {
      // A part is at most a quarter of the budget, so parts queued for the flush thread cannot
      // hold the budget alone.
      options_of.flush_part_bytes =
          std::min(options_of.flush_part_bytes,
                   std::max<int64_t>(pipeline->options_.memory_budget_bytes / 4, 1 << 20));
    }
    dataset->options = options_of;
    dataset->writer = std::make_unique<DatasetWriter>(options_of.config, catalog,
                                                      pipeline->stopping_.get_token());
    if (options_of.route) {
      dataset->router = std::make_unique<RoutedWriter>(options_of.config, *options_of.route,
                                                       catalog, pipeline->stopping_.get_token());
    }
    const size_t shards =
        Streams(*dataset) ? static_cast<size_t>(std::max(pipeline->options_.decode_threads, 1)) : 1;
    for (size_t i = 0; i < shards; ++i) {
      auto shard = std::make_unique<DecodeShard>();
      WEIR_ASSIGN_OR_RAISE(shard->builder, RecordStages::MakeDecoder(options_of, DecodePool()));
      WEIR_ASSIGN_OR_RAISE(shard->metadata,
                           RecordStages::MakeMetadataBuilder(options_of, DecodePool()));
      dataset->shards.push_back(std::move(shard));
    }
    const m::Labels labels{{std::string(m::kLabelDataset), options_of.config.name}};
    dataset->consumed = &metrics->Counter(m::kRecordsConsumed, labels);
    dataset->redelivered = &metrics->Counter(m::kRecordsRedelivered, labels);
    dataset->written = &metrics->Counter(m::kRecordsWritten, labels);
    dataset->bytes_written = &metrics->Counter(m::kBytesWritten, labels);
    dataset->files_written = &metrics->Counter(m::kFilesWritten, labels);
    dataset->commits = &metrics->Counter(m::kCommits, labels);
    dataset->fenced = &metrics->Counter(m::kFencedCommits, labels);
    dataset->orphaned = &metrics->Counter(m::kOrphanedObjects, labels);
    dataset->retries = &metrics->Counter(m::kCommitRetries, labels);
    dataset->conflicts = &metrics->Counter(m::kCommitConflicts, labels);
    dataset->buffer_bytes = &metrics->Gauge(m::kBufferBytes, labels);
    dataset->flush_seconds = &metrics->Histogram(m::kFlushDuration, labels);
    dataset->commit_seconds = &metrics->Histogram(m::kCommitDuration, labels);
    dataset->status =
        pipeline->progress_.AddDataset(options_of.config.name, options_of.config.topic);
    auto observer = [progress = &pipeline->progress_, name = options_of.config.name](
                        const Status& error) { progress->AttemptFailed(name, error); };
    dataset->writer->SetRetryObserver(observer);
    if (dataset->router) dataset->router->SetRetryObserver(observer);
    auto with_reason = [&](std::string reason) {
      auto l = labels;
      l[std::string(m::kLabelReason)] = std::move(reason);
      return l;
    };
    dataset->nulled = &metrics->Counter(m::kValuesNulled, with_reason("type_mismatch"));
    dataset->stages =
        std::make_unique<RecordStages>(dataset->options, *metrics, pipeline->field_log_limiter_);
    if (pipeline->by_topic_.count(options_of.config.topic)) {
      return Status::Invalid("topic ", options_of.config.topic, " feeds two datasets");
    }
    pipeline->by_topic_[options_of.config.topic] = dataset.get();
    for (const auto& topic : options_of.source_topics) {
      if (pipeline->by_topic_.count(topic)) {
        return Status::Invalid("source ", topic, " feeds two datasets");
      }
      pipeline->by_topic_[topic] = dataset.get();
    }
    consumer.topics.push_back(options_of.config.topic);
    pipeline->datasets_.push_back(std::move(dataset));
  }
  // What the pools keep of their freed blocks (memory_pools.h): about a part per streaming
  // dataset for decode; for encode, per encode lane about the blocks a row group's column sinks
  // grow through (16 MiB at most counted per row group).
  int64_t retain_decode = 0;
  int64_t retain_encode = 0;
  for (const auto& dataset : pipeline->datasets_) {
    if (!Streams(*dataset)) continue;
    const auto& config = dataset->options.config;
    retain_decode += dataset->options.flush_part_bytes * 3 / 2;
    const int64_t bound = files::RowGroupBytes(config.file, config.target_file_size);
    const int64_t row_group = bound > 0 ? std::min<int64_t>(bound, 16 << 20) : 16 << 20;
    retain_encode += std::max(config.encode_lanes, 1) * row_group * 3 / 2;
  }
  const int64_t most = pipeline->options_.memory_budget_bytes / 4;
  RetainDecodeBlocks(std::clamp<int64_t>(retain_decode, 8 << 20, std::max<int64_t>(most, 8 << 20)));
  RetainEncodeBlocks(
      std::clamp<int64_t>(retain_encode, 16 << 20, std::max<int64_t>(most, 16 << 20)));
  for (auto& dataset : pipeline->datasets_) {
    Dataset* d = dataset.get();
    Pipeline* p = pipeline.get();
    d->thread = std::thread([p, d] { p->FlushLoop(*d); });
    if (d->shards.size() > 1) {
      const auto& metadata = d->shards.front()->metadata;
      d->workers = std::make_unique<DecodeWorkers>(
          d->shards.size(), metadata ? metadata->header_names() : std::vector<std::string>{},
          [p, d](size_t worker, const kafka::Message& message, HeaderValues headers) {
            DecodeShard& shard = *d->shards[worker];
            shard.decode_time += p->Decode(*d, shard, message, headers);
            if (++shard.since_published >= 64) {
              // What the poll thread reads of this worker, every 64 records.
              shard.since_published = 0;
              shard.decoded.store(shard.decoded_bytes());
              shard.buffered.store(shard.buffered_bytes());
              p->stage_times_.decode.Increment(StageTimes::Seconds(shard.decode_time));
              shard.decode_time = {};
            }
          });
    }
  }
  return pipeline;
}

void Pipeline::SetFatal(Status status) {
  std::lock_guard lock(mutex_);
  if (fatal_.ok()) fatal_ = std::move(status);
}

Status Pipeline::fatal() const {
  std::lock_guard lock(mutex_);
  return fatal_;
}

Result<std::map<kafka::TopicPartition, int64_t>> Pipeline::OnAssigned(
    const std::vector<kafka::TopicPartition>& partitions) {
  std::map<kafka::TopicPartition, int64_t> starts;
  std::map<std::string, std::map<int32_t, int64_t>> ledgers;
  for (const auto& tp : partitions) {
    auto found = by_topic_.find(tp.topic);
    if (found == by_topic_.end()) continue;
    Dataset& d = *found->second;
    if (!ledgers.count(tp.topic)) {
      WEIR_ASSIGN_OR_RAISE(ledgers[tp.topic], DatasetWriter::ReadLedger(*catalog_, d.options.config,
                                                                        d.ledger_table, tp.topic));
    }
    const auto& ledger = ledgers[tp.topic];
    if (auto at = ledger.find(tp.partition); at != ledger.end()) {
      starts[tp] = at->second;
      next_start_[tp] = at->second;
    } else {
      next_start_.erase(tp);  // no ledger row: the first record consumed starts the range
    }
  }
  spdlog::info("assigned {} partition(s); {} resume from the ledger", partitions.size(),
               starts.size());
  progress_.Assigned(partitions, starts);
  ready_.store(true);
  return starts;
}

void Pipeline::OnRevoked(const std::vector<kafka::TopicPartition>& partitions) {
  if (abandoning_) {
    Abandon();
  } else {
    // Flush and commit everything buffered before the partitions go to their next owner.
    SealAll();
    if (!WaitIdle(SteadyClock::now() + options_.drain_timeout)) {
      spdlog::warn(
          "revocation: flushes still running after the drain timeout; their commits "
          "will be fenced if the new owner commits first");
    }
    CommitKafkaOffsets();
  }
  for (const auto& tp : partitions) next_start_.erase(tp);
  progress_.Released(partitions);
  spdlog::info("revoked {} partition(s)", partitions.size());
}

void Pipeline::OnLost(const std::vector<kafka::TopicPartition>& partitions) {
  spdlog::warn("lost {} partition(s); abandoning buffered data (it is re-read from the ledger)",
               partitions.size());
  Abandon();
  for (const auto& tp : partitions) next_start_.erase(tp);
  progress_.Released(partitions);
  restart_.store(true);
}

void Pipeline::Accept(const kafka::Message& message) {
  auto found = by_topic_.find(message.topic);
  if (found == by_topic_.end()) return;
  Dataset& d = *found->second;
  const kafka::TopicPartition tp{std::string(message.topic), message.partition};
  auto start = next_start_.find(tp);
  if (start != next_start_.end() && message.offset < start->second) {
    // Below the partition's next offset: a record this assignment already took (or one the
    // ledger already holds) delivered again, e.g. a fetch from before a seek or a rebalance.
    // Taking it would put it in a range that starts after it, past the fence: it lands twice.
    d.redelivered->Increment();
    if (const auto suppressed =
            field_log_limiter_.Admit("redelivered/" + kafka::ToString(tp), SteadyClock::now())) {
      spdlog::warn(
          "{} offset {} delivered again (the next offset is {}): dropped{}", kafka::ToString(tp),
          message.offset, start->second,
          *suppressed > 0 ? fmt::format(" ({} more since the last line)", *suppressed) : "");
    }
    return;
  }
  auto range = d.ranges.find(tp);
  if (range == d.ranges.end()) {
    const int64_t first = start != next_start_.end() ? start->second : message.offset;
    if (start == next_start_.end()) progress_.FirstConsumed(tp, first);
    range =
        d.ranges.emplace(tp, lake::OffsetRange{tp.topic, message.partition, first, first}).first;
  }
  range->second.end = message.offset + 1;
  next_start_[tp] = message.offset + 1;
  if (d.records == 0) d.first_record = SteadyClock::now();
  ++d.records;
  d.consumed->Increment();
  if (d.status != nullptr) d.status->Consumed(static_cast<int64_t>(message.payload.size()));
  if (d.workers) {
    const size_t worker = static_cast<size_t>(message.partition) % d.workers->size();
    stage_times_.paused.Increment(StageTimes::Seconds(d.workers->Submit(worker, message)));
    return;
  }
  DecodeShard& shard = *d.shards.front();
  std::vector<std::optional<std::string_view>> headers;
  if (shard.metadata) {
    for (const auto& header : shard.metadata->header_names()) {
      headers.push_back(kafka::HeaderValue(message, header));
    }
  }
  decode_time_ += Decode(d, shard, message, headers);
}

bool Pipeline::Streams(const Dataset& d) {
  // Upsert datasets keep the last row per key over the whole flush: they are written whole.
  return d.options.flush_part_bytes > 0 && !d.router && d.options.config.sort_keys.empty() &&
         d.options.config.upsert_key.empty();
}

void Pipeline::SealDue(SteadyClock::time_point now) {
  for (auto& d : datasets_) {
    if (d->records == 0) continue;
    // flush.max_bytes counts the whole flush: the parts handed over and the open buffer.
    const int64_t bytes = d->buffered_bytes() + d->part_bytes;
    d->buffer_bytes->Set(static_cast<double>(bytes));
    if (bytes >= d->options.flush_max_bytes || now - d->first_record >= d->options.flush_interval) {
      Seal(*d);
    } else if (Streams(*d) && d->decoded_bytes() >= d->options.flush_part_bytes) {
      SealPart(*d);
    }
  }
}

void Pipeline::SealAll() {
  for (auto& d : datasets_) Seal(*d);
}

void Pipeline::Abandon() {
  for (auto& d : datasets_) {
    if (d->parts > 0) {
      // The flush thread deletes the files the open flush's parts went into.
      SealedFlush abort;
      abort.abort = true;
      {
        std::lock_guard lock(d->mutex);
        d->queue.push_back(std::move(abort));
      }
      d->changed.notify_all();
    }
    d->part_bytes = 0;
    d->parts = 0;
    if (d->workers) d->workers->Drain();
    for (auto& shard : d->shards) {
      if (d->records > 0) (void)shard->builder->Finish();
      if (shard->metadata) shard->metadata->Reset();
      shard->row_partitions.clear();
      shard->row_offsets.clear();
      shard->row_tombstones.clear();
      shard->rejects.clear();
      shard->reject_bytes = 0;
      shard->decoded.store(0);
      shard->buffered.store(0);
    }
    d->ranges.clear();
    d->records = 0;
  }
}

void Pipeline::WaitForStreamedParts() {
  // The poll thread stays at most a part per encode lane and one more ahead of a flush thread
  // (the parts being encoded and the next), so a flush's records never pile up in memory while
  // it is encoded; it waits at most a second per loop (a flush thread stuck in retries is left
  // to the memory budget).
  const auto start = SteadyClock::now();
  const auto deadline = start + std::chrono::seconds(1);
  for (auto& d : datasets_) {
    if (!Streams(*d)) continue;
    std::unique_lock lock(d->mutex);
    d->changed.wait_until(lock, deadline, [&] {
      const int64_t lead = std::max(d->options.config.encode_lanes, 1) + 1;
      return d->queued_part_bytes < lead * d->options.flush_part_bytes || d->stop;
    });
  }
  stage_times_.paused.Increment(StageTimes::Seconds(SteadyClock::now() - start));
}

bool Pipeline::WaitIdle(SteadyClock::time_point deadline) {
  for (auto& d : datasets_) {
    std::unique_lock lock(d->mutex);
    if (!d->changed.wait_until(lock, deadline,
                               [&] { return (d->queue.empty() && !d->busy) || d->stop; })) {
      return false;
    }
  }
  return true;
}

int64_t Pipeline::BufferedBytes() const {
  int64_t total = inflight_bytes_.load();
  for (const auto& d : datasets_) total += d->buffered_bytes();
  return total;
}

void Pipeline::ApplyBackpressure() {
  if (!consumer_) return;
  const int64_t used = BufferedBytes();
  auto& paused_gauge = metrics_->Gauge(m::kPausedPartitions, {});
  if (!paused_ && used >= options_.memory_budget_bytes) {
    const auto owned = consumer_->Assignment();
    if (consumer_->Pause(owned).ok()) {
      paused_ = true;
      paused_gauge.Set(static_cast<double>(owned.size()));
      spdlog::warn(
          "memory budget of the buffers ({} bytes) reached ({} in use): {} partition(s) paused",
          options_.memory_budget_bytes, used, owned.size());
      PublishPaused(owned,
                    fmt::format("memory budget of the buffers ({} bytes) reached ({} in use)",
                                options_.memory_budget_bytes, used));
      // Whatever is buffered goes to the flush threads so the budget frees up (as a part of
      // its flush where flushes stream, so no small file is committed for it).
      for (auto& d : datasets_) Streams(*d) ? SealPart(*d) : Seal(*d);
    }
  } else if (paused_ && used < options_.memory_budget_bytes * 8 / 10) {
    if (consumer_->Resume(consumer_->Assignment()).ok()) {
      paused_ = false;
      paused_gauge.Set(0);
      PublishPaused({}, "");
      spdlog::info("memory back under budget ({} bytes): partitions resumed", used);
    }
  }
}

void Pipeline::CommitKafkaOffsets() {
  std::map<kafka::TopicPartition, int64_t> offsets;
  {
    std::lock_guard lock(mutex_);
    offsets.swap(committed_);
  }
  if (offsets.empty() || !consumer_) return;
  auto committed = consumer_->CommitOffsets(offsets);
  if (!committed.ok()) {
    spdlog::warn("Kafka offset commit (for lag tooling only) failed: {}", committed.message());
  }
}

void Pipeline::PublishPools() {
  // What each pool holds, its blocks kept for reuse included (they are resident).
  decode_pool_->Set(
      static_cast<double>(DecodePool()->bytes_allocated() + DecodePool()->retained_bytes()));
  encode_pool_->Set(
      static_cast<double>(EncodePool()->bytes_allocated() + EncodePool()->retained_bytes()));
  // The pools count from the process start; the counters follow them (one publisher).
  decode_fresh_->Increment(static_cast<double>(DecodePool()->fresh_bytes()) -
                           decode_fresh_->value());
  encode_fresh_->Increment(static_cast<double>(EncodePool()->fresh_bytes()) -
                           encode_fresh_->value());
}

void Pipeline::PublishPaused(const std::vector<kafka::TopicPartition>& paused,
                             const std::string& reason) {
  std::map<Dataset*, observe::PausedState> by_dataset;
  for (const auto& d : datasets_) by_dataset[d.get()];
  for (const auto& tp : paused) {
    if (auto found = by_topic_.find(tp.topic); found != by_topic_.end()) {
      by_dataset[found->second].partitions.push_back(tp.partition);
      by_dataset[found->second].reason = reason;
    }
  }
  for (auto& [d, state] : by_dataset) {
    if (d->status != nullptr) d->status->SetPaused(std::move(state));
  }
}

void Pipeline::DropConsumer() {
  // Whatever is buffered is dropped (it is re-read from the ledger); queued flushes finish
  // first (a stale one is fenced); the final revoke abandons instead of flushing.
  ready_.store(false);
  Abandon();
  WaitIdle(SteadyClock::now() + options_.drain_timeout);
  abandoning_ = true;
  (void)consumer_->Close();
  consumer_.reset();
  next_start_.clear();
}

Status Pipeline::ConnectConsumer() {
  abandoning_ = false;
  if (paused_) PublishPaused({}, "");
  paused_ = false;
  if (options_.source) {
    WEIR_ASSIGN_OR_RAISE(consumer_, options_.source(this));
  } else {
    WEIR_ASSIGN_OR_RAISE(consumer_, MakeKafkaSource(options_.consumer, this, [this](auto json) {
                           kafka_statistics_.Update(json);
                         }));
  }
  return Status::OK();
}

Status Pipeline::Run(std::stop_token stop) {
  // The flush threads' waits end when `stop` is requested (from whichever thread requests it).
  const std::stop_callback forward(stop, [this] { stopping_.request_stop(); });
  SourceRetry reconnect;
  WEIR_RETURN_NOT_OK(ConnectConsumer());
  Status result;
  while (!stop.stop_requested()) {
    last_loop_.store(SteadyClock::now());
    if (Status failed = fatal(); !failed.ok()) {
      result = failed;
      break;
    }
    if (restart_.exchange(false)) {
      // A fence or a lost assignment: start again from the ledger.
      DropConsumer();
      WEIR_RETURN_NOT_OK(ConnectConsumer());
      continue;
    }
    WaitForStreamedParts();
    const auto poll_start = SteadyClock::now();
    decode_time_ = {};
    auto polled = consumer_->Poll(std::chrono::milliseconds(100), options_.consume_batch_size,
                                  [this](const kafka::Message& message) { Accept(message); });
    for (auto& d : datasets_) {
      if (d->workers) d->workers->Push();  // what this poll gathered, to the decode workers
    }
    const auto polling = SteadyClock::now() - poll_start - decode_time_;
    stage_times_.decode.Increment(StageTimes::Seconds(decode_time_));
    if (polled.ok() && *polled > 0) {
      stage_times_.kafka.Increment(StageTimes::Seconds(polling));
    } else {
      (paused_ ? stage_times_.paused : stage_times_.kafka_idle)
          .Increment(StageTimes::Seconds(polling));
    }
    if (!polled.ok()) {
      const auto delay = reconnect.Failed(polled.status());
      if (!delay.ok()) {
        result = delay.status();
        break;
      }
      DropConsumer();
      if (!WaitFor(*delay, stop)) break;  // stopping: nothing is buffered, nothing to drain
      WEIR_RETURN_NOT_OK(ConnectConsumer());
      continue;
    }
    if (*polled > 0) reconnect.Delivered();
    if (consumer_->Exhausted()) {
      // A bounded source delivered everything: flush it all and end once every commit landed
      // (a fence meanwhile restarts the source from the ledger, as for Kafka).
      SealAll();
      const bool idle = WaitIdle(SteadyClock::now() + std::chrono::milliseconds(100));
      CommitKafkaOffsets();
      if (idle && !restart_.load() && fatal().ok()) break;
      continue;
    }
    SealDue(SteadyClock::now());
    ApplyBackpressure();
    CommitKafkaOffsets();
    progress_.Publish(consumer_.get());
    PublishPools();
    if (options_.status != nullptr) options_.status->Tick();
  }

  // Drain: stop fetching, flush and commit everything buffered, leave the group.
  ready_.store(false);
  if (result.ok()) {
    spdlog::info("draining: flushing buffered records (deadline {} s)",
                 options_.drain_timeout.count() / 1000);
    SealAll();
    const bool drained = WaitIdle(SteadyClock::now() + options_.drain_timeout);
    if (Status failed = fatal(); !failed.ok()) {
      result = failed;
    } else if (!drained) {
      result = Status::IOError("drain timeout of ", options_.drain_timeout.count(),
                               " ms passed with flushes still running; the ledger makes the "
                               "next start resume where the last commit ended");
    }
    CommitKafkaOffsets();
  }
  abandoning_ = !result.ok();
  if (consumer_) (void)consumer_->Close();
  consumer_.reset();
  return result;
}

}  // namespace weir::ingest
