// Pipeline's decoding and sealing: each record decoded into a shard (on the poll thread or a
// decode worker), its rejects and field events counted, and a dataset's shards sealed into the
// parts and flushes the flush thread writes.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "ingest/pipeline.h"
#include "ingest/pipeline_dataset.h"
#include "ingest/upsert_rows.h"

namespace weir::ingest {

Pipeline::SteadyDuration Pipeline::Decode(Dataset& d, DecodeShard& shard,
                                          const kafka::Message& message, HeaderValues headers) {
  const int64_t field_events = shard.builder->stats().field_events;
  const auto decode_start = SteadyClock::now();
  const bool upsert = !d.options.config.upsert_key.empty();
  const bool tombstone = upsert && message.payload.empty() && !message.key_is_null;
  std::string_view record = message.payload;
  Status appended;
  if (tombstone) {
    record = message.key;  // a tombstone's row holds its key only
  } else if (upsert && d.options.upsert_key_from_kafka_key) {
    auto spliced = WithKeyFields(message.key_is_null ? std::string_view() : message.key,
                                 message.payload, shard.spliced);
    if (spliced.ok()) {
      record = shard.spliced;
    } else {
      appended = spliced;
    }
  }
  if (appended.ok()) appended = shard.builder->Append(record);
  const auto elapsed = SteadyClock::now() - decode_start;
  // Named only for a log line or an error (a string per record costs).
  auto tp = [&] { return kafka::TopicPartition{std::string(message.topic), message.partition}; };
  if (shard.builder->stats().field_events != field_events) {
    d.stages->NoteFieldEvents(*shard.builder, tp(), message.offset,
                              shard.builder->stats().field_events - field_events);
  }
  if (appended.ok()) {
    if (shard.metadata) {
      records::RecordMetadata meta;
      meta.topic = message.topic;
      meta.partition = message.partition;
      meta.offset = message.offset;
      meta.timestamp_ms = message.timestamp_ms;
      if (!message.key_is_null) meta.key = message.key;
      meta.headers.assign(headers.begin(), headers.end());
      if (Status added = shard.metadata->Append(meta); !added.ok()) {
        SetFatal(WithContext(added, "metadata columns of " + kafka::ToString(tp())));
      }
    }
    if (d.router) {
      shard.row_partitions.push_back(message.partition);
      shard.row_offsets.push_back(message.offset);
    }
    if (upsert) shard.row_tombstones.push_back(tombstone);
    return elapsed;
  }
  const ErrorDetail* detail = GetErrorDetail(appended);
  if (detail == nullptr || detail->error_class() != ErrorClass::kBadData) {
    SetFatal(WithContext(
        appended, fmt::format("decoding {} offset {}", kafka::ToString(tp()), message.offset)));
    return elapsed;
  }
  metrics_
      ->Counter(m::kRecordsRejected, {{std::string(m::kLabelDataset), d.options.config.name},
                                      {std::string(m::kLabelReason), detail->code()}})
      .Increment();
  if (d.status != nullptr) d.status->Rejected(detail->code());
  if (!d.options.config.rejects_enabled) return elapsed;
  RejectRecord reject = MakeReject(message, detail->code(), appended,
                                   static_cast<size_t>(d.options.config.rejects_payload_limit));
  shard.reject_bytes += static_cast<int64_t>(reject.payload.size() + 128);
  shard.rejects.push_back(std::move(reject));
  return elapsed;
}

void Pipeline::AddFieldCounts(const std::string& dataset, const observe::MetricDef& metric,
                              const std::map<std::string, int64_t>& counts) {
  for (const auto& [reason, count] : counts) {
    if (count > 0) {
      metrics_
          ->Counter(metric, {{std::string(m::kLabelDataset), dataset},
                             {std::string(m::kLabelReason), reason}})
          .Increment(static_cast<double>(count));
    }
  }
}

void Pipeline::PublishDecodeStats(Dataset& d, DecodeShard& shard) {
  d.stages->PublishDecodeStats(shard.builder->stats(), &shard.published);
}

Result<std::shared_ptr<arrow::RecordBatch>> Pipeline::FinishBatch(Dataset& d, DecodeShard& shard) {
  const auto seal_start = SteadyClock::now();
  auto batch = shard.builder->Finish();
  if (batch.ok()) {
    batch = d.stages->AttachMetadata(shard.metadata.get(), std::move(*batch), &shard.published);
  }
  if (batch.ok() && !d.options.config.upsert_key.empty()) {
    batch = WithTombstoneColumn(std::move(*batch), shard.row_tombstones);
  }
  shard.row_tombstones.clear();
  if (shard.decode_time != SteadyDuration::zero()) {  // a worker's, counted at the part's end
    stage_times_.decode.Increment(StageTimes::Seconds(shard.decode_time));
    shard.decode_time = {};
  }
  shard.decoded.store(0);
  shard.buffered.store(shard.reject_bytes);
  stage_times_.seal.Increment(StageTimes::Seconds(SteadyClock::now() - seal_start));
  if (!batch.ok()) return WithContext(batch.status(), "dataset " + d.options.config.name);
  PublishDecodeStats(d, shard);
  return batch;
}

void Pipeline::QueuePart(Dataset& d, DecodeShard& shard) {
  const int64_t bytes = shard.decoded_bytes();
  if (shard.builder->buffered_bytes() == 0) return;
  auto batch = FinishBatch(d, shard);
  if (!batch.ok()) {
    SetFatal(batch.status());
    return;
  }
  SealedFlush part;
  part.part = true;
  part.batch = std::move(*batch);
  part.bytes = bytes;
  d.part_bytes += bytes;
  ++d.parts;
  inflight_bytes_ += bytes;
  {
    std::lock_guard lock(d.mutex);
    d.queue.push_back(std::move(part));
    d.queued_part_bytes += bytes;
  }
  d.changed.notify_all();
}

void Pipeline::SealPart(Dataset& d) {
  if (d.records == 0) return;
  if (d.workers) d.workers->Drain();  // what they decoded is the poll thread's again
  for (auto& shard : d.shards) QueuePart(d, *shard);
}

void Pipeline::Seal(Dataset& d) {
  if (d.records == 0) return;
  if (d.workers) d.workers->Drain();
  // With decode workers, every shard's rows but the last's go as parts of the flush, and the
  // last's with the flush itself.
  size_t last = 0;
  for (size_t i = 0; i < d.shards.size(); ++i) {
    if (d.shards[i]->builder->num_rows() > 0) last = i;
  }
  for (size_t i = 0; i < d.shards.size(); ++i) {
    if (i != last) QueuePart(d, *d.shards[i]);
  }
  DecodeShard& shard = *d.shards[last];
  SealedFlush flush;
  for (auto& other : d.shards) {
    flush.bytes += other.get() == &shard ? other->buffered_bytes() : other->reject_bytes;
  }
  auto batch = FinishBatch(d, shard);
  if (!batch.ok()) {
    SetFatal(batch.status());
    return;
  }
  flush.row_partitions = std::move(shard.row_partitions);
  flush.row_offsets = std::move(shard.row_offsets);
  shard.row_partitions.clear();
  shard.row_offsets.clear();
  flush.batch = std::move(*batch);
  for (auto& each : d.shards) {
    std::move(each->rejects.begin(), each->rejects.end(), std::back_inserter(flush.rejects));
    each->rejects.clear();
    each->reject_bytes = 0;
    each->buffered.store(0);
  }
  flush.records = d.records;
  for (auto& [partition, range] : d.ranges) flush.offsets.push_back(range);
  d.ranges.clear();
  d.records = 0;
  d.part_bytes = 0;
  d.parts = 0;
  inflight_bytes_ += flush.bytes;
  {
    std::lock_guard lock(d.mutex);
    d.queue.push_back(std::move(flush));
  }
  d.changed.notify_all();
}

}  // namespace weir::ingest
