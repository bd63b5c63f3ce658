// Records → one Arrow batch through a JMESPath mapping (issue 14): each record is parsed once
// by simdjson, every mapping column's expression is evaluated on that document in place
// (records/jmespath/mapping.h), and each result goes straight into its column's Arrow builder
// (decode/column_builder.h: the same kind inference and promotion as unmapped decoding). No
// JSON is written and parsed again.
//
// The batch has exactly the mapping's columns, in the mapping's order. A result becomes: null
// → null, true/false → boolean, an integer within int64 → bigint, any other number → double,
// a string → varchar, an array or object → its compact JSON text (varchar). A record that
// cannot be mapped appends nothing and returns bad data with the reject reason: invalid_json,
// invalid_utf8, record_too_large or mapping_failed (the message names the column).
//
// Threading: one builder per dataset buffer, used by one thread at a time (decode/
// record_decoder.h). The Mapping it holds is shared and immutable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/memory_pool.h>

#include "decode/column_builder.h"
#include "decode/record_decoder.h"
#include "records/jmespath/mapping.h"

namespace weir::records {

class MappedBatchBuilder final : public decode::RecordDecoder {
 public:
  static Result<std::unique_ptr<MappedBatchBuilder>> Make(
      std::shared_ptr<const jmespath::Mapping> mapping, decode::DecodeOptions options,
      arrow::MemoryPool* pool);

  Status Append(std::string_view json) override;
  int64_t num_rows() const override { return rows_; }
  int64_t buffered_bytes() const override;
  const decode::DecodeStats& stats() const override { return stats_; }
  // A mapping drops and renames no field: never valid (stats().field_events stays 0).
  const decode::FieldEvent& last_field_event() const override { return no_event_; }
  Result<std::shared_ptr<arrow::RecordBatch>> Finish() override;

 private:
  MappedBatchBuilder(std::shared_ptr<const jmespath::Mapping> mapping,
                     decode::DecodeOptions options, arrow::MemoryPool* pool);

  jmespath::RecordMapper mapper_;
  std::vector<std::unique_ptr<decode::ColumnBuilder>> columns_;
  std::vector<jmespath::Value> row_;  // the current record's results
  std::vector<std::string> texts_;    // per column: number literals and JSON text
  std::vector<decode::DecodedValue> values_;
  int64_t rows_ = 0;
  decode::DecodeStats stats_;
  decode::FieldEvent no_event_;
};

}  // namespace weir::records
