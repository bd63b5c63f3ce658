#include "ingest/record_stages.h"

#include <chrono>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "decode/json_batch_builder.h"
#include "ingest/coercion_metrics.h"
#include "observe/metric_names.h"
#include "records/mapped_batch_builder.h"

namespace weir::ingest {
namespace m = observe;

namespace {

m::Labels WithReason(const std::string& dataset, std::string reason) {
  return {{std::string(m::kLabelDataset), dataset}, {std::string(m::kLabelReason), reason}};
}

}  // namespace

RecordStages::RecordStages(const DatasetOptions& options, observe::MetricsRegistry& metrics,
                           LogRateLimiter& limiter)
    : options_(options),
      metrics_(metrics),
      limiter_(limiter),
      lossy_(metrics.Counter(m::kValuesNulled,
                             WithReason(options.config.name, "integer_beyond_int64"))),
      coercion_nulled_(
          metrics.Counter(m::kValuesNulled, WithReason(options.config.name, "column_coercion"))),
      metadata_nulled_(
          metrics.Counter(m::kValuesNulled, WithReason(options.config.name, "invalid_utf8"))),
      metadata_dropped_(
          metrics.Counter(m::kFieldsDropped, WithReason(options.config.name, "metadata_column"))),
      variant_nulled_(metrics.Counter(m::kValuesNulled,
                                      WithReason(options.config.name, "variant_invalid_json"))),
      variant_fields_dropped_(metrics.Counter(
          m::kFieldsDropped, WithReason(options.config.name, "variant_companion"))) {}

Result<std::unique_ptr<decode::RecordDecoder>> RecordStages::MakeDecoder(
    const DatasetOptions& options, arrow::MemoryPool* pool) {
  if (options.mapping)
    return records::MappedBatchBuilder::Make(options.mapping, options.decode, pool);
  return decode::JsonBatchBuilder::Make(options.decode, pool);
}

Result<std::unique_ptr<records::MetadataColumnsBuilder>> RecordStages::MakeMetadataBuilder(
    const DatasetOptions& options, arrow::MemoryPool* pool) {
  if (options.metadata_columns.empty()) return nullptr;
  return records::MetadataColumnsBuilder::Make(options.metadata_columns, pool);
}

void RecordStages::AddFieldCounts(const observe::MetricDef& metric,
                                  const std::map<std::string, int64_t>& counts,
                                  const std::map<std::string, int64_t>& before) {
  for (const auto& [reason, count] : counts) {
    const auto at = before.find(reason);
    const int64_t counted = at == before.end() ? 0 : at->second;
    if (count > counted) {
      metrics_.Counter(metric, WithReason(options_.config.name, reason))
          .Increment(static_cast<double>(count - counted));
    }
  }
}

void RecordStages::PublishDecodeStats(const decode::DecodeStats& stats, Published* published) {
  AddFieldCounts(m::kFieldsDropped, stats.dropped_fields, published->stats.dropped_fields);
  AddFieldCounts(m::kFieldsRenamed, stats.renamed_fields, published->stats.renamed_fields);
  if (stats.lossy_integers > published->stats.lossy_integers) {
    lossy_.Increment(static_cast<double>(stats.lossy_integers - published->stats.lossy_integers));
  }
  published->stats = stats;
}

void RecordStages::NoteFieldEvents(const decode::RecordDecoder& decoder,
                                   const kafka::TopicPartition& tp, int64_t offset,
                                   int64_t fields) {
  const decode::FieldEvent& event = decoder.last_field_event();
  const std::string& name = options_.config.name;
  const std::string key =
      fmt::format("{}/{}/{}", name, event.reason, event.dropped ? "dropped" : "renamed");
  const auto suppressed = limiter_.Admit(key, std::chrono::steady_clock::now());
  if (!suppressed) return;
  const std::string more =
      *suppressed > 0 ? fmt::format(" ({} more such record(s) since the last line)", *suppressed)
                      : "";
  if (event.dropped) {
    spdlog::warn("dataset {}: {} field(s) of {} offset {} dropped ({}), e.g. key \"{}\"{}", name,
                 fields, kafka::ToString(tp), offset, event.reason, event.key, more);
  } else {
    spdlog::warn("dataset {}: key \"{}\" of {} offset {} written as column \"{}\" ({}){}", name,
                 event.key, kafka::ToString(tp), offset, event.column, event.reason, more);
  }
}

Result<std::shared_ptr<arrow::RecordBatch>> RecordStages::AttachMetadata(
    records::MetadataColumnsBuilder* metadata, std::shared_ptr<arrow::RecordBatch> batch,
    Published* published) {
  if (metadata == nullptr) return batch;
  int64_t dropped = 0;
  auto attached = metadata->AttachTo(std::move(batch), &dropped);
  metadata_dropped_.Increment(static_cast<double>(dropped));
  const int64_t nulled = metadata->invalid_utf8();
  metadata_nulled_.Increment(static_cast<double>(nulled - published->metadata_nulled));
  published->metadata_nulled = nulled;
  return attached;
}

Result<std::shared_ptr<arrow::RecordBatch>> RecordStages::Apply(
    std::shared_ptr<arrow::RecordBatch> batch, records::FilterOutcome* filtered) {
  if (batch == nullptr) return batch;
  const std::string& name = options_.config.name;
  if (!options_.typed_columns.empty()) {
    // Typed columns first: the filters compare typed values (millpond's order).
    std::vector<records::ColumnCoercion> coercions;
    auto typed = options_.typed_columns.Apply(batch, &coercions);
    if (!typed.ok()) return WithContext(typed.status(), "dataset " + name + ": typed columns");
    batch = std::move(*typed);
    PublishCoercions(metrics_, limiter_, name, coercion_nulled_, coercions);
  }
  if (options_.filter) {
    // Skipped records stay inside the flush's offset ranges, so the commit accounts for them.
    auto kept = options_.filter->Apply(batch, filtered);
    if (!kept.ok()) return WithContext(kept.status(), "dataset " + name + ": filters");
    batch = std::move(*kept);
  }
  if (!options_.variant_columns.empty()) {
    records::VariantOutcome variant;
    auto with = options_.variant_columns.Apply(batch, &variant);
    if (!with.ok()) return WithContext(with.status(), "dataset " + name + ": variant columns");
    batch = std::move(*with);
    variant_nulled_.Increment(static_cast<double>(variant.malformed));
    variant_fields_dropped_.Increment(static_cast<double>(variant.collisions_dropped));
  }
  return batch;
}

}  // namespace weir::ingest
