#include "lake/table_spec.h"

#include <charconv>
#include <climits>
#include <tuple>

#include <fmt/format.h>

#include "base/text.h"

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
    case ColumnType::kUuid:
      return "uuid";
    case ColumnType::kVariant:
      return "variant";
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

Result<std::optional<Transform>> ParseKnownTransform(std::string_view text) {
  const std::string_view name = TrimSpace(text);
  for (const auto& [word, kind] :
       {std::pair{"identity", TransformKind::kIdentity}, std::pair{"year", TransformKind::kYear},
        std::pair{"month", TransformKind::kMonth}, std::pair{"day", TransformKind::kDay},
        std::pair{"hour", TransformKind::kHour}}) {
    if (name == word) return std::optional<Transform>(Transform{kind, 0});
  }
  for (const auto& [prefix, kind, what] :
       {std::tuple{std::string_view("bucket"), TransformKind::kBucket, "bucket count"},
        std::tuple{std::string_view("truncate"), TransformKind::kTruncate, "truncate width"}}) {
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = TrimSpace(name.substr(prefix.size()));
    if (rest.size() < 2 || rest.front() != '[' || rest.back() != ']') break;
    rest = TrimSpace(rest.substr(1, rest.size() - 2));
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec != std::errc() || end != rest.data() + rest.size()) {
      return Status::Invalid("transform \"", text, "\": the ", what, " must be an integer");
    }
    if (n <= 0 || n > INT32_MAX) {
      return Status::Invalid("transform \"", text, "\": the ", what, " must be positive (1..",
                             INT32_MAX, "), got ", n);
    }
    return std::optional<Transform>(Transform{kind, static_cast<int32_t>(n)});
  }
  return std::optional<Transform>();
}

Result<Transform> ParseTransform(std::string_view text) {
  WEIR_ASSIGN_OR_RAISE(const auto known, ParseKnownTransform(text));
  if (!known) {
    return Status::Invalid("unknown transform \"", text,
                           "\" (known: identity, year, month, day, hour, bucket[N], "
                           "truncate[W])");
  }
  return *known;
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
