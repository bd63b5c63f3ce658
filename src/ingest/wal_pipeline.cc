#include "ingest/wal_pipeline.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/retry.h"
#include "ingest/coercion_metrics.h"
#include "ingest/filter_metrics.h"
#include "ingest/rejects.h"
#include "ingest/wal_pipeline_dataset.h"
#include "ingest/wal_rows.h"
#include "kafka/admin.h"
#include "observe/metric_names.h"
#include "records/mapped_batch_builder.h"
#include "wal/fault.h"
#include "wal/lake_probe.h"
#include "wal/recovery.h"
#include "wal/segment_metadata.h"
#include "wal/wal_directory.h"

namespace weir::ingest {
namespace {

namespace m = observe;
using SteadyClock = std::chrono::steady_clock;

// The group's committed offsets of `topic`; a retriable error (a new group's coordinator not
// ready yet) is retried for up to 30 s.
Result<std::map<int32_t, int64_t>> CommittedOffsets(const kafka::ConsumerConfig& consumer,
                                                    const std::string& topic) {
  kafka::ConsumerConfig of_topic = consumer;
  of_topic.topics = {topic};
  return kafka::GroupCommittedOffsetsWithin(of_topic, topic, std::chrono::seconds(30));
}

lake::TableSpec RejectsSpec(const DatasetConfig& config) {
  return lake::TableSpec{config.schema, config.table + "_rejects", RejectsColumns(), {}, {}};
}

}  // namespace

std::string WalDatasetDirectory(const std::string& wal_dir, const std::string& dataset) {
  return (std::filesystem::path(wal_dir) / dataset).string();
}

WalPipeline::WalPipeline(PipelineOptions options, WalModeOptions wal, lake::Catalog* catalog,
                         observe::MetricsRegistry* metrics)
    : options_(std::move(options)),
      wal_(std::move(wal)),
      catalog_(catalog),
      metrics_(metrics),
      progress_(metrics, options_.status),
      watermark_(wal_.disk_high_watermark_pct) {
  last_loop_.store(SteadyClock::now());
}

WalPipeline::~WalPipeline() {
  if (commit_loop_) commit_loop_->Stop();
}

Result<std::unique_ptr<WalPipeline>> WalPipeline::Make(PipelineOptions options, WalModeOptions wal,
                                                       lake::Catalog* catalog,
                                                       observe::MetricsRegistry* metrics) {
  if (options.source) {
    return Status::Invalid("ingest.mode: wal reads Kafka only (weir ingest --from is direct)");
  }
  std::unique_ptr<WalPipeline> p(
      new WalPipeline(std::move(options), std::move(wal), catalog, metrics));
  p->options_.consumer.topics.clear();
  WalCommitLoopOptions loop;
  loop.bootstrap_servers = p->options_.consumer.bootstrap_servers;
  loop.commit_interval = p->wal_.commit_interval;
  loop.upload_interval = p->wal_.upload_interval;
  loop.rotation_mutex = &p->rotating_;
  loop.progress = &p->progress_;
  const uint64_t seed = std::random_device{}();
  for (const auto& o : p->options_.datasets) {
    const std::string setting = "datasets[" + o.config.name + "]";
    if (o.route) return Status::Invalid(setting, ".route: routing is direct mode's only");
    WEIR_RETURN_NOT_OK(catalog->CheckSpec(DatasetWriter::Spec(o.config), setting));
    auto d = std::make_unique<Dataset>();
    d->options = o;
    d->directory = WalDatasetDirectory(p->wal_.dir, o.config.name);
    WEIR_ASSIGN_OR_RAISE(d->builder, RecordStages::MakeDecoder(o, arrow::default_memory_pool()));
    WEIR_ASSIGN_OR_RAISE(d->metadata,
                         RecordStages::MakeMetadataBuilder(o, arrow::default_memory_pool()));
    d->rows = std::make_unique<WalTableRows>(o.config, catalog);
    wal::SegmentFileOptions file_options;
    file_options.file = o.config.file;
    file_options.metadata["weir.dataset"] = o.config.name;
    d->rotator = std::make_unique<wal::SegmentRotator>(d->directory, p->wal_.limits, file_options,
                                                       wal::CreateParquetSegment, Clock::System(),
                                                       seed + p->datasets_.size());
    const m::Labels labels{{std::string(m::kLabelDataset), o.config.name}};
    d->consumed = &metrics->Counter(m::kRecordsConsumed, labels);
    d->redelivered = &metrics->Counter(m::kRecordsRedelivered, labels);
    auto with_reason = [&](std::string reason) {
      auto l = labels;
      l[std::string(m::kLabelReason)] = std::move(reason);
      return l;
    };
    d->nulled = &metrics->Counter(m::kValuesNulled, with_reason("type_mismatch"));
    d->stages = std::make_unique<RecordStages>(d->options, *metrics, p->field_log_limiter_);
    d->rotations = &metrics->Counter(m::kWalRotations, labels);
    d->status = p->progress_.AddDataset(o.config.name, o.config.topic);
    if (p->by_topic_.count(o.config.topic)) {
      return Status::Invalid("topic ", o.config.topic, " feeds two datasets");
    }
    p->by_topic_[o.config.topic] = d.get();
    p->options_.consumer.topics.push_back(o.config.topic);
    WalDatasetLocation location{o.config.name, d->directory, DatasetWriter::Spec(o.config), {}, {}};
    if (o.config.rejects_enabled) location.rejects = RejectsSpec(o.config);
    if (o.config.wal_bloom_sidecar)
      location.bloom_sidecar_columns = o.config.file.bloom_filter_columns;
    loop.datasets.push_back(std::move(location));
    p->datasets_.push_back(std::move(d));
  }
  p->commit_loop_ = std::make_unique<WalCommitLoop>(std::move(loop), catalog, metrics);
  return p;
}

void WalPipeline::SetFatal(Status status) {
  if (fatal_.ok()) fatal_ = std::move(status);
}

Status WalPipeline::Recover(const std::stop_token& stop) {
  // A catalog that fails retriably (a database restarting, 08001) is retried as the startup
  // probe retries it, within startup.timeout; a permanent failure stops at once.
  BackoffPolicy policy;
  policy.initial = std::chrono::milliseconds(500);
  policy.cap = std::chrono::milliseconds(5000);
  policy.max_attempts = 0;
  policy.max_elapsed = wal_.recovery_deadline;
  wal::FaultPause("pause_before_recovery");
  for (auto& d : datasets_) {
    const std::string& name = d->options.config.name;
    std::error_code ec;
    std::filesystem::create_directories(d->directory, ec);
    if (ec) return Status::IOError("WAL directory ", d->directory, ": ", ec.message());
    WEIR_ASSIGN_OR_RAISE(const auto entries, wal::ListSegments(d->directory));
    auto offsets = CommittedOffsets(options_.consumer, d->options.config.topic);
    if (!offsets.ok()) {
      return WithContext(offsets.status(),
                         "WAL recovery of dataset " + name +
                             ": cannot read the committed offsets (recovery never guesses)");
    }
    wal::CommittedOffsets committed;
    for (const auto& [partition, offset] : *offsets) {
      committed[{d->options.config.topic, partition}] = offset;
    }
    const std::string what = "WAL recovery of dataset " + name;
    lake::OpenResult table;
    auto plan = Retry(policy, stop, what, [&]() -> Result<std::vector<wal::RecoveryDecision>> {
      WEIR_ASSIGN_OR_RAISE(table, catalog_->OpenTable(DatasetWriter::Spec(d->options.config),
                                                      lake::OpenMode::kOpenOnly));
      wal::LakeTableProbe probe(table.status == lake::OpenStatus::kOpened ? table.table.get()
                                                                          : nullptr);
      return wal::PlanRecovery(entries, committed, probe);
    });
    if (!plan.ok()) return WithContext(plan.status(), what);
    std::map<wal::RecoveryAction, int> counts;
    for (const auto& decision : *plan) ++counts[decision.action];
    WEIR_RETURN_NOT_OK(
        WithContext(wal::ApplyRecovery(d->directory, *plan), "WAL recovery of dataset " + name));
    spdlog::info(
        "dataset {}: WAL recovery of {}: {} file(s) deleted, {} kept, {} local copies of "
        "committed files deleted",
        name, d->directory, counts[wal::RecoveryAction::kDelete],
        counts[wal::RecoveryAction::kKeep], counts[wal::RecoveryAction::kDeleteLocal]);
  }
  return Status::OK();
}

Result<std::map<kafka::TopicPartition, int64_t>> WalPipeline::OnAssigned(
    const std::vector<kafka::TopicPartition>& partitions) {
  for (auto& d : datasets_) WEIR_RETURN_NOT_OK(WriteDecoded(*d));
  std::map<kafka::TopicPartition, int64_t> starts, lake_next;
  std::map<std::string, std::map<int32_t, int64_t>> ledgers, committed;
  for (const auto& tp : partitions) {
    auto found = by_topic_.find(tp.topic);
    if (found == by_topic_.end()) continue;
    Dataset& d = *found->second;
    if (!ledgers.count(tp.topic)) {
      WEIR_ASSIGN_OR_RAISE(ledgers[tp.topic], DatasetWriter::ReadLedger(*catalog_, d.options.config,
                                                                        d.ledger_table, tp.topic));
      auto offsets = CommittedOffsets(options_.consumer, tp.topic);
      if (!offsets.ok()) return WithContext(offsets.status(), "reading the committed offsets");
      committed[tp.topic] = std::move(*offsets);
    }
    std::optional<int64_t> start;
    if (auto at = ledgers[tp.topic].find(tp.partition); at != ledgers[tp.topic].end()) {
      start = at->second;
    }
    if (auto at = committed[tp.topic].find(tp.partition); at != committed[tp.topic].end()) {
      start = std::max(start.value_or(at->second), at->second);
    }
    if (!start) {
      // Neither has an offset: the partition begins here, which is then its origin.
      WEIR_ASSIGN_OR_RAISE(const auto marks, kafka::Watermarks(options_.consumer.bootstrap_servers,
                                                               tp.topic, tp.partition));
      start = options_.consumer.auto_offset_reset == "latest" ? marks.second : marks.first;
      commit_loop_->SetOrigin(tp.topic, tp.partition, *start);
    }
    {
      // Files of an earlier ownership whose offsets the group refused never counted.
      std::lock_guard rotating(rotating_);
      WEIR_RETURN_NOT_OK(DiscardPending(tp));
    }
    if (d.rotator->Holds(tp.topic, tp.partition)) {
      WEIR_RETURN_NOT_OK(d.rotator->Drop(tp.topic, tp.partition));
    }
    WEIR_RETURN_NOT_OK(d.rotator->Assign(tp.topic, tp.partition, *start));
    // What the lake holds: the ledger's offset; without one, nothing before the start is
    // known to wait (a file of an earlier owner counts once its commit lands).
    auto in_lake = ledgers[tp.topic].find(tp.partition);
    lake_next[tp] = in_lake != ledgers[tp.topic].end() ? in_lake->second : *start;
    starts[tp] = *start;
    next_offset_[tp] = *start;
  }
  spdlog::info("WAL mode: assigned {} partition(s)", starts.size());
  progress_.Assigned(partitions, lake_next);
  ready_.store(true);
  return starts;
}

Status WalPipeline::Release(const std::vector<kafka::TopicPartition>& partitions) {
  for (auto& d : datasets_) WEIR_RETURN_NOT_OK(WriteDecoded(*d));
  std::vector<wal::Rotation> rotations;
  std::lock_guard rotating(rotating_);
  progress_.Released(partitions);
  for (const auto& tp : partitions) {
    next_offset_.erase(tp);
    auto found = by_topic_.find(tp.topic);
    if (found == by_topic_.end() || !found->second->rotator->Holds(tp.topic, tp.partition)) {
      continue;
    }
    WEIR_ASSIGN_OR_RAISE(auto rotation, found->second->rotator->Release(tp.topic, tp.partition));
    if (rotation) rotations.push_back(std::move(*rotation));
  }
  return CommitRotations(rotations);
}

void WalPipeline::OnRevoked(const std::vector<kafka::TopicPartition>& partitions) {
  if (!fatal_.ok()) {
    OnLost(partitions);
    return;
  }
  if (Status released = Release(partitions); !released.ok()) SetFatal(released);
  spdlog::info("WAL mode: revoked {} partition(s), their segments rotated", partitions.size());
}

void WalPipeline::OnLost(const std::vector<kafka::TopicPartition>& partitions) {
  for (auto& d : datasets_) {
    d->row_partitions.clear();
    d->last_offset.clear();
    d->rejects.clear();
    if (d->builder->num_rows() > 0) (void)d->builder->Finish();
    if (d->metadata) d->metadata->Reset();
  }
  std::lock_guard rotating(rotating_);
  for (const auto& tp : partitions) {
    if (Status discarded = DiscardPending(tp); !discarded.ok()) SetFatal(discarded);
    next_offset_.erase(tp);
    auto found = by_topic_.find(tp.topic);
    if (found == by_topic_.end() || !found->second->rotator->Holds(tp.topic, tp.partition)) {
      continue;
    }
    if (Status dropped = found->second->rotator->Drop(tp.topic, tp.partition); !dropped.ok()) {
      SetFatal(dropped);
    }
  }
  progress_.Released(partitions);
  spdlog::warn("WAL mode: lost {} partition(s); their open segments deleted", partitions.size());
}

void WalPipeline::Accept(const kafka::Message& message) {
  auto found = by_topic_.find(message.topic);
  if (found == by_topic_.end() || !fatal_.ok()) return;
  Dataset& d = *found->second;
  const kafka::TopicPartition tp{std::string(message.topic), message.partition};
  auto next = next_offset_.find(tp);
  if (next == next_offset_.end() || message.offset < next->second) {
    d.redelivered->Increment();  // taken already (or not ours): it would land twice
    return;
  }
  next->second = message.offset + 1;
  d.last_offset[message.partition] = message.offset;
  d.consumed->Increment();
  if (d.status != nullptr) d.status->Consumed(static_cast<int64_t>(message.payload.size()));
  const int64_t field_events = d.builder->stats().field_events;
  const Status appended = d.builder->Append(message.payload);
  if (d.builder->stats().field_events != field_events) {
    d.stages->NoteFieldEvents(*d.builder, tp, message.offset,
                              d.builder->stats().field_events - field_events);
  }
  if (appended.ok()) {
    d.row_partitions.push_back(message.partition);
    if (d.metadata) {
      records::RecordMetadata meta;
      meta.topic = message.topic;
      meta.partition = message.partition;
      meta.offset = message.offset;
      meta.timestamp_ms = message.timestamp_ms;
      if (!message.key_is_null) meta.key = message.key;
      for (const auto& header : d.metadata->header_names()) {
        meta.headers.push_back(kafka::HeaderValue(message, header));
      }
      if (Status added = d.metadata->Append(meta); !added.ok()) SetFatal(added);
    }
    return;
  }
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
  if (d.status != nullptr) d.status->Rejected(detail->code());
  if (!d.options.config.rejects_enabled) return;
  // As direct mode's reject; it goes to the partition's rejects segment at the next write.
  RejectRecord reject = MakeReject(message, detail->code(), appended,
                                   static_cast<size_t>(d.options.config.rejects_payload_limit));
  d.rejects[message.partition].push_back(std::move(reject));
}

Result<wal::PartitionRows> WalPipeline::RejectRows(Dataset& d,
                                                   const std::vector<RejectRecord>& rejects) {
  if (!d.rejects_table) {
    WEIR_ASSIGN_OR_RAISE(auto opened, catalog_->OpenTable(RejectsSpec(d.options.config),
                                                          lake::OpenMode::kOpenOrCreate));
    if (opened.status != lake::OpenStatus::kOpened) {
      return ClassifiedError(
          ErrorClass::kFatal, "ingest", "rejects_refused",
          fmt::format("dataset {}: creating {}.{}_rejects: {}", d.options.config.name,
                      d.options.config.schema, d.options.config.table, opened.reason));
    }
    d.rejects_table = std::move(opened.table);
  }
  WEIR_ASSIGN_OR_RAISE(auto batch, RejectsBatch(rejects, d.rejects_table->columns()));
  return wal::PartitionRows{wal::kRejectsPartitionKey, wal::RejectsMetadata(), std::move(batch)};
}

namespace {
constexpr const char* kPartitionColumn = "\x01partition";
}  // namespace

Status WalPipeline::WriteDecoded(Dataset& d) {
  if (d.last_offset.empty()) return Status::OK();
  const std::string& name = d.options.config.name;
  const std::string& topic = d.options.config.topic;
  std::shared_ptr<arrow::RecordBatch> batch;
  // Each row's Kafka partition, as it leaves the record stages (the filters drop rows).
  std::shared_ptr<arrow::Int32Array> row_partition;
  if (!d.row_partitions.empty()) {
    WEIR_ASSIGN_OR_RAISE(batch, d.builder->Finish());
    WEIR_ASSIGN_OR_RAISE(
        batch, d.stages->AttachMetadata(d.metadata.get(), std::move(batch), &d.published));
    // The stages run once on every partition's rows, as direct mode runs them once a flush; the
    // partitions ride along as a column no payload field can be named (the field-name policy
    // refuses control characters).
    arrow::Int32Builder partitions;
    WEIR_RETURN_NOT_OK(partitions.AppendValues(d.row_partitions));
    WEIR_ASSIGN_OR_RAISE(auto partition_column, partitions.Finish());
    const int position = batch->num_columns();
    WEIR_ASSIGN_OR_RAISE(batch,
                         batch->AddColumn(position, arrow::field(kPartitionColumn, arrow::int32()),
                                          partition_column));
    records::FilterOutcome filtered;
    WEIR_ASSIGN_OR_RAISE(batch, d.stages->Apply(std::move(batch), &filtered));
    PublishFilterOutcome(*metrics_, name, filtered);
    const int at = batch->schema()->GetFieldIndex(kPartitionColumn);
    if (at < 0) return Status::Invalid("dataset ", name, ": the record stages lost the partitions");
    row_partition = std::static_pointer_cast<arrow::Int32Array>(batch->column(at));
    WEIR_ASSIGN_OR_RAISE(batch, batch->RemoveColumn(at));
  }
  d.stages->PublishDecodeStats(d.builder->stats(), &d.published);
  const auto last_offset = std::move(d.last_offset);
  auto rejects = std::move(d.rejects);
  d.row_partitions.clear();
  d.last_offset.clear();
  d.rejects.clear();
  const int64_t now_us = UnixMicros(Clock::System().Now());
  for (const auto& [partition, last] : last_offset) {
    std::shared_ptr<arrow::RecordBatch> part;
    if (batch) {
      arrow::Int64Builder indices;
      for (int64_t i = 0; i < row_partition->length(); ++i) {
        if (row_partition->Value(i) == partition) WEIR_RETURN_NOT_OK(indices.Append(i));
      }
      if (indices.length() == batch->num_rows()) {
        part = batch;
      } else if (indices.length() > 0) {
        WEIR_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
        WEIR_ASSIGN_OR_RAISE(auto taken,
                             arrow::compute::Take(arrow::Datum(batch), arrow::Datum(index_array)));
        part = taken.record_batch();
      }
    }
    std::vector<wal::PartitionRows> rows;
    if (part && part->num_rows() > 0) {
      int64_t nulled = 0;
      WEIR_ASSIGN_OR_RAISE(rows, d.rows->Shape(*part, now_us, &nulled));
      d.nulled->Increment(static_cast<double>(nulled));
    }
    // The partition's rejects are one more segment of its rotation group: they rotate, upload
    // and commit with its rows, under the same offset range.
    if (auto at = rejects.find(partition); at != rejects.end() && !at->second.empty()) {
      WEIR_ASSIGN_OR_RAISE(auto reject_rows, RejectRows(d, at->second));
      rows.push_back(std::move(reject_rows));
    }
    std::vector<wal::Rotation> rotations;
    std::lock_guard rotating(rotating_);
    if (rows.empty()) {
      WEIR_RETURN_NOT_OK(d.rotator->Advance(topic, partition, last));
    } else {
      WEIR_ASSIGN_OR_RAISE(rotations, d.rotator->Append(topic, partition, rows, last));
    }
    WEIR_RETURN_NOT_OK(CommitRotations(rotations));
  }
  return Status::OK();
}

void WalPipeline::PublishPaused(const std::vector<kafka::TopicPartition>& paused,
                                const std::string& reason) {
  for (auto& d : datasets_) {
    if (d->status == nullptr) continue;
    observe::PausedState state;
    for (const auto& tp : paused) {
      if (tp.topic == d->options.config.topic) state.partitions.push_back(tp.partition);
    }
    if (!state.partitions.empty()) state.reason = reason;
    d->status->SetPaused(std::move(state));
  }
}

void WalPipeline::MeasureDisk() {
  auto pause = watermark_.Measure(wal_.dir);
  metrics_->Gauge(m::kWalVolumeUsed, {}).Set(watermark_.used_pct() / 100.0);
  observe::WalState wal_state{.wal_mode = true};
  std::optional<std::filesystem::file_time_type> oldest_ready;
  for (auto& d : datasets_) {
    auto entries = wal::ListSegments(d->directory);
    if (!entries.ok()) continue;
    for (const auto& entry : *entries) {
      if (!entry.name) continue;
      ++wal_state.segments;
      wal_state.bytes += entry.size_bytes;
      if (entry.name->state != wal::SegmentState::kReady) continue;
      std::error_code ec;
      const auto written = std::filesystem::last_write_time(entry.path, ec);
      if (!ec && (!oldest_ready || written < *oldest_ready)) oldest_ready = written;
    }
    const auto totals = wal::TotalsByState(*entries);
    for (const char* state : {"active", "ready"}) {
      const auto at = totals.find(state);
      const m::Labels labels{{std::string(m::kLabelDataset), d->options.config.name},
                             {std::string(m::kLabelState), state}};
      metrics_->Gauge(m::kWalFiles, labels)
          .Set(static_cast<double>(at == totals.end() ? 0 : at->second.files));
      metrics_->Gauge(m::kWalBytes, labels)
          .Set(static_cast<double>(at == totals.end() ? 0 : at->second.bytes));
    }
  }
  if (oldest_ready) {
    wal_state.oldest_unconfirmed_unix_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::file_clock::to_sys(*oldest_ready).time_since_epoch())
            .count();
  }
  if (options_.status != nullptr) options_.status->SetWal(wal_state);
  if (!pause.ok() || !consumer_) return;
  const auto owned = consumer_->Assignment();
  if (*pause) {
    // Again at every measurement: partitions assigned since are paused too.
    if (consumer_->Pause(owned).ok()) {
      metrics_->Gauge(m::kPausedPartitions, {}).Set(static_cast<double>(owned.size()));
      if (!paused_) {
        spdlog::warn(
            "WAL volume {:.1f} % used (wal.disk_high_watermark_pct {}): {} partition(s) "
            "paused; records wait in Kafka",
            watermark_.used_pct(), wal_.disk_high_watermark_pct, owned.size());
      }
      paused_ = true;
      PublishPaused(owned, fmt::format("WAL volume {:.1f} % used (wal.disk_high_watermark_pct {})",
                                       watermark_.used_pct(), wal_.disk_high_watermark_pct));
    }
  } else if (paused_) {
    if (consumer_->Resume(owned).ok()) {
      paused_ = false;
      metrics_->Gauge(m::kPausedPartitions, {}).Set(0);
      PublishPaused({}, "");
      spdlog::info("WAL volume {:.1f} % used: partitions resumed", watermark_.used_pct());
    }
  }
}

