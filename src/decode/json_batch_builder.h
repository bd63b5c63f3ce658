// JSON objects to one Arrow record batch, inferring column types as records arrive.
//
// Threading: one builder per dataset buffer, used by one thread at a time (the poll thread
// appends; the flush takes the batch with Finish()). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>

#include "base/status.h"
#include "decode/column_builder.h"
#include "decode/record_decoder.h"

namespace weir::decode {

// Decodes JSON objects straight from simdjson's On-Demand parser into Arrow builders (no DOM):
// top-level keys become columns (first-seen order), nested objects and arrays become JSON text.
// Keys pass the field-name policy (field_names.h): within one record, the first of several keys
// that resolve to the same column wins. Across records, each spelling keeps its own batch
// column; the writer resolves spellings onto the table's columns (ingest/column_plan.h).
// When a column sees values of different kinds, it is promoted in place (int64 → double →
// varchar, see Join), so every batch of a flush gets one deterministic type per column.
class JsonBatchBuilder final : public RecordDecoder {
 public:
  static Result<std::unique_ptr<JsonBatchBuilder>> Make(DecodeOptions options,
                                                        arrow::MemoryPool* pool);
  ~JsonBatchBuilder() override;

  // Decodes one record and appends it as a row. A record that cannot be decoded appends
  // nothing and returns a kBadData error whose ErrorDetail code is the reject reason
  // ("invalid_json", "invalid_utf8", "not_an_object", "record_too_large").
  Status Append(std::string_view json) override;

  int64_t num_rows() const override { return rows_; }
  // Bytes held by the builders so far (for the memory budget).
  int64_t buffered_bytes() const override;
  const DecodeStats& stats() const override { return stats_; }
  // Valid once stats().field_events > 0.
  const FieldEvent& last_field_event() const override { return last_field_event_; }

  // The batch of every row appended since the last Finish, then starts empty (columns and
  // their kinds are forgotten, statistics are kept).
  Result<std::shared_ptr<arrow::RecordBatch>> Finish() override;

 private:
  struct Column;
  struct PendingValue;
  class RecordParser;

  JsonBatchBuilder(DecodeOptions options, arrow::MemoryPool* pool);
  // The column of `name`, created if new; -1 when it is new and another spelling of it is
  // already a key of the current record.
  int FindOrAddColumn(std::string_view name, size_t position);
  // Drops the columns and name folds made since there were `columns` and `folds` of them (by a
  // record that was then rejected).
  void ForgetColumnsFrom(size_t columns, size_t folds, bool spellings_shared);
  void NoteFieldEvent(std::string_view reason, bool dropped, std::string_view key,
                      std::string_view column);
  Status Commit();

  DecodeOptions options_;
  arrow::MemoryPool* pool_;
  std::unique_ptr<RecordParser> parser_;
  std::vector<Column> columns_;
  std::unordered_map<std::string, int> column_index_;
  std::unordered_map<std::string, int> fold_ids_;  // folded name → id shared by its spellings
  bool spellings_share_a_batch_ = false;           // two columns have one fold id
  std::vector<int> last_key_order_;  // column of each key position in the previous record
  std::vector<PendingValue> pending_;
  // Each column's size in the last batch: its builder's capacity hint in the next.
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> capacity_hints_;
  int64_t rows_ = 0;
  DecodeStats stats_;
  FieldEvent last_field_event_;
  FieldEvent record_event_;  // of the record being decoded
  bool record_has_event_ = false;
};

}  // namespace weir::decode
