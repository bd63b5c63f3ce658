#include "lake/table.h"

#include <fmt/format.h>

#include "base/text.h"

namespace weir::lake {
namespace {

bool IsIdentifier(std::string_view name) {
  if (name.empty()) return false;
  const auto word = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9');
  };
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (char c : name) {
    if (!word(c)) return false;
  }
  return true;
}

}  // namespace

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

Result<PartitionKey> ParsePartitionKey(std::string_view text) {
  text = TrimSpace(text);
  PartitionKey key;
  const auto open = text.find('(');
  if (open == std::string_view::npos) {
    key.column = std::string(text);
    key.transform = "identity";
  } else {
    if (text.back() != ')') {
      return Status::Invalid("partition key \"", text, "\": expected transform(column)");
    }
    key.transform = std::string(TrimSpace(text.substr(0, open)));
    key.column = std::string(TrimSpace(text.substr(open + 1, text.size() - open - 2)));
    if (key.transform != "year" && key.transform != "month" && key.transform != "day" &&
        key.transform != "hour" && key.transform != "identity") {
      return Status::Invalid("partition key \"", text, "\": unknown transform \"", key.transform,
                             "\" (identity, year, month, day, hour)");
    }
  }
  if (!IsIdentifier(key.column)) {
    return Status::Invalid("partition key \"", text, "\": \"", key.column,
                           "\" is not a column name");
  }
  return key;
}

std::string ToString(const PartitionKey& key) {
  return key.transform == "identity" ? key.column
                                     : fmt::format("{}({})", key.transform, key.column);
}

}  // namespace weir::lake
