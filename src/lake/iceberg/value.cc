#include "lake/iceberg/value.h"

#include <cmath>
#include <cstring>

#include "lake/iceberg/transform.h"

namespace weir::lake::iceberg {
namespace {

template <typename T>
int Order(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

template <typename F>
int OrderFloat(F a, F b) {
  if (a == b && a == 0) return Order(std::signbit(b), std::signbit(a));
  return Order(a, b);
}

}  // namespace

bool Matches(const Value& value, const Type& type) {
  if (IsNull(value)) return true;
  switch (type.id) {
    case TypeId::kBoolean:
      return std::holds_alternative<bool>(value);
    case TypeId::kInt:
    case TypeId::kDate:
      return std::holds_alternative<int32_t>(value);
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return std::holds_alternative<int64_t>(value);
    case TypeId::kFloat:
      return std::holds_alternative<float>(value);
    case TypeId::kDouble:
      return std::holds_alternative<double>(value);
    case TypeId::kString:
    case TypeId::kBinary:
      return std::holds_alternative<std::string>(value);
    case TypeId::kFixed:
      return std::holds_alternative<std::string>(value) &&
             static_cast<int>(std::get<std::string>(value).size()) == type.length;
    case TypeId::kDecimal:
      return std::holds_alternative<DecimalValue>(value);
    case TypeId::kUuid:
      return std::holds_alternative<UuidBytes>(value);
    default:
      return false;
  }
}

int Compare(const Value& a, const Value& b) {
  if (a.index() != b.index()) return Order(a.index(), b.index());
  switch (a.index()) {
    case 1:
      return Order(std::get<bool>(a), std::get<bool>(b));
    case 2:
      return Order(std::get<int32_t>(a), std::get<int32_t>(b));
    case 3:
      return Order(std::get<int64_t>(a), std::get<int64_t>(b));
    case 4:
      return OrderFloat(std::get<float>(a), std::get<float>(b));
    case 5:
      return OrderFloat(std::get<double>(a), std::get<double>(b));
    case 6: {
      const std::string& x = std::get<std::string>(a);
      const std::string& y = std::get<std::string>(b);
      const int c = std::memcmp(x.data(), y.data(), std::min(x.size(), y.size()));
      return c != 0 ? (c < 0 ? -1 : 1) : Order(x.size(), y.size());
    }
    case 7:
      return Order(std::get<DecimalValue>(a).unscaled, std::get<DecimalValue>(b).unscaled);
    case 8:
      return Order(std::get<UuidBytes>(a), std::get<UuidBytes>(b));
    default:
      return 0;
  }
}

std::string DebugString(const Value& value, const Type& type) {
  if (IsNull(value)) return "null";
  return HumanString(value, type);
}

}  // namespace weir::lake::iceberg
