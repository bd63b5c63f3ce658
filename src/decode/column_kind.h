// The column types weir infers from JSON, and how two of them combine.
#pragma once

#include <memory>
#include <string_view>

#include <arrow/type_fwd.h>

namespace weir::decode {

// Inferred kinds, in promotion order for numbers: int64 → double → varchar.
enum class ColumnKind {
  kNull,     // only JSON nulls seen so far: takes the type of the first non-null value
  kBoolean,  // true / false
  kInt64,    // integers that fit int64
  kDouble,   // other numbers
  kVarchar,  // strings, nested objects and arrays (as JSON text), and mixed kinds
};

// The kind that holds values of both kinds, the same whatever the order of arguments:
// null is neutral, int64 with double gives double, every other mix gives varchar.
ColumnKind Join(ColumnKind a, ColumnKind b);

// The Arrow type a column of this kind is written as (a column of only nulls is varchar).
std::shared_ptr<arrow::DataType> ArrowType(ColumnKind kind);

std::string_view ToString(ColumnKind kind);

}  // namespace weir::decode
