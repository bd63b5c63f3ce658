#include "decode/column_kind.h"

#include <arrow/type.h>

namespace weir::decode {

ColumnKind Join(ColumnKind a, ColumnKind b) {
  if (a == b) return a;
  if (a == ColumnKind::kNull) return b;
  if (b == ColumnKind::kNull) return a;
  const bool both_numbers = (a == ColumnKind::kInt64 || a == ColumnKind::kDouble) &&
                            (b == ColumnKind::kInt64 || b == ColumnKind::kDouble);
  return both_numbers ? ColumnKind::kDouble : ColumnKind::kVarchar;
}

std::shared_ptr<arrow::DataType> ArrowType(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kBoolean:
      return arrow::boolean();
    case ColumnKind::kInt64:
      return arrow::int64();
    case ColumnKind::kDouble:
      return arrow::float64();
    case ColumnKind::kNull:
    case ColumnKind::kVarchar:
      return arrow::utf8();
  }
  return arrow::utf8();
}

std::string_view ToString(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kNull:
      return "null";
    case ColumnKind::kBoolean:
      return "boolean";
    case ColumnKind::kInt64:
      return "int64";
    case ColumnKind::kDouble:
      return "double";
    case ColumnKind::kVarchar:
      return "varchar";
  }
  return "unknown";
}

}  // namespace weir::decode
