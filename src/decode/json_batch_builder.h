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
#include "decode/column_kind.h"

namespace weir::decode {

struct DecodeOptions {
  size_t max_record_bytes = 1 << 20;  // larger records are rejected
  size_t max_field_name_length = 63;  // longer keys are dropped (per column) and counted
};

// What decoding did besides producing rows; counters keyed by reason.
struct DecodeStats {
  int64_t records = 0;                            // rows appended
  std::map<std::string, int64_t> rejected;        // invalid_json, invalid_utf8, not_an_object, ...
  std::map<std::string, int64_t> dropped_fields;  // invalid_name, name_too_long, reserved_name,
                                                  // duplicate_key
  int64_t lossy_integers = 0;                     // integers beyond int64, kept as double
};

// Decodes JSON objects straight from simdjson's On-Demand parser into Arrow builders (no DOM):
// top-level keys become columns (first-seen order), nested objects and arrays become JSON text.
// When a column sees values of different kinds, it is promoted in place (int64 → double →
// varchar, see Join), so every batch of a flush gets one deterministic type per column.
class JsonBatchBuilder {
 public:
  static Result<std::unique_ptr<JsonBatchBuilder>> Make(DecodeOptions options,
                                                        arrow::MemoryPool* pool);
  ~JsonBatchBuilder();

  // Decodes one record and appends it as a row. A record that cannot be decoded appends
  // nothing and returns a kBadData error whose ErrorDetail code is the reject reason
  // ("invalid_json", "invalid_utf8", "not_an_object", "record_too_large").
  Status Append(std::string_view json);

  int64_t num_rows() const { return rows_; }
  // Bytes held by the builders so far (for the memory budget).
  int64_t buffered_bytes() const;
  const DecodeStats& stats() const { return stats_; }

  // The batch of every row appended since the last Finish, then starts empty (columns and
  // their kinds are forgotten, statistics are kept).
  Result<std::shared_ptr<arrow::RecordBatch>> Finish();

 private:
  struct Column;
  struct PendingValue;
  class RecordParser;

  JsonBatchBuilder(DecodeOptions options, arrow::MemoryPool* pool);
  int FindOrAddColumn(std::string_view name, size_t position);
  Status Commit();
  Status AppendValue(Column& column, const PendingValue& value);
  Status Promote(Column& column, ColumnKind to);

  DecodeOptions options_;
  arrow::MemoryPool* pool_;
  std::unique_ptr<RecordParser> parser_;
  std::vector<Column> columns_;
  std::unordered_map<std::string, int> column_index_;
  std::vector<int> last_key_order_;  // column of each key position in the previous record
  std::vector<PendingValue> pending_;
  int64_t rows_ = 0;
  DecodeStats stats_;
};

}  // namespace weir::decode
