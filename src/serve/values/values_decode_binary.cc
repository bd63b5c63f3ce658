// PostgreSQL's binary format of a client's value (the *recv functions' checks): malformed
// input is 08P01, an out-of-range date or time 22008.
#include <fmt/format.h>

#include "serve/values/values_internal.h"

namespace weir::serve::values_internal {
namespace {

Status BadBinary(std::string_view what, std::string_view type_name, std::string_view detail) {
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "08P01",
      fmt::format("{}: invalid binary value for type {}: {}", what, type_name, detail));
}

Status BadBinary(std::string_view what, const PgBaseType& type, std::string_view detail) {
  return BadBinary(what, std::string_view(type.name), detail);
}

Status OutOfRange(std::string_view what, const PgBaseType& type) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22008",
                         fmt::format("{}: {} out of range", what, type.name));
}

// Big-endian fields of a binary value, in order.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  bool Bytes(size_t n, std::string_view& out) {
    if (remaining() < n) return false;
    out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  template <typename T>
  bool Int(T& out) {
    if (remaining() < sizeof(T)) return false;
    std::make_unsigned_t<T> v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      v = static_cast<std::make_unsigned_t<T>>((v << 8) | static_cast<uint8_t>(bytes_[pos_ + i]));
    }
    pos_ += sizeof(T);
    out = static_cast<T>(v);
    return true;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// numeric_recv's checks, then numeric_out's text (DuckDB casts the text to the target type).
Result<std::string> NumericText(std::string_view bytes, const PgBaseType& type,
                                std::string_view what) {
  ByteReader in(bytes);
  uint16_t ndigits = 0;
  int16_t weight = 0;
  uint16_t sign = 0;
  uint16_t dscale = 0;
  if (!in.Int(ndigits) || !in.Int(weight) || !in.Int(sign) || !in.Int(dscale)) {
    return BadBinary(what, type, "shorter than its header");
  }
  if (in.remaining() != size_t{ndigits} * 2) {
    return BadBinary(what, type, "length does not match its digit count");
  }
  switch (sign) {
    case kNumericNaN:
      return std::string("NaN");
    case kNumericPlusInfinity:
      return std::string("Infinity");
    case kNumericMinusInfinity:
      return std::string("-Infinity");
    case kNumericPositive:
    case kNumericNegative:
      break;
    default:
      return BadBinary(what, type, "invalid sign");
  }
  if (dscale > kNumericMaxScale) return BadBinary(what, type, "invalid scale");
  std::vector<uint16_t> digits(ndigits);
  for (uint16_t& digit : digits) {
    in.Int(digit);
    if (digit >= 10000) return BadBinary(what, type, "invalid digit");
  }
  auto digit_at = [&](int i) { return i >= 0 && i < ndigits ? digits[static_cast<size_t>(i)] : 0; };
  std::string text;
  {
    Sink out(text);
    if (sign == kNumericNegative) out += '-';
    if (weight < 0) {
      out += '0';
    } else {
      for (int i = 0; i <= weight; ++i) {
        if (i == 0) {
          AppendInt(out, digit_at(i));
        } else {
          AppendPadded(out, digit_at(i), 4);
        }
      }
    }
    if (dscale > 0) {
      out += '.';
      size_t written = 0;
      for (int i = weight + 1; written < dscale; ++i) {
        char group[4];
        int digit = digit_at(i);
        for (int k = 3; k >= 0; --k) {
          group[k] = static_cast<char>('0' + digit % 10);
          digit /= 10;
        }
        const size_t take = std::min<size_t>(4, dscale - written);
        out.append(group, take);
        written += take;
      }
    }
  }
  return text;
}

template <typename T>
Result<T> ReadExact(std::string_view bytes, const PgBaseType& type, std::string_view what) {
  ByteReader in(bytes);
  T value{};
  if (bytes.size() != sizeof(T) || !in.Int(value)) {
    return BadBinary(what, type, fmt::format("expected {} bytes, got {}", sizeof(T), bytes.size()));
  }
  return value;
}

