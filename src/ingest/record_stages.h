// The stages a dataset's records pass between the decoder and the writer, one part for direct
// and WAL mode, so both count the same things the same way:
//
//   decoder ─ field names dropped/renamed, integers beyond int64 (the decoder's statistics)
//     → Kafka metadata columns attached (records/metadata_columns.h)
//     → typed columns cast (records/typed_columns.h)
//     → filters (records/record_filter.h)
//     → VARIANT companions (records/variant_columns.h)
//
// and each stage's metrics: weir_fields_dropped_total and weir_fields_renamed_total by reason,
// weir_values_nulled_total{reason=integer_beyond_int64|invalid_utf8|column_coercion|
// variant_invalid_json}, weir_fields_dropped_total{reason=metadata_column|variant_companion},
// the typed columns' own series (coercion_metrics.h), and the rate-limited warning of a field
// dropped or renamed. The filters' outcome goes back to the caller, who counts it once the rows
// have landed (ingest/filter_metrics.h).
//
// Threading: PublishDecodeStats, NoteFieldEvents and AttachMetadata from the thread that owns
// the decoder given (the poll thread or a decode worker); Apply from one thread at a time (a
// dataset's flush thread in direct mode, the poll thread in WAL mode). The metrics registry and
// the limiter are thread-safe.
#pragma once

#include <memory>
#include <string>

#include <arrow/record_batch.h>

#include "base/log_rate_limiter.h"
#include "decode/record_decoder.h"
#include "ingest/pipeline.h"
#include "kafka/consumer.h"
#include "observe/metrics_registry.h"
#include "records/metadata_columns.h"
#include "records/record_filter.h"

namespace weir::ingest {

class RecordStages {
 public:
  // `metrics` and `limiter` outlive the stages.
  RecordStages(const DatasetOptions& options, observe::MetricsRegistry& metrics,
               LogRateLimiter& limiter);

  // A decoder of the dataset's records: its mapping's (records/mapped_batch_builder.h), or
  // top-level keys as columns (decode/json_batch_builder.h).
  static Result<std::unique_ptr<decode::RecordDecoder>> MakeDecoder(const DatasetOptions& options,
                                                                    arrow::MemoryPool* pool);
  // A builder of the dataset's Kafka metadata columns; null when it has none.
  static Result<std::unique_ptr<records::MetadataColumnsBuilder>> MakeMetadataBuilder(
      const DatasetOptions& options, arrow::MemoryPool* pool);

  // What one decoder's statistics and metadata builder were counted at already.
  struct Published {
    decode::DecodeStats stats;
    int64_t metadata_nulled = 0;
  };

  // Counts what `stats` dropped, renamed or nulled since `published`.
  void PublishDecodeStats(const decode::DecodeStats& stats, Published* published);
  // Logs (rate-limited) the field the decoder dropped or renamed last, when the record at
  // `offset` of `tp` made `fields` such events.
  void NoteFieldEvents(const decode::RecordDecoder& decoder, const kafka::TopicPartition& tp,
                       int64_t offset, int64_t fields);
  // `batch` with `metadata`'s columns attached (a null `metadata`: `batch` as it is), counting
  // the payload fields they replaced and the values nulled since `published`.
  Result<std::shared_ptr<arrow::RecordBatch>> AttachMetadata(
      records::MetadataColumnsBuilder* metadata, std::shared_ptr<arrow::RecordBatch> batch,
      Published* published);
  // Typed columns, filters and VARIANT companions on `batch`, counting each one's metrics; what
  // the filters skipped and matched is added to `filtered`. Errors name the dataset and stage.
  Result<std::shared_ptr<arrow::RecordBatch>> Apply(std::shared_ptr<arrow::RecordBatch> batch,
                                                    records::FilterOutcome* filtered);

 private:
  void AddFieldCounts(const observe::MetricDef& metric,
                      const std::map<std::string, int64_t>& counts,
                      const std::map<std::string, int64_t>& before);

  const DatasetOptions& options_;
  observe::MetricsRegistry& metrics_;
  LogRateLimiter& limiter_;
  observe::Counter& lossy_;
  observe::Counter& coercion_nulled_;
  observe::Counter& metadata_nulled_;
  observe::Counter& metadata_dropped_;
  observe::Counter& variant_nulled_;
  observe::Counter& variant_fields_dropped_;
};

}  // namespace weir::ingest
