// Typed columns (issue 14; millpond's MILLPOND_TYPED_COLUMNS): named columns of each flush's
// batch are cast to a pinned type before the write, so a batch matches a table whose columns
// are already typed (date-times arrive as strings, an all-null batch infers varchar) and a new
// table gets the right type from the start.
//
// Per value: a value that cannot be cast becomes null (only that value; the rest of the column
// is kept), never left in the source type. Per column and batch, exactly one of two outcomes is
// reported: coerced (every value cast) or coercion error (at least one value nulled). Columns
// absent from the batch or already of the target type are left untouched and not reported.
// Names match the way the destinations resolve them (case-insensitively): every spelling of a
// pinned name in the batch is cast.
//
// Targets: timestamptz is timestamp[us, UTC] (text in records/typed_text.h's grammar), bigint
// int64, double float64, boolean bool ("true"/"false" text too), varchar utf8 (numbers and
// booleans as text), uuid Arrow's arrow.uuid extension (16 big-endian bytes; only text in
// base::Uuid::Parse's grammar — millpond's — anything else is nulled).
//
// Threading: immutable after Make; Apply may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"

namespace weir::records {

enum class TypedKind { kTimestampTz, kBigint, kDouble, kBoolean, kVarchar, kUuid };

// "timestamptz", "bigint", "double", "boolean", "varchar", "uuid".
std::string_view ToString(TypedKind kind);

struct TypedColumn {
  std::string column;
  TypedKind type = TypedKind::kVarchar;
};

// Parses `column:type` items (millpond's grammar). Invalid: an item without `:`, a column name
// outside [A-Za-z_][A-Za-z0-9_]*, an unknown type, a column given twice (in any case). The
// error names the item.
Result<std::vector<TypedColumn>> ParseTypedColumns(const std::vector<std::string>& items);

// What casting one column of one batch did.
struct ColumnCoercion {
  std::string column;  // the batch field's name
  TypedKind type = TypedKind::kVarchar;
  int64_t nulled = 0;  // 0: coerced; > 0: a coercion error (values nulled)
};

class TypedColumns {
 public:
  // Every type of ParseTypedColumns is written (a Result so that a type a lake cannot hold
  // could be refused here).
  static Result<TypedColumns> Make(std::vector<TypedColumn> columns);

  bool empty() const { return columns_.empty(); }
  const std::vector<TypedColumn>& columns() const { return columns_; }

  // The batch with its pinned columns cast; one outcome per cast column in `outcomes`.
  Result<std::shared_ptr<arrow::RecordBatch>> Apply(std::shared_ptr<arrow::RecordBatch> batch,
                                                    std::vector<ColumnCoercion>* outcomes) const;

 private:
  std::vector<TypedColumn> columns_;
};

}  // namespace weir::records
