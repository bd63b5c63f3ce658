#include "lake/ducklake/stats_text.h"

#include <charconv>
#include <chrono>
#include <cstdlib>

#include <arrow/array.h>
#include <arrow/scalar.h>
#include <fmt/format.h>

#include "base/number_text.h"
#include "base/uuid_arrow.h"

namespace weir::lake::ducklake {
namespace {

struct CivilTime {
  int64_t year;
  unsigned month, day, hour, minute, second, micro;
};

CivilTime ToCivil(int64_t micros) {
  using namespace std::chrono;
  const sys_time<microseconds> t{microseconds{micros}};
  const auto day_point = floor<days>(t);
  const year_month_day ymd{day_point};
  const auto in_day = t - day_point;
  const auto us = in_day.count();
  return CivilTime{static_cast<int>(ymd.year()),
                   static_cast<unsigned>(ymd.month()),
                   static_cast<unsigned>(ymd.day()),
                   static_cast<unsigned>(us / 3600000000LL),
                   static_cast<unsigned>(us / 60000000LL % 60),
                   static_cast<unsigned>(us / 1000000LL % 60),
                   static_cast<unsigned>(us % 1000000LL)};
}

}  // namespace

std::string TimestampText(int64_t micros) {
  const CivilTime c = ToCivil(micros);
  std::string text = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", c.year, c.month, c.day,
                                 c.hour, c.minute, c.second);
  if (c.micro != 0) {
    std::string fraction = fmt::format("{:06}", c.micro);
    while (fraction.back() == '0') fraction.pop_back();
    text += "." + fraction;
  }
  return text + "+00";
}

std::string TimestampPartitionValue(TransformKind transform, int64_t micros) {
  const CivilTime c = ToCivil(micros);
  switch (transform) {
    case TransformKind::kYear:
      return std::to_string(c.year);
    case TransformKind::kMonth:
      return std::to_string(c.month);
    case TransformKind::kDay:
      return std::to_string(c.day);
    case TransformKind::kHour:
      return std::to_string(c.hour);
    default:
      return TimestampText(micros);
  }
}

std::optional<std::string> StatText(ColumnType type, const std::optional<std::string>& parquet) {
  if (!parquet) return std::nullopt;
  switch (type) {
    case ColumnType::kBoolean:
      return std::string(*parquet == "true" ? "1" : "0");
    case ColumnType::kTimestampTz: {
      const auto micros = ParseInt64Text(*parquet);
      if (!micros) return std::nullopt;
      return TimestampText(*micros);
    }
    case ColumnType::kOther:
      return std::nullopt;
    default:
      return parquet;
  }
}

int CompareStat(ColumnType type, const std::string& a, const std::string& b) {
  switch (type) {
    case ColumnType::kBigint:
    case ColumnType::kInteger:
    case ColumnType::kBoolean: {
      const auto x = ParseInt64Text(a), y = ParseInt64Text(b);
      if (x && y) return *x < *y ? -1 : (*x > *y ? 1 : 0);
      break;
    }
    case ColumnType::kDouble:
    case ColumnType::kFloat: {
      const double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    default:
      break;
  }
  // Text order is the byte order DuckDB uses for VARCHAR, the chronological order of the
  // fixed-width UTC timestamps weir writes, and for uuids (canonical lower-case text, as DuckDB
  // records them too) the order of their 16 bytes.
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::string PartitionDirectory(const PartitionKey& key, const std::optional<std::string>& value) {
  const std::string name =
      key.transform.kind == TransformKind::kIdentity ? key.column : ToString(key.transform);
  if (!value) return name + "=__HIVE_DEFAULT_PARTITION__";
  std::string out = name + "=";
  for (unsigned char c : *value) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

Result<PartitionValue> PartitionValueText(const arrow::Array& array, int64_t i,
                                          const PartitionKey& key) {
  if (array.IsNull(i)) return PartitionValue();
  if (array.type_id() == arrow::Type::TIMESTAMP) {
    const auto& timestamps = static_cast<const arrow::TimestampArray&>(array);
    int64_t micros = timestamps.Value(i);
    switch (static_cast<const arrow::TimestampType&>(*array.type()).unit()) {
      case arrow::TimeUnit::SECOND:
        micros *= 1000000;
        break;
      case arrow::TimeUnit::MILLI:
        micros *= 1000;
        break;
      case arrow::TimeUnit::NANO:
        micros /= 1000;
        break;
      case arrow::TimeUnit::MICRO:
        break;
    }
    return PartitionValue(TimestampPartitionValue(key.transform.kind, micros));
  }
  if (key.transform.kind != TransformKind::kIdentity) {
    return Status::Invalid("partition key ", ToString(key), ": ", ToString(key.transform),
                           " needs a timestamp column, not ", array.type()->ToString());
  }
  switch (array.type_id()) {
    case arrow::Type::INT64:
      return PartitionValue(std::to_string(static_cast<const arrow::Int64Array&>(array).Value(i)));
    case arrow::Type::DOUBLE:
      return PartitionValue(ShortestText(static_cast<const arrow::DoubleArray&>(array).Value(i)));
    case arrow::Type::BOOL:
      return PartitionValue(
          std::string(static_cast<const arrow::BooleanArray&>(array).Value(i) ? "true" : "false"));
    case arrow::Type::STRING:
      return PartitionValue(std::string(static_cast<const arrow::StringArray&>(array).GetView(i)));
    default: {
      // A uuid as DuckDB writes it: the canonical text.
      if (IsUuidArrowType(*array.type())) return PartitionValue(UuidAt(array, i).ToString());
      WEIR_ASSIGN_OR_RAISE(auto scalar, array.GetScalar(i));
      return PartitionValue(scalar->ToString());
    }
  }
}

}  // namespace weir::lake::ducklake
