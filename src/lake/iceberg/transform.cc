#include "lake/iceberg/transform.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "base/number_text.h"
#include "base/text.h"

namespace weir::lake::iceberg {
namespace {

constexpr int64_t kMicrosPerDay = 86'400'000'000LL;
constexpr int64_t kMicrosPerHour = 3'600'000'000LL;

template <typename T>
T FloorDiv(T a, T b) {
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

template <typename T>
T FloorMod(T a, T b) {
  return a - FloorDiv(a, b) * b;
}

std::string LittleEndian64(int64_t v) {
  std::string bytes(8, '\0');
  uint64_t u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return bytes;
}

uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

bool TimeLike(TypeId id) {
  return id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kTimestampTz;
}

Status Unsupported(const Transform& t, const Type& source) {
  return Status::Invalid("transform ", t.ToString(), " cannot apply to a column of type ",
                         ToString(source));
}

// Days since the epoch of a date or timestamp value.
int64_t DaysOf(const Type& source, const Value& value) {
  if (source.id == TypeId::kDate) return std::get<int32_t>(value);
  return FloorDiv(std::get<int64_t>(value), kMicrosPerDay);
}

std::string Pad(int64_t value, int width) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%0*lld", width, static_cast<long long>(value));
  return buffer;
}

std::string DateText(int64_t days) {
  const CivilDate date = CivilFromDays(days);
  return Pad(date.year, 4) + "-" + Pad(date.month, 2) + "-" + Pad(date.day, 2);
}

// java.time.LocalTime.toString: HH:mm, then :ss and a 3- or 6-digit fraction when non-zero.
std::string TimeText(int64_t micros_of_day) {
  const int64_t seconds = micros_of_day / 1'000'000;
  const int64_t fraction = micros_of_day % 1'000'000;
  std::string text = Pad(seconds / 3600, 2) + ":" + Pad((seconds / 60) % 60, 2);
  if (seconds % 60 != 0 || fraction != 0) {
    text += ":" + Pad(seconds % 60, 2);
    if (fraction != 0) {
      text += fraction % 1000 == 0 ? "." + Pad(fraction / 1000, 3) : "." + Pad(fraction, 6);
    }
  }
  return text;
}

std::string TimestampText(int64_t micros) {
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  return DateText(days) + "T" + TimeText(FloorMod(micros, kMicrosPerDay));
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(n >> s) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t n = static_cast<uint8_t>(bytes[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t n =
        (static_cast<uint8_t>(bytes[i]) << 16) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string DecimalText(Int128 unscaled, int scale) {
  const bool negative = unscaled < 0;
  UInt128 magnitude = negative ? static_cast<UInt128>(-(unscaled + 1)) + 1 : unscaled;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) {
      digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return negative ? "-" + digits : digits;
}

// The byte length of the first `code_points` UTF-8 code points of `text`.
size_t Utf8Prefix(std::string_view text, int64_t code_points) {
  size_t i = 0;
  for (int64_t n = 0; n < code_points && i < text.size(); ++n) {
    const auto lead = static_cast<uint8_t>(text[i]);
    i += lead < 0x80           ? 1
         : (lead >> 5) == 0x6  ? 2
         : (lead >> 4) == 0xe  ? 3
         : (lead >> 3) == 0x1e ? 4
                               : 1;
  }
  return std::min(i, text.size());
}

}  // namespace

Transform Transform::Of(const lake::Transform& transform) {
  switch (transform.kind) {
    case lake::TransformKind::kIdentity:
      return Transform{TransformKind::kIdentity, 0, ""};
    case lake::TransformKind::kYear:
      return Transform{TransformKind::kYear, 0, ""};
    case lake::TransformKind::kMonth:
      return Transform{TransformKind::kMonth, 0, ""};
    case lake::TransformKind::kDay:
      return Transform{TransformKind::kDay, 0, ""};
    case lake::TransformKind::kHour:
      return Transform{TransformKind::kHour, 0, ""};
    case lake::TransformKind::kBucket:
      return Transform{TransformKind::kBucket, transform.parameter, ""};
    case lake::TransformKind::kTruncate:
      return Transform{TransformKind::kTruncate, transform.parameter, ""};
  }
  return Transform{TransformKind::kUnknown, 0, lake::ToString(transform)};
}

Result<Transform> Transform::ParseFromMetadata(std::string_view text) {
  const std::string_view trimmed = TrimSpace(text);
  if (trimmed == "void") return Transform{TransformKind::kVoid, 0, ""};
  // The grammar of every transform both sides know is lake's (lake/table_spec.h).
  WEIR_ASSIGN_OR_RAISE(const auto known, lake::ParseKnownTransform(trimmed));
  if (known) return Of(*known);
  return Transform{TransformKind::kUnknown, 0, std::string(trimmed)};
}

Result<Transform> Transform::Parse(std::string_view text) {
  WEIR_ASSIGN_OR_RAISE(Transform t, ParseFromMetadata(text));
  if (t.kind == TransformKind::kUnknown) {
    return Status::Invalid("unknown transform \"", text,
                           "\" (known: identity, year, month, day, hour, bucket[N], "
                           "truncate[W], void)");
  }
  return t;
}

std::string Transform::ToString() const {
  switch (kind) {
    case TransformKind::kIdentity:
      return "identity";
    case TransformKind::kBucket:
      return "bucket[" + std::to_string(parameter) + "]";
    case TransformKind::kTruncate:
      return "truncate[" + std::to_string(parameter) + "]";
    case TransformKind::kYear:
      return "year";
    case TransformKind::kMonth:
      return "month";
    case TransformKind::kDay:
      return "day";
    case TransformKind::kHour:
      return "hour";
    case TransformKind::kVoid:
      return "void";
    case TransformKind::kUnknown:
      return text;
  }
  return text;
}

Result<Type> Transform::ResultType(const Type& source) const {
  const TypeId id = source.id;
  if (!source.is_primitive() || id == TypeId::kUnknown) {
    if (kind == TransformKind::kVoid) return Type::Primitive(TypeId::kInt);
    return Unsupported(*this, source);
  }
  switch (kind) {
    case TransformKind::kIdentity:
    case TransformKind::kVoid:
      return source;
    case TransformKind::kBucket:
      if (id == TypeId::kBoolean || id == TypeId::kFloat || id == TypeId::kDouble) break;
      return Type::Primitive(TypeId::kInt);
    case TransformKind::kTruncate:
      if (id == TypeId::kInt || id == TypeId::kLong || id == TypeId::kDecimal ||
          id == TypeId::kString || id == TypeId::kBinary) {
        return source;
      }
      break;
    case TransformKind::kYear:
    case TransformKind::kMonth:
      if (TimeLike(id)) return Type::Primitive(TypeId::kInt);
      break;
    case TransformKind::kDay:
      if (TimeLike(id)) return Type::Primitive(TypeId::kDate);
      break;
    case TransformKind::kHour:
      if (id == TypeId::kTimestamp || id == TypeId::kTimestampTz) {
        return Type::Primitive(TypeId::kInt);
      }
      break;
    case TransformKind::kUnknown:
      return Status::Invalid("unknown transform \"", text, "\" cannot be written");
  }
  return Unsupported(*this, source);
}

Result<Value> Transform::Apply(const Type& source, const Value& value) const {
  WEIR_RETURN_NOT_OK(ResultType(source).status());
  if (!Matches(value, source)) {
    return Status::Invalid("transform ", ToString(), ": the value is not a ",
                           iceberg::ToString(source));
  }
  if (IsNull(value) || kind == TransformKind::kVoid) return Value();
  switch (kind) {
    case TransformKind::kIdentity:
      return value;
    case TransformKind::kBucket: {
      WEIR_ASSIGN_OR_RAISE(const int32_t hash, BucketHash(source, value));
      return Value(static_cast<int32_t>((hash & INT32_MAX) % parameter));
    }
    case TransformKind::kTruncate:
      switch (source.id) {
        case TypeId::kInt: {
          const int64_t v = std::get<int32_t>(value);
          return Value(static_cast<int32_t>(v - (((v % parameter) + parameter) % parameter)));
        }
        case TypeId::kLong: {
          const Int128 v = std::get<int64_t>(value);
          return Value(static_cast<int64_t>(v - (((v % parameter) + parameter) % parameter)));
        }
        case TypeId::kDecimal: {
          const Int128 v = std::get<DecimalValue>(value).unscaled;
          return Value(DecimalValue{v - (((v % parameter) + parameter) % parameter)});
        }
        case TypeId::kString: {
          const std::string& s = std::get<std::string>(value);
          return Value(s.substr(0, Utf8Prefix(s, parameter)));
        }
        default: {
          const std::string& s = std::get<std::string>(value);
          return Value(s.substr(0, std::min<size_t>(s.size(), static_cast<size_t>(parameter))));
        }
      }
    case TransformKind::kYear: {
      const CivilDate date = CivilFromDays(DaysOf(source, value));
      return Value(static_cast<int32_t>(date.year - 1970));
    }
    case TransformKind::kMonth: {
      const CivilDate date = CivilFromDays(DaysOf(source, value));
      return Value(static_cast<int32_t>((date.year - 1970) * 12 + (date.month - 1)));
    }
    case TransformKind::kDay:
      return Value(static_cast<int32_t>(DaysOf(source, value)));
    case TransformKind::kHour:
      return Value(static_cast<int32_t>(FloorDiv(std::get<int64_t>(value), kMicrosPerHour)));
    default:
      return Status::Invalid("transform ", ToString(), " cannot be applied");
  }
}

int32_t Murmur3Hash32(std::string_view bytes) {
  constexpr uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t blocks = bytes.size() / 4;
  uint32_t h = 0;
  for (size_t i = 0; i < blocks; ++i) {
    uint32_t k = static_cast<uint32_t>(data[4 * i]) |
                 (static_cast<uint32_t>(data[4 * i + 1]) << 8) |
                 (static_cast<uint32_t>(data[4 * i + 2]) << 16) |
                 (static_cast<uint32_t>(data[4 * i + 3]) << 24);
    k *= c1;
    k = Rotl(k, 15);
    k *= c2;
    h ^= k;
    h = Rotl(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const uint8_t* tail = data + 4 * blocks;
  uint32_t k = 0;
  switch (bytes.size() & 3) {
    case 3:
      k ^= static_cast<uint32_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      k ^= static_cast<uint32_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = Rotl(k, 15);
      k *= c2;
      h ^= k;
      break;
    default:
      break;
  }
  h ^= static_cast<uint32_t>(bytes.size());
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return static_cast<int32_t>(h);
}

std::string MinimalBigEndian(Int128 unscaled) {
  std::string bytes(16, '\0');
  auto u = static_cast<UInt128>(unscaled);
  for (int i = 15; i >= 0; --i) {
    bytes[i] = static_cast<char>(static_cast<uint8_t>(u & 0xff));
    u >>= 8;
  }
  // Drop leading bytes that only repeat the sign of the next one.
  size_t start = 0;
  while (start < 15) {
    const auto b = static_cast<uint8_t>(bytes[start]);
    const auto next = static_cast<uint8_t>(bytes[start + 1]);
    if ((b == 0x00 && (next & 0x80) == 0) || (b == 0xff && (next & 0x80) != 0)) {
      ++start;
    } else {
      break;
    }
  }
  return bytes.substr(start);
}

Result<int32_t> BucketHash(const Type& type, const Value& value) {
  if (IsNull(value) || !Matches(value, type)) {
    return Status::Invalid("bucket hash: not a non-null ", ToString(type));
  }
  switch (type.id) {
    case TypeId::kInt:
    case TypeId::kDate:
      return Murmur3Hash32(LittleEndian64(std::get<int32_t>(value)));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return Murmur3Hash32(LittleEndian64(std::get<int64_t>(value)));
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed:
      return Murmur3Hash32(std::get<std::string>(value));
    case TypeId::kUuid: {
      const UuidBytes& u = std::get<UuidBytes>(value);
      return Murmur3Hash32(std::string_view(reinterpret_cast<const char*>(u.data()), u.size()));
    }
    case TypeId::kDecimal:
      return Murmur3Hash32(MinimalBigEndian(std::get<DecimalValue>(value).unscaled));
    default:
      return Status::Invalid("bucket hash: type ", ToString(type), " is not hashed");
  }
}

std::string HumanString(const Value& value, const Type& type) {
  if (IsNull(value)) return "null";
  switch (type.id) {
    case TypeId::kBoolean:
      return std::get<bool>(value) ? "true" : "false";
    case TypeId::kInt:
      return std::to_string(std::get<int32_t>(value));
    case TypeId::kLong:
      return std::to_string(std::get<int64_t>(value));
    case TypeId::kFloat:
      return ShortestText(static_cast<double>(std::get<float>(value)));
    case TypeId::kDouble:
      return ShortestText(std::get<double>(value));
    case TypeId::kDate:
      return DateText(std::get<int32_t>(value));
    case TypeId::kTime:
      return TimeText(std::get<int64_t>(value));
    case TypeId::kTimestamp:
      return TimestampText(std::get<int64_t>(value));
    case TypeId::kTimestampTz:
      return TimestampText(std::get<int64_t>(value)) + "Z";
    case TypeId::kString:
      return std::get<std::string>(value);
    case TypeId::kUuid: {
      const UuidBytes& u = std::get<UuidBytes>(value);
      std::string text;
      char hex[3];
      for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        std::snprintf(hex, sizeof(hex), "%02x", u[i]);
        text += hex;
      }
      return text;
    }
    case TypeId::kBinary:
    case TypeId::kFixed:
      return Base64(std::get<std::string>(value));
    case TypeId::kDecimal:
      return DecimalText(std::get<DecimalValue>(value).unscaled, type.scale);
    default:
      return "?";
  }
}

std::string PartitionHumanString(const Transform& transform, const Type& result_type,
                                 const Value& value) {
  if (IsNull(value)) return "null";
  switch (transform.kind) {
    case TransformKind::kYear:
      return Pad(1970 + std::get<int32_t>(value), 4);
    case TransformKind::kMonth: {
      const int64_t m = std::get<int32_t>(value);
      return Pad(1970 + FloorDiv<int64_t>(m, 12), 4) + "-" + Pad(1 + FloorMod<int64_t>(m, 12), 2);
    }
    case TransformKind::kDay:
      return DateText(std::get<int32_t>(value));
    case TransformKind::kHour: {
      const int64_t h = std::get<int32_t>(value);
      return DateText(FloorDiv<int64_t>(h, 24)) + "-" + Pad(FloorMod<int64_t>(h, 24), 2);
    }
    default:
      return HumanString(value, result_type);
  }
}

std::string EscapePathComponent(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<uint8_t>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '-' || c == '*' || c == '_') {
      out += c;
    } else if (c == ' ') {
      out += '+';
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", u);
      out += hex;
    }
  }
  return out;
}

// Howard Hinnant's days_from_civil / civil_from_days.
CivilDate CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = FloorDiv<int64_t>(days, 146097);
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return CivilDate{yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = FloorDiv<int64_t>(year, 400);
  const int64_t yoe = year - era * 400;
  const int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace weir::lake::iceberg
