#include "lake/table.h"

#include <fmt/format.h>

namespace weir::lake {

std::string_view ToString(ColumnType type) {
  switch (type) {
    case ColumnType::kBoolean:
      return "boolean";
    case ColumnType::kBigint:
      return "bigint";
    case ColumnType::kDouble:
      return "double";
    case ColumnType::kVarchar:
      return "varchar";
    case ColumnType::kTimestampTz:
      return "timestamptz";
    case ColumnType::kOther:
      return "other";
  }
  return "?";
}

std::string ToString(const PartitionKey& key) {
  return key.transform == "identity" ? key.column
                                     : fmt::format("{}({})", key.transform, key.column);
}

}  // namespace weir::lake
