#include "records/typed_columns.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <arrow/builder.h>
#include <arrow/type.h>
#include <fmt/format.h>

#include "base/number_text.h"
#include "base/text.h"
#include "base/uuid_arrow.h"
#include "decode/field_names.h"
#include "records/typed_text.h"

namespace weir::records {
namespace {

Status RefuseTypedColumns(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "records", "invalid_typed_columns",
                         std::move(message));
}

std::shared_ptr<arrow::DataType> ArrowTypeOf(TypedKind kind) {
  switch (kind) {
    case TypedKind::kTimestampTz:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypedKind::kBigint:
      return arrow::int64();
    case TypedKind::kDouble:
      return arrow::float64();
    case TypedKind::kBoolean:
      return arrow::boolean();
    case TypedKind::kUuid:
      return UuidArrowType();
    case TypedKind::kVarchar:
      break;
  }
  return arrow::utf8();
}

// A double that is an integer inside int64's range.
std::optional<int64_t> IntegralDouble(double v) {
  if (std::trunc(v) == v && v >= -9223372036854775808.0 && v < 9223372036854775808.0) {
    return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

// Builds the cast array value by value; `convert(i)` gives the value of row i or nullopt.
template <typename Builder, typename Convert>
Result<std::shared_ptr<arrow::Array>> Cast(const arrow::Array& array,
                                           std::shared_ptr<arrow::DataType> type, int64_t* nulled,
                                           Convert&& convert) {
  Builder builder(std::move(type), arrow::default_memory_pool());
  WEIR_RETURN_NOT_OK(builder.Reserve(array.length()));
  for (int64_t i = 0; i < array.length(); ++i) {
    if (array.IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    if (auto value = convert(i)) {
      WEIR_RETURN_NOT_OK(builder.Append(*value));
    } else {
      ++*nulled;
      builder.UnsafeAppendNull();
    }
  }
  std::shared_ptr<arrow::Array> out;
  WEIR_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

Result<std::shared_ptr<arrow::Array>> CastColumn(const arrow::Array& array, TypedKind kind,
                                                 int64_t* nulled) {
  const auto id = array.type_id();
  const auto text = [&](int64_t i) {
    return static_cast<const arrow::StringArray&>(array).GetView(i);
  };
  switch (kind) {
    case TypedKind::kTimestampTz:
      return Cast<arrow::TimestampBuilder>(
          array, ArrowTypeOf(kind), nulled, [&](int64_t i) -> std::optional<int64_t> {
            if (id == arrow::Type::STRING) return ParseTimestampText(text(i));
            return std::nullopt;  // JSON numbers and booleans are not timestamps
          });
    case TypedKind::kBigint:
      return Cast<arrow::Int64Builder>(
          array, ArrowTypeOf(kind), nulled, [&](int64_t i) -> std::optional<int64_t> {
            if (id == arrow::Type::INT64)
              return static_cast<const arrow::Int64Array&>(array).Value(i);
            if (id == arrow::Type::DOUBLE) {
              return IntegralDouble(static_cast<const arrow::DoubleArray&>(array).Value(i));
            }
            if (id == arrow::Type::STRING) {
              if (auto exact = ParseInt64Text(text(i))) return exact;
              // "3.0": a JSON double that became text when its column was promoted.
              if (auto real = ParseFiniteDoubleText(text(i));
                  real && std::fabs(*real) < 9007199254740992.0) {
                return IntegralDouble(*real);
              }
            }
            return std::nullopt;
          });
    case TypedKind::kDouble:
      return Cast<arrow::DoubleBuilder>(
          array, ArrowTypeOf(kind), nulled, [&](int64_t i) -> std::optional<double> {
            if (id == arrow::Type::DOUBLE)
              return static_cast<const arrow::DoubleArray&>(array).Value(i);
            if (id == arrow::Type::INT64) {
              return static_cast<double>(static_cast<const arrow::Int64Array&>(array).Value(i));
            }
            if (id == arrow::Type::STRING) return ParseFiniteDoubleText(text(i));
            return std::nullopt;
          });
    case TypedKind::kBoolean:
      return Cast<arrow::BooleanBuilder>(
          array, ArrowTypeOf(kind), nulled, [&](int64_t i) -> std::optional<bool> {
            if (id == arrow::Type::BOOL)
              return static_cast<const arrow::BooleanArray&>(array).Value(i);
            if (id == arrow::Type::STRING) {
              if (text(i) == "true") return true;
              if (text(i) == "false") return false;
            }
            return std::nullopt;
          });
    case TypedKind::kUuid:
      // Only text in the uuid grammar; JSON numbers and booleans are not uuids.
      return ParseUuidArray(array, nulled);
    case TypedKind::kVarchar:
      break;
  }
  return Cast<arrow::StringBuilder>(
      array, arrow::utf8(), nulled, [&](int64_t i) -> std::optional<std::string> {
        switch (id) {
          case arrow::Type::STRING:
            return std::string(text(i));
          case arrow::Type::INT64:
            return std::to_string(static_cast<const arrow::Int64Array&>(array).Value(i));
          case arrow::Type::DOUBLE:
            return ShortestText(static_cast<const arrow::DoubleArray&>(array).Value(i));
          case arrow::Type::BOOL:
            return std::string(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true"
                                                                                       : "false");
          default:
            return std::nullopt;
        }
      });
}

}  // namespace

std::string_view ToString(TypedKind kind) {
  switch (kind) {
    case TypedKind::kTimestampTz:
      return "timestamptz";
    case TypedKind::kBigint:
      return "bigint";
    case TypedKind::kDouble:
      return "double";
    case TypedKind::kBoolean:
      return "boolean";
    case TypedKind::kVarchar:
      return "varchar";
    case TypedKind::kUuid:
      return "uuid";
  }
  return "unknown";
}

Result<std::vector<TypedColumn>> ParseTypedColumns(const std::vector<std::string>& items) {
  static const std::map<std::string_view, TypedKind> kKinds = {
      {"timestamptz", TypedKind::kTimestampTz}, {"bigint", TypedKind::kBigint},
      {"double", TypedKind::kDouble},           {"boolean", TypedKind::kBoolean},
      {"varchar", TypedKind::kVarchar},         {"uuid", TypedKind::kUuid}};
  std::vector<TypedColumn> out;
  std::map<std::string, std::string> seen;  // folded → as given
  for (const std::string& item : items) {
    const std::string_view trimmed = TrimBlanks(item);
    if (trimmed.empty()) continue;
    const size_t colon = trimmed.find(':');
    if (colon == std::string_view::npos) {
      return RefuseTypedColumns(fmt::format("\"{}\" is not column:type", item));
    }
    const std::string column(TrimBlanks(trimmed.substr(0, colon)));
    const std::string type(TrimBlanks(trimmed.substr(colon + 1)));
    if (!IsPlainIdentifier(column)) {
      return RefuseTypedColumns(fmt::format(
          "\"{}\": \"{}\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)", item, column));
    }
    const auto kind = kKinds.find(type);
    if (kind == kKinds.end()) {
      return RefuseTypedColumns(fmt::format(
          "\"{}\": type \"{}\" is not one of timestamptz, bigint, double, boolean, varchar, uuid",
          item, type));
    }
    const auto [at, added] = seen.emplace(decode::FoldName(column), column);
    if (!added) {
      return RefuseTypedColumns(fmt::format("\"{}\": column {} is typed twice", item, at->second));
    }
    out.push_back({column, kind->second});
  }
  return out;
}

Result<TypedColumns> TypedColumns::Make(std::vector<TypedColumn> columns) {
  TypedColumns typed;
  typed.columns_ = std::move(columns);
  return typed;
}

Result<std::shared_ptr<arrow::RecordBatch>> TypedColumns::Apply(
    std::shared_ptr<arrow::RecordBatch> batch, std::vector<ColumnCoercion>* outcomes) const {
  outcomes->clear();
  if (columns_.empty() || batch == nullptr) return batch;
  std::shared_ptr<arrow::RecordBatch> out = batch;
  for (int f = 0; f < batch->num_columns(); ++f) {
    const auto& field = batch->schema()->field(f);
    const TypedColumn* pin = nullptr;
    for (const TypedColumn& column : columns_) {
      if (decode::SameColumnName(column.column, field->name())) pin = &column;
    }
    if (pin == nullptr) continue;
    const auto target = ArrowTypeOf(pin->type);
    if (field->type()->Equals(*target)) continue;
    ColumnCoercion outcome{field->name(), pin->type, 0};
    WEIR_ASSIGN_OR_RAISE(auto cast, CastColumn(*batch->column(f), pin->type, &outcome.nulled));
    WEIR_ASSIGN_OR_RAISE(out, out->SetColumn(f, arrow::field(field->name(), target), cast));
    outcomes->push_back(std::move(outcome));
  }
  return out;
}

}  // namespace weir::records