// Groups `values` (the elements of a `dims` array in row-major order) into nested LIST values;
// no values make one empty list.
Result<OwnedValue> NestLists(std::vector<OwnedValue> values, const std::vector<int32_t>& dims,
                             duckdb_type element_id, std::string_view what) {
  lake::DuckDbLogicalType level_type(duckdb_create_logical_type(element_id));
  if (values.empty()) {
    std::vector<duckdb_value> none;
    return OwnedValue(CreateList(level_type.get(), none));
  }
  for (size_t d = dims.size(); d-- > 0;) {
    const size_t width = static_cast<size_t>(dims[d]);
    std::vector<OwnedValue> grouped;
    grouped.reserve(values.size() / width);
    std::vector<duckdb_value> raw(width);
    for (size_t start = 0; start < values.size(); start += width) {
      for (size_t i = 0; i < width; ++i) raw[i] = values[start + i].get();
      OwnedValue list(duckdb_create_list_value(level_type.get(), raw.data(), width));
      if (!list) return BadBinary(what, "array", "elements DuckDB cannot hold in one list");
      grouped.push_back(std::move(list));
    }
    values = std::move(grouped);
    lake::DuckDbLogicalType outer(duckdb_create_list_type(level_type.get()));
    std::swap(outer, level_type);
  }
  return std::move(values.front());
}

}  // namespace

