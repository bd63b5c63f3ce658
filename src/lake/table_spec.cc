#include "lake/table_spec.h"

#include <charconv>

#include <fmt/format.h>

namespace weir::lake {

std::string_view ToString(ColumnType type) {
  switch (type) {
    case ColumnType::kBoolean:
      return "boolean";
    case ColumnType::kInteger:
      return "integer";
    case ColumnType::kBigint:
      return "bigint";
    case ColumnType::kFloat:
      return "float";
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

std::optional<ColumnType> PromotionFor(ColumnType from, ColumnType to) {
  if (from == ColumnType::kInteger && to == ColumnType::kBigint) return ColumnType::kBigint;
  if (from == ColumnType::kFloat && to == ColumnType::kDouble) return ColumnType::kDouble;
  return std::nullopt;
}

bool Transform::IsTime() const {
  return kind == TransformKind::kYear || kind == TransformKind::kMonth ||
         kind == TransformKind::kDay || kind == TransformKind::kHour;
}

Result<Transform> ParseTransform(std::string_view text) {
  if (text == "identity") return Transform{TransformKind::kIdentity, 0};
  if (text == "year") return Transform{TransformKind::kYear, 0};
  if (text == "month") return Transform{TransformKind::kMonth, 0};
  if (text == "day") return Transform{TransformKind::kDay, 0};
  if (text == "hour") return Transform{TransformKind::kHour, 0};
  for (const auto& [name, kind] :
       {std::pair{std::string_view("bucket"), TransformKind::kBucket},
        std::pair{std::string_view("truncate"), TransformKind::kTruncate}}) {
    if (!text.starts_with(name) || text.size() < name.size() + 3 || text[name.size()] != '[' ||
        text.back() != ']') {
      continue;
    }
    const std::string_view digits = text.substr(name.size() + 1, text.size() - name.size() - 2);
    int32_t parameter = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parameter);
    if (ec == std::errc() && end == digits.data() + digits.size() && parameter >= 1) {
      return Transform{kind, parameter};
    }
  }
  return Status::Invalid("\"", text,
                         "\" is not a partition transform (identity, year, month, day, hour, "
                         "bucket[N], truncate[W])");
}

std::string ToString(const Transform& transform) {
  switch (transform.kind) {
    case TransformKind::kIdentity:
      return "identity";
    case TransformKind::kYear:
      return "year";
    case TransformKind::kMonth:
      return "month";
    case TransformKind::kDay:
      return "day";
    case TransformKind::kHour:
      return "hour";
    case TransformKind::kBucket:
      return fmt::format("bucket[{}]", transform.parameter);
    case TransformKind::kTruncate:
      return fmt::format("truncate[{}]", transform.parameter);
  }
  return "?";
}

std::string ToString(const PartitionKey& key) {
  return key.transform.kind == TransformKind::kIdentity
             ? key.column
             : fmt::format("{}({})", ToString(key.transform), key.column);
}

std::string ToString(const std::vector<PartitionKey>& keys) {
  std::string out;
  for (const auto& key : keys) out += (out.empty() ? "" : ", ") + ToString(key);
  return "(" + out + ")";
}

}  // namespace weir::lake
