#include "ingest/coerce.h"

#include <charconv>
#include <cmath>
#include <string>

#include <arrow/array/util.h>
#include <arrow/builder.h>

#include "base/number_text.h"
#include "base/uuid_arrow.h"
#include "records/typed_text.h"
#include "records/variant_columns.h"

namespace weir::ingest {
namespace {

template <typename Builder, typename Fn>
Result<Coerced> Convert(const arrow::Array& array, std::shared_ptr<arrow::DataType> type,
                        Fn&& convert) {
  Builder builder(type, arrow::default_memory_pool());
  WEIR_RETURN_NOT_OK(builder.Reserve(array.length()));
  Coerced out;
  for (int64_t i = 0; i < array.length(); ++i) {
    if (array.IsNull(i)) {
      WEIR_RETURN_NOT_OK(builder.AppendNull());
      continue;
    }
    auto value = convert(i);
    if (value) {
      WEIR_RETURN_NOT_OK(builder.Append(*value));
    } else {
      ++out.nulled;
      WEIR_RETURN_NOT_OK(builder.AppendNull());
    }
  }
  WEIR_ASSIGN_OR_RAISE(out.array, builder.Finish());
  return out;
}

}  // namespace

std::optional<std::string> ValueText(const arrow::Array& array, int64_t i) {
  if (array.IsNull(i)) return std::nullopt;
  switch (array.type_id()) {
    case arrow::Type::INT64:
      return std::to_string(static_cast<const arrow::Int64Array&>(array).Value(i));
    case arrow::Type::DOUBLE:
      return ShortestText(static_cast<const arrow::DoubleArray&>(array).Value(i));
    case arrow::Type::BOOL:
      return std::string(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true"
                                                                                 : "false");
    case arrow::Type::STRING:
      return std::string(static_cast<const arrow::StringArray&>(array).GetView(i));
    default:
      if (IsUuidArrowType(*array.type())) return UuidAt(array, i).ToString();
      return array.GetScalar(i).ValueOrDie()->ToString();
  }
}

std::shared_ptr<arrow::DataType> ArrowTypeOf(lake::ColumnType type) {
  switch (type) {
    case lake::ColumnType::kBoolean:
      return arrow::boolean();
    case lake::ColumnType::kBigint:
      return arrow::int64();
    case lake::ColumnType::kDouble:
      return arrow::float64();
    case lake::ColumnType::kTimestampTz:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case lake::ColumnType::kUuid:
      return UuidArrowType();
    case lake::ColumnType::kVariant:
      return records::VariantType();
    default:
      return arrow::utf8();
  }
}

lake::ColumnType ColumnTypeOf(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
      return lake::ColumnType::kBoolean;
    case arrow::Type::INT64:
      return lake::ColumnType::kBigint;
    case arrow::Type::DOUBLE:
      return lake::ColumnType::kDouble;
    case arrow::Type::TIMESTAMP:
      return lake::ColumnType::kTimestampTz;
    case arrow::Type::EXTENSION:
    case arrow::Type::STRUCT:  // a shredded companion (records/variant_shredding.h)
      if (records::IsVariantType(type)) return lake::ColumnType::kVariant;
      return IsUuidArrowType(type) ? lake::ColumnType::kUuid : lake::ColumnType::kVarchar;
    default:
      return IsUuidArrowType(type) ? lake::ColumnType::kUuid : lake::ColumnType::kVarchar;
  }
}

Result<Coerced> CoerceTo(const arrow::Array& array, lake::ColumnType type) {
  const auto target = ArrowTypeOf(type);
  if (array.type()->Equals(*target)) return Coerced{arrow::MakeArray(array.data()), 0};
  const auto id = array.type_id();
  // A VARIANT companion whose live column is of another type (millpond: the companion is
  // omitted), and a payload value whose live column is a VARIANT, are not representable.
  const bool variant = records::IsVariantType(*array.type());
  // A companion into a variant column: as it is (each flush may shred other keys).
  if (variant && type == lake::ColumnType::kVariant)
    return Coerced{arrow::MakeArray(array.data()), 0};
  switch (variant || type == lake::ColumnType::kVariant ? lake::ColumnType::kOther : type) {
    case lake::ColumnType::kVarchar:
      return Convert<arrow::StringBuilder>(array, target,
                                           [&](int64_t i) { return ValueText(array, i); });
    case lake::ColumnType::kDouble:
      return Convert<arrow::DoubleBuilder>(array, target, [&](int64_t i) -> std::optional<double> {
        if (id == arrow::Type::INT64) {
          return static_cast<double>(static_cast<const arrow::Int64Array&>(array).Value(i));
        }
        if (id == arrow::Type::STRING) {
          return ParseFiniteDoubleText(static_cast<const arrow::StringArray&>(array).GetView(i));
        }
        return std::nullopt;
      });
    case lake::ColumnType::kBigint:
      return Convert<arrow::Int64Builder>(array, target, [&](int64_t i) -> std::optional<int64_t> {
        if (id == arrow::Type::DOUBLE) {
          const double v = static_cast<const arrow::DoubleArray&>(array).Value(i);
          // Integral and inside int64's range (2^63 is not representable).
          if (std::trunc(v) == v && v >= -9223372036854775808.0 && v < 9223372036854775808.0) {
            return static_cast<int64_t>(v);
          }
          return std::nullopt;
        }
        if (id == arrow::Type::STRING) {
          const auto text = static_cast<const arrow::StringArray&>(array).GetView(i);
          if (auto exact = ParseInt64Text(text)) return exact;
          // "3.0" (a JSON double that became text when its column was promoted) is integral.
          const auto v = ParseFiniteDoubleText(text);
          if (v && std::trunc(*v) == *v && std::fabs(*v) < 9007199254740992.0) {
            return static_cast<int64_t>(*v);
          }
        }
        return std::nullopt;
      });
    case lake::ColumnType::kBoolean:
      return Convert<arrow::BooleanBuilder>(array, target, [&](int64_t i) -> std::optional<bool> {
        if (id == arrow::Type::STRING) {
          const auto text = static_cast<const arrow::StringArray&>(array).GetView(i);
          if (text == "true") return true;
          if (text == "false") return false;
        }
        return std::nullopt;
      });
    case lake::ColumnType::kTimestampTz:
      // A live timestamp column wins: text in the typed columns' timestamp grammar is parsed
      // (records/typed_text.h); anything else is null.
      return Convert<arrow::TimestampBuilder>(
          array, target, [&](int64_t i) -> std::optional<int64_t> {
            if (id != arrow::Type::STRING) return std::nullopt;
            return records::ParseTimestampText(
                static_cast<const arrow::StringArray&>(array).GetView(i));
          });
    case lake::ColumnType::kUuid: {
      // A live uuid column wins: text in the uuid grammar (base::Uuid::Parse, the typed
      // columns' own) is parsed to its 16 bytes; anything else is null.
      Coerced out;
      WEIR_ASSIGN_OR_RAISE(out.array, ParseUuidArray(array, &out.nulled));
      return out;
    }
    default: {
      // Types weir does not write: not representable.
      Coerced out;
      out.nulled = array.length() - array.null_count();
      WEIR_ASSIGN_OR_RAISE(out.array, arrow::MakeArrayOfNull(target, array.length()));
      return out;
    }
  }
}

}  // namespace weir::ingest
