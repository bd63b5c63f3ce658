// One column of a decoded batch whose type is inferred from its values: values of several kinds
// promote it in place (decode/column_kind.h: int64 → double → varchar), so a batch gets one
// deterministic type per column whatever the order of its records.
//
// Shared by the JSON decoder (json_batch_builder.h) and the mapped decoder of records/ (each
// value of a JMESPath mapping goes straight into one of these).
//
// Threading: owned by one batch builder, one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/memory_pool.h>

#include "base/status.h"
#include "decode/column_kind.h"

namespace weir::decode {

// One value as decoded: its kind and payload. `text` is the string of a string, the JSON text
// of a nested value, and the literal of a number or boolean (what a varchar column holds); it
// must stay valid until the value is appended.
struct DecodedValue {
  ColumnKind kind = ColumnKind::kNull;
  bool boolean = false;
  int64_t int64 = 0;
  double real = 0;
  std::string_view text;
};

class ColumnBuilder {
 public:
  explicit ColumnBuilder(arrow::MemoryPool* pool);

  ColumnKind kind() const { return kind_; }
  // Rows appended so far (values and nulls).
  int64_t length() const { return builder_->length(); }

  // Appends `value` as row `row` (rows before it that had no value become nulls), promoting the
  // column first when the value's kind needs a wider one.
  Status Append(const DecodedValue& value, int64_t row);

  // Bytes held so far, roughly (for the memory budget).
  int64_t buffered_bytes() const;

  // The column's `rows` values (missing rows at the end are nulls); a column of only nulls is
  // varchar. Starts empty again, of kind null, its capacity hint set to this batch's size.
  Result<std::shared_ptr<arrow::Array>> Finish(int64_t rows);

  // The rows and string bytes the column is expected to reach: when its first value comes, its
  // builder reserves them at once instead of growing (and copying) from nothing. A batch of
  // records is usually about the size of the one before (parts are sealed at a byte size).
  void SetCapacityHint(int64_t rows, int64_t data_bytes) {
    hint_rows_ = rows;
    hint_data_bytes_ = data_bytes;
  }
  int64_t hint_rows() const { return hint_rows_; }
  int64_t hint_data_bytes() const { return hint_data_bytes_; }

 private:
  Status AppendValue(const DecodedValue& value);
  // Rewrites the values in kind `to`: integers and booleans as JSON writes them, doubles in the
  // shortest text that reads back to the same double.
  Status Promote(ColumnKind to);

  arrow::MemoryPool* pool_;
  ColumnKind kind_ = ColumnKind::kNull;
  std::unique_ptr<arrow::ArrayBuilder> builder_;  // of ArrowType(kind_); NullBuilder for kNull
  int64_t hint_rows_ = 0;
  int64_t hint_data_bytes_ = 0;
};

}  // namespace weir::decode