Status WalPipeline::Run(std::stop_token stop) {
  std::error_code ec;
  std::filesystem::create_directories(wal_.dir, ec);
  if (ec) return Status::IOError("wal.dir ", wal_.dir, ": ", ec.message());
  WEIR_RETURN_NOT_OK(Recover(stop));
  commit_loop_->Start();
  WEIR_ASSIGN_OR_RAISE(consumer_,
                       MakeKafkaSource(options_.consumer, this, [](std::string_view) {}));
  Status result;
  SourceRetry reconnect;
  auto next_age = SteadyClock::now() + wal_.age_check_interval;
  auto next_disk = SteadyClock::now();
  while (!stop.stop_requested()) {
    last_loop_.store(SteadyClock::now());
    if (!fatal_.ok()) {
      result = fatal_;
      break;
    }
    if (Status failed = commit_loop_->fatal(); !failed.ok()) {
      result = failed;
      break;
    }
    auto polled = consumer_->Poll(std::chrono::milliseconds(100), options_.consume_batch_size,
                                  [this](const kafka::Message& message) { Accept(message); });
    if (!polled.ok()) {
      const auto delay = reconnect.Failed(polled.status());
      if (!delay.ok()) {
        result = delay.status();
        break;
      }
      // The consumer stays failed: its revocation rotates (or, lost, deletes) the open
      // segments; the new one starts each partition from the ledger and the group's offsets.
      (void)consumer_->Close();
      consumer_.reset();
      if (!WaitFor(*delay, stop)) break;
      WEIR_ASSIGN_OR_RAISE(consumer_,
                           MakeKafkaSource(options_.consumer, this, [](std::string_view) {}));
      continue;
    }
    if (*polled > 0) reconnect.Delivered();
    for (auto& d : datasets_) {
      if (Status written = WriteDecoded(*d); !written.ok()) SetFatal(written);
    }
    if (!pending_.empty()) {
      // Offsets a rebalance refused for partitions this member kept: again, now that the
      // poll has served the rebalance.
      std::lock_guard rotating(rotating_);
      if (Status retried = CommitRotations({}); !retried.ok()) SetFatal(retried);
    }
    const auto now = SteadyClock::now();
    if (now >= next_age) {
      next_age = now + wal_.age_check_interval;
      for (auto& d : datasets_) {
        std::lock_guard rotating(rotating_);
        auto aged = d->rotator->RotateAged();
        Status done = aged.ok() ? CommitRotations(*aged) : aged.status();
        if (!done.ok()) SetFatal(done);
      }
    }
    if (now >= next_disk) {
      next_disk = now + wal_.disk_interval;
      MeasureDisk();
    }
    progress_.Publish(consumer_.get());
    if (options_.status != nullptr) options_.status->Tick();
  }
  ready_.store(false);
  if (!result.ok() || !fatal_.ok()) {
    // A WAL or commit failure: nothing more is rotated or committed; recovery at the next
    // start sorts the files out.
    if (result.ok()) result = fatal_;
    if (consumer_) (void)consumer_->Close();
    consumer_.reset();
    commit_loop_->Stop();
    return result;
  }
  // The seed's shutdown order. 1: release the partitions with rotation.
  const auto begun = SteadyClock::now();
  const auto deadline = begun + options_.drain_timeout;
  const auto release_budget =
      std::min<SteadyClock::duration>(options_.drain_timeout / 4, std::chrono::seconds(10));
  spdlog::info("draining: rotating the open segments and leaving the group (deadline {} s)",
               std::chrono::duration_cast<std::chrono::seconds>(options_.drain_timeout).count());
  for (auto& d : datasets_) {
    Status done = WriteDecoded(*d);
    if (done.ok()) {
      std::lock_guard rotating(rotating_);
      auto rotated = d->rotator->RotateAll();
      done = rotated.ok() ? CommitRotations(*rotated) : rotated.status();
    }
    if (!done.ok()) SetFatal(done);
  }
  if (consumer_) (void)consumer_->Close();  // the revocation rotates nothing more
  consumer_.reset();
  if (SteadyClock::now() - begun > release_budget) {
    spdlog::warn("draining: releasing the partitions took longer than its budget");
  }
  if (!fatal_.ok()) {
    commit_loop_->Stop();
    return fatal_;
  }
  // 2 and 3: upload and commit what is ready.
  spdlog::info("draining: uploading and committing the ready WAL files");
  const bool drained = commit_loop_->Drain(deadline);
  if (Status failed = commit_loop_->fatal(); !failed.ok()) result = failed;
  if (!drained && result.ok()) {
    result = Status::IOError(
        "drain timeout of ", options_.drain_timeout.count(),
        " ms passed with WAL files not committed; recovery finishes them at the next start");
  }
  return result;
}

}  // namespace weir::ingest
