#include "records/route.h"

#include <cmath>
#include <optional>

#include <arrow/array.h>
#include <arrow/type.h>
#include <fmt/format.h>

#include "base/text.h"
#include "decode/field_names.h"

namespace weir::records {
namespace {

constexpr size_t kMaxTableName = 63;

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

Status RefuseRoute(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "records", "invalid_route", std::move(message));
}

// The text of row `row` of `array` as a route value: a string, or an integer in decimal.
// nullopt with *kind_ok false: not a string or an integer.
std::optional<std::string> ValueText(const arrow::Array& array, int64_t row, bool* kind_ok) {
  *kind_ok = true;
  switch (array.type_id()) {
    case arrow::Type::STRING:
      return std::string(static_cast<const arrow::StringArray&>(array).GetView(row));
    case arrow::Type::LARGE_STRING:
      return std::string(static_cast<const arrow::LargeStringArray&>(array).GetView(row));
    case arrow::Type::INT64:
      return std::to_string(static_cast<const arrow::Int64Array&>(array).Value(row));
    case arrow::Type::INT32:
      return std::to_string(static_cast<const arrow::Int32Array&>(array).Value(row));
    case arrow::Type::DOUBLE: {
      const double v = static_cast<const arrow::DoubleArray&>(array).Value(row);
      constexpr double kExact = 9007199254740992.0;  // 2^53
      if (std::trunc(v) == v && std::fabs(v) <= kExact) {
        return std::to_string(static_cast<int64_t>(v));
      }
      break;
    }
    default:
      break;
  }
  *kind_ok = false;
  return std::nullopt;
}

}  // namespace

Result<RouteTemplate> ParseRouteTemplate(std::string_view text) {
  const auto open = text.find('{');
  const auto close = text.find('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return RefuseRoute(
        fmt::format("\"{}\" has no {{field}} placeholder (e.g. events_{{event}})", text));
  }
  if (text.find('{', open + 1) != std::string_view::npos ||
      text.find('}', close + 1) != std::string_view::npos) {
    return RefuseRoute(fmt::format("\"{}\" has more than one placeholder", text));
  }
  RouteTemplate out;
  out.prefix = std::string(text.substr(0, open));
  out.field = std::string(text.substr(open + 1, close - open - 1));
  out.suffix = std::string(text.substr(close + 1));
  if (!IsPlainIdentifier(out.field)) {
    return RefuseRoute(
        fmt::format("\"{}\": the field \"{}\" is not a field name "
                    "([A-Za-z_][A-Za-z0-9_]*)",
                    text, out.field));
  }
  for (const std::string* part : {&out.prefix, &out.suffix}) {
    for (const char c : *part) {
      if (!NameChar(c)) {
        return RefuseRoute(
            fmt::format("\"{}\": the text around the placeholder may hold only "
                        "[A-Za-z0-9_]",
                        text));
      }
    }
  }
  return out;
}

RouteName NameFor(std::string_view value, const RouteRule& rule) {
  RouteName out;
  const std::string name =
      decode::FoldName(rule.route.prefix + std::string(value) + rule.route.suffix);
  if (value.empty() || !IsPlainIdentifier(name) || name.size() > kMaxTableName) {
    out.reason = "not_a_name";
  } else if (name == rule.fallback) {
    out.table.clear();  // the fallback table itself, no reason
  } else if (rule.reserved.count(name)) {
    out.reason = "reserved_name";
  } else if (!rule.allow.empty() && !rule.allow.count(name)) {
    out.reason = "not_allowed";
  } else {
    out.table = name;
  }
  return out;
}

RouteSplit SplitByRoute(const arrow::RecordBatch& batch, const RouteRule& rule) {
  RouteSplit split;
  std::vector<const arrow::Array*> sources;  // every spelling of the field, in batch order
  for (int f = 0; f < batch.num_columns(); ++f) {
    if (decode::SameColumnName(batch.schema()->field(f)->name(), rule.route.field)) {
      sources.push_back(batch.column(f).get());
    }
  }
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    const arrow::Array* source = nullptr;
    for (const auto* candidate : sources) {
      if (!candidate->IsNull(row)) {
        source = candidate;
        break;
      }
    }
    if (source == nullptr) {
      split.fallback.push_back(row);
      ++split.fallback_reasons["field_missing"];
      continue;
    }
    bool kind_ok = false;
    const auto text = ValueText(*source, row, &kind_ok);
    if (!text) {
      split.fallback.push_back(row);
      ++split.fallback_reasons["not_a_name"];
      continue;
    }
    RouteName name = NameFor(*text, rule);
    if (name.table.empty()) {
      split.fallback.push_back(row);
      if (!name.reason.empty()) ++split.fallback_reasons[name.reason];
      continue;
    }
    split.tables[name.table].push_back(row);
  }
  return split;
}

}  // namespace weir::records