Result<OwnedValue> DecodeBinaryScalar(std::string_view bytes, const PgBaseType& type,
                                      std::string_view what) {
  switch (type.oid) {
    case 16: {
      WEIR_ASSIGN_OR_RAISE(const uint8_t v, ReadExact<uint8_t>(bytes, type, what));
      return OwnedValue(duckdb_create_bool(v != 0));
    }
    case 21: {
      WEIR_ASSIGN_OR_RAISE(const int16_t v, ReadExact<int16_t>(bytes, type, what));
      return OwnedValue(duckdb_create_int16(v));
    }
    case 23: {
      WEIR_ASSIGN_OR_RAISE(const int32_t v, ReadExact<int32_t>(bytes, type, what));
      return OwnedValue(duckdb_create_int32(v));
    }
    case 20: {
      WEIR_ASSIGN_OR_RAISE(const int64_t v, ReadExact<int64_t>(bytes, type, what));
      return OwnedValue(duckdb_create_int64(v));
    }
    case 26: {
      WEIR_ASSIGN_OR_RAISE(const uint32_t v, ReadExact<uint32_t>(bytes, type, what));
      return OwnedValue(duckdb_create_uint32(v));
    }
    case 700: {
      WEIR_ASSIGN_OR_RAISE(const uint32_t bits, ReadExact<uint32_t>(bytes, type, what));
      float v = 0;
      std::memcpy(&v, &bits, sizeof(v));
      return OwnedValue(duckdb_create_float(v));
    }
    case 701: {
      WEIR_ASSIGN_OR_RAISE(const uint64_t bits, ReadExact<uint64_t>(bytes, type, what));
      double v = 0;
      std::memcpy(&v, &bits, sizeof(v));
      return OwnedValue(duckdb_create_double(v));
    }
    case 1700: {
      WEIR_ASSIGN_OR_RAISE(const std::string text, NumericText(bytes, type, what));
      return Varchar(text, what);
    }
    case 17:
      return OwnedValue(
          duckdb_create_blob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    case 3802:  // jsonb: a version byte (1), then the text
      if (bytes.empty() || bytes[0] != 1) return BadBinary(what, type, "unsupported jsonb version");
      return Varchar(bytes.substr(1), what);
    case 1082: {
      WEIR_ASSIGN_OR_RAISE(const int32_t days, ReadExact<int32_t>(bytes, type, what));
      if (days == std::numeric_limits<int32_t>::min()) {
        return OwnedValue(duckdb_create_date({-kDateInfinity}));
      }
      if (days == kDateInfinity) return OwnedValue(duckdb_create_date({kDateInfinity}));
      int32_t shifted = 0;
      if (__builtin_add_overflow(days, kPgEpochDays, &shifted) || shifted == kDateInfinity) {
        return OutOfRange(what, type);
      }
      return OwnedValue(duckdb_create_date({shifted}));
    }
    case 1083: {
      WEIR_ASSIGN_OR_RAISE(const int64_t micros, ReadExact<int64_t>(bytes, type, what));
      if (micros < 0 || micros > kMicrosPerDay) return OutOfRange(what, type);
      return OwnedValue(duckdb_create_time({micros}));
    }
    case 1266: {
      ByteReader in(bytes);
      int64_t micros = 0;
      int32_t seconds_west = 0;
      if (bytes.size() != 12 || !in.Int(micros) || !in.Int(seconds_west)) {
        return BadBinary(what, type, fmt::format("expected 12 bytes, got {}", bytes.size()));
      }
      if (micros < 0 || micros > kMicrosPerDay || seconds_west < -57599 || seconds_west > 57599) {
        return OutOfRange(what, type);
      }
      return OwnedValue(duckdb_create_time_tz_value(duckdb_create_time_tz(micros, -seconds_west)));
    }
    case 1114:
    case 1184: {
      WEIR_ASSIGN_OR_RAISE(const int64_t micros, ReadExact<int64_t>(bytes, type, what));
      int64_t shifted = 0;
      if (micros == std::numeric_limits<int64_t>::min()) {
        shifted = -kTimestampInfinity;
      } else if (micros == kTimestampInfinity) {
        shifted = kTimestampInfinity;
      } else if (__builtin_add_overflow(micros, kPgEpochMicros, &shifted) ||
                 shifted == kTimestampInfinity) {
        return OutOfRange(what, type);
      }
      return OwnedValue(type.oid == 1114 ? duckdb_create_timestamp({shifted})
                                         : duckdb_create_timestamp_tz({shifted}));
    }
    case 1186: {
      ByteReader in(bytes);
      duckdb_interval interval{0, 0, 0};
      if (bytes.size() != 16 || !in.Int(interval.micros) || !in.Int(interval.days) ||
          !in.Int(interval.months)) {
        return BadBinary(what, type, fmt::format("expected 16 bytes, got {}", bytes.size()));
      }
      return OwnedValue(duckdb_create_interval(interval));
    }
    case 2950: {
      ByteReader in(bytes);
      duckdb_uhugeint uuid{0, 0};
      if (bytes.size() != 16 || !in.Int(uuid.upper) || !in.Int(uuid.lower)) {
        return BadBinary(what, type, fmt::format("expected 16 bytes, got {}", bytes.size()));
      }
      return OwnedValue(duckdb_create_uuid(uuid));
    }
    default:  // text, varchar, bpchar, name, json: the bytes are the text
      return Varchar(bytes, what);
  }
}

Result<OwnedValue> DecodeBinaryArray(std::string_view bytes, const PgBaseType& element,
                                     std::string_view what) {
  const std::string array_type = std::string(element.name) + "[]";
  ByteReader in(bytes);
  int32_t ndim = 0;
  int32_t flags = 0;
  uint32_t element_oid = 0;
  if (!in.Int(ndim) || !in.Int(flags) || !in.Int(element_oid)) {
    return BadBinary(what, array_type, "shorter than its header");
  }
  if (ndim < 0 || ndim > kMaxArrayDims) return BadBinary(what, array_type, "invalid dimensions");
  if (flags != 0 && flags != 1) return BadBinary(what, array_type, "invalid flags");
  if (element_oid != element.oid) {
    return BadBinary(what, array_type, fmt::format("wrong element type {}", element_oid));
  }
  std::vector<int32_t> dims(static_cast<size_t>(ndim));
  size_t total = ndim > 0 ? 1 : 0;
  for (int32_t& dim : dims) {
    int32_t lower_bound = 0;
    if (!in.Int(dim) || !in.Int(lower_bound)) {
      return BadBinary(what, array_type, "shorter than its dimensions");
    }
    if (dim < 0) return BadBinary(what, array_type, "negative dimension");
    total *= static_cast<size_t>(dim);
    // Every element takes at least its 4-byte length.
    if (total > in.remaining() / 4) {
      return BadBinary(what, array_type, "dimensions larger than the data");
    }
  }
  std::vector<OwnedValue> values;
  values.reserve(total);
  for (size_t i = 0; i < total; ++i) {
    int32_t length = 0;
    std::string_view item;
    if (!in.Int(length)) return BadBinary(what, array_type, "fewer elements than its dimensions");
    if (length == -1) {
      values.push_back(NullValue());
      continue;
    }
    if (length < 0 || !in.Bytes(static_cast<size_t>(length), item)) {
      return BadBinary(what, array_type, "element length beyond the data");
    }
    WEIR_ASSIGN_OR_RAISE(OwnedValue value, DecodeBinaryScalar(item, element, what));
    values.push_back(std::move(value));
  }
  if (in.remaining() != 0) return BadBinary(what, array_type, "more data than its dimensions");
  return NestLists(std::move(values), dims, DecodedTypeId(element, 1), what);
}

}  // namespace weir::serve::values_internal
