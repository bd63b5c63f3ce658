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
#include "ingest/coercion_metrics.h"
#include "observe/metric_names.h"
#include "records/mapped_batch_builder.h"

namespace weir::ingest {
namespace {

using SteadyClock = std::chrono::steady_clock;
namespace m = observe;

}  // namespace

struct Pipeline::Dataset {
  DatasetOptions options;
  std::unique_ptr<decode::RecordDecoder> builder;
  decode::DecodeStats published;  // decode statistics already counted in metrics
  // The open buffer (poll thread).
  std::map<int32_t, lake::OffsetRange> ranges;
  std::vector<RejectRecord> rejects;
  int64_t reject_bytes = 0;
  int64_t records = 0;
  SteadyClock::time_point first_record;
  std::unique_ptr<lake::Table> ledger_table;  // the poll thread's own catalog handle

  // The flush thread and its queue.
  std::unique_ptr<DatasetWriter> writer;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<SealedFlush> queue;  // GUARDED_BY(mutex)
  bool busy = false;              // GUARDED_BY(mutex)
  bool stop = false;              // GUARDED_BY(mutex)

  // Metrics.
  m::Counter* consumed = nullptr;
  m::Counter* written = nullptr;
  m::Counter* bytes_written = nullptr;
  m::Counter* files_written = nullptr;
  m::Counter* commits = nullptr;
  m::Counter* fenced = nullptr;
  m::Counter* orphaned = nullptr;
  m::Counter* retries = nullptr;
  m::Counter* conflicts = nullptr;
  m::Counter* nulled = nullptr;
  m::Counter* lossy = nullptr;
  m::Counter* coercion_nulled = nullptr;
  m::Counter* variant_nulled = nullptr;          // source values that are not JSON
  m::Counter* variant_fields_dropped = nullptr;  // payload fields named like a companion
  m::Gauge* buffer_bytes = nullptr;
  m::Histogram* flush_seconds = nullptr;
  m::Histogram* commit_seconds = nullptr;
};

Pipeline::Pipeline(PipelineOptions options, lake::Catalog* catalog,
                   observe::MetricsRegistry* metrics)
    : options_(std::move(options)),
      catalog_(catalog),
      metrics_(metrics),
      kafka_statistics_(metrics) {
  last_loop_.store(SteadyClock::now());
}

Pipeline::~Pipeline() {
  stopping_.request_stop();  // a flush thread still backing off gives up at once
  for (auto& dataset : datasets_) {
    {
      std::lock_guard lock(dataset->mutex);
      dataset->stop = true;
    }
    dataset->changed.notify_all();
    if (dataset->thread.joinable()) dataset->thread.join();
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
    dataset->options = options_of;
    if (options_of.mapping) {
      WEIR_ASSIGN_OR_RAISE(dataset->builder,
                           records::MappedBatchBuilder::Make(options_of.mapping, options_of.decode,
                                                             arrow::default_memory_pool()));
    } else {
      WEIR_ASSIGN_OR_RAISE(dataset->builder, decode::JsonBatchBuilder::Make(
                                                 options_of.decode, arrow::default_memory_pool()));
    }
    dataset->writer = std::make_unique<DatasetWriter>(options_of.config, catalog,
                                                      pipeline->stopping_.get_token());
    const m::Labels labels{{std::string(m::kLabelDataset), options_of.config.name}};
    dataset->consumed = &metrics->Counter(m::kRecordsConsumed, labels);
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
    auto with_reason = [&](std::string reason) {
      auto l = labels;
      l[std::string(m::kLabelReason)] = std::move(reason);
      return l;
    };
    dataset->nulled = &metrics->Counter(m::kValuesNulled, with_reason("type_mismatch"));
    dataset->lossy = &metrics->Counter(m::kValuesNulled, with_reason("integer_beyond_int64"));
    dataset->coercion_nulled = &metrics->Counter(m::kValuesNulled, with_reason("column_coercion"));
    dataset->variant_nulled =
        &metrics->Counter(m::kValuesNulled, with_reason("variant_invalid_json"));
    dataset->variant_fields_dropped =
        &metrics->Counter(m::kFieldsDropped, with_reason("variant_companion"));
    if (pipeline->by_topic_.count(options_of.config.topic)) {
      return Status::Invalid("topic ", options_of.config.topic, " feeds two datasets");
    }
    pipeline->by_topic_[options_of.config.topic] = dataset.get();
    consumer.topics.push_back(options_of.config.topic);
    pipeline->datasets_.push_back(std::move(dataset));
  }
  for (auto& dataset : pipeline->datasets_) {
    Dataset* d = dataset.get();
    Pipeline* p = pipeline.get();
    d->thread = std::thread([p, d] { p->FlushLoop(*d); });
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
      if (!d.ledger_table) {
        auto opened =
            catalog_->OpenTable(DatasetWriter::Spec(d.options.config), lake::OpenMode::kOpenOnly);
        if (!opened.ok()) return WithContext(opened.status(), "reading the offset ledger");
        // A missing table has no ledger yet: every partition starts afresh.
        if (opened->status == lake::OpenStatus::kOpened) d.ledger_table = std::move(opened->table);
      }
      std::map<int32_t, int64_t> ledger;
      if (d.ledger_table) {
        WEIR_ASSIGN_OR_RAISE(ledger, d.ledger_table->ReadLedger(tp.topic));
      }
      ledgers[tp.topic] = std::move(ledger);
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
  spdlog::info("revoked {} partition(s)", partitions.size());
}

void Pipeline::OnLost(const std::vector<kafka::TopicPartition>& partitions) {
  spdlog::warn("lost {} partition(s); abandoning buffered data (it is re-read from the ledger)",
               partitions.size());
  Abandon();
  for (const auto& tp : partitions) next_start_.erase(tp);
  restart_.store(true);
}

void Pipeline::Accept(const kafka::Message& message) {
  auto found = by_topic_.find(message.topic);
  if (found == by_topic_.end()) return;
  Dataset& d = *found->second;
  const kafka::TopicPartition tp{std::string(message.topic), message.partition};
  auto range = d.ranges.find(message.partition);
  if (range == d.ranges.end()) {
    auto start = next_start_.find(tp);
    const int64_t first = start != next_start_.end() ? start->second : message.offset;
    range = d.ranges
                .emplace(message.partition,
                         lake::OffsetRange{tp.topic, message.partition, first, first})
                .first;
  }
  range->second.end = message.offset + 1;
  next_start_[tp] = message.offset + 1;
  if (d.records == 0) d.first_record = SteadyClock::now();
  ++d.records;
  d.consumed->Increment();

  const int64_t field_events = d.builder->stats().field_events;
  const Status appended = d.builder->Append(message.payload);
  if (d.builder->stats().field_events != field_events) {
    LogFieldEvent(d, tp, message.offset, d.builder->stats().field_events - field_events);
  }
  if (appended.ok()) return;
  const ErrorDetail* detail = GetErrorDetail(appended);
  if (detail == nullptr || detail->error_class() != ErrorClass::kBadData) {
    SetFatal(WithContext(
        appended, fmt::format("decoding {} offset {}", kafka::ToString(tp), message.offset)));
    return;
  }
  metrics_
      ->Counter(m::kRecordsRejected, {{std::string(m::kLabelDataset), d.options.config.name},
                                      {std::string(m::kLabelReason), detail->code()}})
      .Increment();
  if (!d.options.config.rejects_enabled) return;
  RejectRecord reject;
  reject.topic = tp.topic;
  reject.partition = message.partition;
  reject.offset = message.offset;
  const auto limit = static_cast<size_t>(d.options.config.rejects_payload_limit);
  if (!message.key_is_null) reject.key = SafeText(message.key, limit);
  reject.payload = SafeText(message.payload, limit);
  reject.payload_bytes = static_cast<int64_t>(message.payload.size());
  reject.reason = detail->code();
  reject.error = appended.message();
  reject.received_at_us = UnixMicros(Clock::System().Now());
  d.reject_bytes += static_cast<int64_t>(reject.payload.size() + 128);
  d.rejects.push_back(std::move(reject));
}

void Pipeline::LogFieldEvent(Dataset& d, const kafka::TopicPartition& tp, int64_t offset,
                             int64_t fields) {
  const decode::FieldEvent& event = d.builder->last_field_event();
  const std::string key = fmt::format("{}/{}/{}", d.options.config.name, event.reason,
                                      event.dropped ? "dropped" : "renamed");
  const auto suppressed = field_log_limiter_.Admit(key, SteadyClock::now());
  if (!suppressed) return;
  const std::string more =
      *suppressed > 0 ? fmt::format(" ({} more such record(s) since the last line)", *suppressed)
                      : "";
  if (event.dropped) {
    spdlog::warn("dataset {}: {} field(s) of {} offset {} dropped ({}), e.g. key \"{}\"{}",
                 d.options.config.name, fields, kafka::ToString(tp), offset, event.reason,
                 event.key, more);
  } else {
    spdlog::warn("dataset {}: key \"{}\" of {} offset {} written as column \"{}\" ({}){}",
                 d.options.config.name, event.key, kafka::ToString(tp), offset, event.column,
                 event.reason, more);
  }
}

void Pipeline::AddFieldCounts(const std::string& dataset, const observe::MetricDef& metric,
                              const std::map<std::string, int64_t>& counts,
                              std::map<std::string, int64_t>* published) {
  for (const auto& [reason, count] : counts) {
    const int64_t before = published != nullptr ? (*published)[reason] : 0;
    if (count > before) {
      metrics_
          ->Counter(metric, {{std::string(m::kLabelDataset), dataset},
                             {std::string(m::kLabelReason), reason}})
          .Increment(static_cast<double>(count - before));
    }
  }
}

void Pipeline::PublishDecodeStats(Dataset& d) {
  const auto& stats = d.builder->stats();
  AddFieldCounts(d.options.config.name, m::kFieldsDropped, stats.dropped_fields,
                 &d.published.dropped_fields);
  AddFieldCounts(d.options.config.name, m::kFieldsRenamed, stats.renamed_fields,
                 &d.published.renamed_fields);
  if (stats.lossy_integers > d.published.lossy_integers) {
    d.lossy->Increment(static_cast<double>(stats.lossy_integers - d.published.lossy_integers));
  }
  d.published = stats;
}

void Pipeline::Seal(Dataset& d) {
  if (d.records == 0) return;
  SealedFlush flush;
  flush.bytes = d.builder->buffered_bytes() + d.reject_bytes;
  auto batch = d.builder->Finish();
  if (!batch.ok()) {
    SetFatal(WithContext(batch.status(), "dataset " + d.options.config.name));
    return;
  }
  PublishDecodeStats(d);
  flush.batch = std::move(*batch);
  flush.rejects = std::move(d.rejects);
  flush.records = d.records;
  for (auto& [partition, range] : d.ranges) flush.offsets.push_back(range);
  d.ranges.clear();
  d.rejects.clear();
  d.reject_bytes = 0;
  d.records = 0;
  inflight_bytes_ += flush.bytes;
  {
    std::lock_guard lock(d.mutex);
    d.queue.push_back(std::move(flush));
  }
  d.changed.notify_all();
}

void Pipeline::SealDue(SteadyClock::time_point now) {
  for (auto& d : datasets_) {
    if (d->records == 0) continue;
    const int64_t bytes = d->builder->buffered_bytes() + d->reject_bytes;
    d->buffer_bytes->Set(static_cast<double>(bytes));
    if (bytes >= d->options.flush_max_bytes || now - d->first_record >= d->options.flush_interval) {
      Seal(*d);
    }
  }
}

void Pipeline::SealAll() {
  for (auto& d : datasets_) Seal(*d);
}

void Pipeline::Abandon() {
  for (auto& d : datasets_) {
    if (d->records > 0) (void)d->builder->Finish();
    d->ranges.clear();
    d->rejects.clear();
    d->reject_bytes = 0;
    d->records = 0;
  }
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

void Pipeline::FlushLoop(Dataset& d) {
  const std::string& name = d.options.config.name;
  while (true) {
    SealedFlush flush;
    {
      std::unique_lock lock(d.mutex);
      d.changed.wait(lock, [&] { return !d.queue.empty() || d.stop; });
      if (d.queue.empty()) return;  // stopping and nothing left
      flush = std::move(d.queue.front());
      d.queue.pop_front();
      d.busy = true;
    }
    const bool failed = !fatal().ok();
    if (!failed && !d.options.typed_columns.empty()) {
      // Typed columns: cast once per flush, before any attempt to write it.
      std::vector<records::ColumnCoercion> coercions;
      auto typed = d.options.typed_columns.Apply(flush.batch, &coercions);
      if (!typed.ok()) {
        SetFatal(WithContext(typed.status(), "dataset " + name + ": typed columns"));
      } else {
        flush.batch = std::move(*typed);
        PublishCoercions(*metrics_, field_log_limiter_, name, *d.coercion_nulled, coercions);
      }
    }
    if (fatal().ok() && !d.options.variant_columns.empty()) {
      // VARIANT companions: encoded once per flush, after the typed columns.
      records::VariantOutcome variant;
      auto with = d.options.variant_columns.Apply(flush.batch, &variant);
      if (!with.ok()) {
        SetFatal(WithContext(with.status(), "dataset " + name + ": variant columns"));
      } else {
        flush.batch = std::move(*with);
        d.variant_nulled->Increment(static_cast<double>(variant.malformed));
        d.variant_fields_dropped->Increment(static_cast<double>(variant.collisions_dropped));
      }
    }
    if (fatal().ok()) {
      auto outcome = d.writer->Write(flush);
      if (!outcome.ok()) {
        spdlog::error("dataset {}: {}", name, outcome.status().ToString());
        SetFatal(outcome.status());
      } else if (outcome->fenced) {
        d.fenced->Increment();
        d.orphaned->Increment(static_cast<double>(outcome->orphaned_files));
        spdlog::warn(
            "dataset {}: commit fenced (another writer committed these offsets); "
            "{} file(s) deleted, consumption restarts from the ledger",
            name, outcome->orphaned_files);
        restart_.store(true);
      } else {
        d.commits->Increment();
        d.written->Increment(static_cast<double>(outcome->rows));
        d.bytes_written->Increment(static_cast<double>(outcome->bytes_written));
        d.files_written->Increment(static_cast<double>(outcome->files));
        d.nulled->Increment(static_cast<double>(outcome->values_nulled));
        AddFieldCounts(name, m::kFieldsDropped, outcome->fields_dropped, nullptr);
        AddFieldCounts(name, m::kFieldsRenamed, outcome->fields_renamed, nullptr);
        AddFieldCounts(name, m::kSortSkipped, outcome->sort_skipped, nullptr);
        if (const auto it = outcome->fields_renamed.find("case_variant");
            it != outcome->fields_renamed.end() && it->second > 0) {
          const auto suppressed =
              field_log_limiter_.Admit(name + "/case_variant", SteadyClock::now());
          if (suppressed) {
            spdlog::info(
                "dataset {}: {} value(s) of keys spelled differently from their column "
                "written into it (case_variant){}",
                name, it->second,
                *suppressed > 0 ? fmt::format(" ({} more such flush(es))", *suppressed) : "");
          }
        }
        d.retries->Increment(static_cast<double>(outcome->commit_attempts - 1));
        d.conflicts->Increment(static_cast<double>(outcome->conflicts));
        d.flush_seconds->Observe(static_cast<double>(outcome->write_time.count()) / 1000.0);
        d.commit_seconds->Observe(static_cast<double>(outcome->commit_time.count()) / 1000.0);
        spdlog::info(
            "dataset {} committed snapshot {}: {} rows, {} rejects, {} file(s), {} bytes, "
            "write {} ms, commit {} ms",
            name, outcome->snapshot_id, outcome->rows, outcome->rejects, outcome->files,
            outcome->bytes_written, outcome->write_time.count(), outcome->commit_time.count());
        std::lock_guard lock(mutex_);
        for (const auto& range : flush.offsets) {
          committed_[{range.topic, range.partition}] = range.end;
        }
      }
    }
    inflight_bytes_ -= flush.bytes;
    {
      std::lock_guard lock(d.mutex);
      d.busy = false;
    }
    d.changed.notify_all();
  }
}

int64_t Pipeline::BufferedBytes() const {
  int64_t total = inflight_bytes_.load();
  for (const auto& d : datasets_) total += d->builder->buffered_bytes() + d->reject_bytes;
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
      spdlog::warn("memory budget of {} bytes reached ({} in use): {} partition(s) paused",
                   options_.memory_budget_bytes, used, owned.size());
      // Whatever is buffered goes to the flush threads so the budget frees up.
      SealAll();
    }
  } else if (paused_ && used < options_.memory_budget_bytes * 8 / 10) {
    if (consumer_->Resume(consumer_->Assignment()).ok()) {
      paused_ = false;
      paused_gauge.Set(0);
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

void Pipeline::PublishLag() {
  const auto now = SteadyClock::now();
  if (!consumer_ || now - lag_published_ < std::chrono::seconds(5)) return;
  lag_published_ = now;
  for (const auto& lag : consumer_->Lag()) {
    if (lag.lag < 0) continue;
    metrics_
        ->Gauge(m::kConsumerLag,
                {{std::string(m::kLabelTopic), lag.partition.topic},
                 {std::string(m::kLabelPartition), std::to_string(lag.partition.partition)}})
        .Set(static_cast<double>(lag.lag));
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
  paused_ = false;
  WEIR_ASSIGN_OR_RAISE(consumer_, kafka::Consumer::Make(options_.consumer, this));
  consumer_->SetStatisticsSink([this](std::string_view json) { kafka_statistics_.Update(json); });
  return Status::OK();
}

Status Pipeline::Run(std::stop_token stop) {
  // The flush threads' waits end when `stop` is requested (from whichever thread requests it).
  const std::stop_callback forward(stop, [this] { stopping_.request_stop(); });
  Backoff reconnect(BackoffPolicy{}, std::random_device{}());
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
    auto polled = consumer_->Poll(std::chrono::milliseconds(100), options_.consume_batch_size,
                                  [this](const kafka::Message& message) { Accept(message); });
    if (!polled.ok()) {
      if (ClassOf(polled.status()) != ErrorClass::kRetriable) {
        result = polled.status();
        break;
      }
      const auto delay = reconnect.Next();
      if (!delay) {
        result = WithContext(polled.status(), "Kafka consumer (retry budget spent)");
        break;
      }
      spdlog::warn("Kafka consumer failed ({}); reconnecting in {} ms", polled.status().message(),
                   delay->count());
      DropConsumer();
      if (!WaitFor(*delay, stop)) break;  // stopping: nothing is buffered, nothing to drain
      WEIR_RETURN_NOT_OK(ConnectConsumer());
      continue;
    }
    if (*polled > 0) reconnect.Reset();
    SealDue(SteadyClock::now());
    ApplyBackpressure();
    CommitKafkaOffsets();
    PublishLag();
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
