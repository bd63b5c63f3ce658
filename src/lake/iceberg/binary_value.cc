#include "lake/iceberg/binary_value.h"

#include <cstring>

#include "lake/iceberg/transform.h"

namespace weir::lake::iceberg {
namespace {

template <typename T>
std::string LittleEndian(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));  // x86-64 and aarch64 are little-endian
  return bytes;
}

template <typename T>
Result<Value> ReadLittleEndian(std::string_view bytes, const Type& type) {
  if (bytes.size() != sizeof(T)) {
    return Status::Invalid("a ", ToString(type), " bound must be ", sizeof(T), " bytes, got ",
                           bytes.size());
  }
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return Value(value);
}

}  // namespace

Result<std::string> ToBinary(const Value& value, const Type& type) {
  if (IsNull(value) || !Matches(value, type)) {
    return Status::Invalid("cannot serialize: not a non-null ", ToString(type));
  }
  switch (type.id) {
    case TypeId::kBoolean:
      return std::string(1, std::get<bool>(value) ? '\x01' : '\x00');
    case TypeId::kInt:
    case TypeId::kDate:
      return LittleEndian(std::get<int32_t>(value));
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return LittleEndian(std::get<int64_t>(value));
    case TypeId::kFloat:
      return LittleEndian(std::get<float>(value));
    case TypeId::kDouble:
      return LittleEndian(std::get<double>(value));
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed:
      return std::get<std::string>(value);
    case TypeId::kUuid: {
      const UuidBytes& u = std::get<UuidBytes>(value);
      return std::string(reinterpret_cast<const char*>(u.data()), u.size());
    }
    case TypeId::kDecimal:
      return MinimalBigEndian(std::get<DecimalValue>(value).unscaled);
    default:
      return Status::Invalid("type ", ToString(type), " has no binary serialization");
  }
}

Result<Value> FromBinary(std::string_view bytes, const Type& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      if (bytes.size() != 1) return Status::Invalid("a boolean bound must be 1 byte");
      return Value(bytes[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      return ReadLittleEndian<int32_t>(bytes, type);
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      // A column promoted from int keeps 4-byte bounds in files written before the promotion.
      if (bytes.size() == 4) {
        WEIR_ASSIGN_OR_RAISE(const Value narrow, ReadLittleEndian<int32_t>(bytes, type));
        return Value(static_cast<int64_t>(std::get<int32_t>(narrow)));
      }
      return ReadLittleEndian<int64_t>(bytes, type);
    case TypeId::kFloat:
      return ReadLittleEndian<float>(bytes, type);
    case TypeId::kDouble:
      if (bytes.size() == 4) {
        WEIR_ASSIGN_OR_RAISE(const Value narrow, ReadLittleEndian<float>(bytes, type));
        return Value(static_cast<double>(std::get<float>(narrow)));
      }
      return ReadLittleEndian<double>(bytes, type);
    case TypeId::kString:
    case TypeId::kBinary:
      return Value(std::string(bytes));
    case TypeId::kFixed:
      if (static_cast<int>(bytes.size()) != type.length) {
        return Status::Invalid("a ", ToString(type), " bound must be ", type.length, " bytes");
      }
      return Value(std::string(bytes));
    case TypeId::kUuid: {
      if (bytes.size() != 16) return Status::Invalid("a uuid bound must be 16 bytes");
      UuidBytes u;
      std::memcpy(u.data(), bytes.data(), 16);
      return Value(u);
    }
    case TypeId::kDecimal: {
      if (bytes.empty() || bytes.size() > 16) {
        return Status::Invalid("a decimal bound must be 1..16 bytes, got ", bytes.size());
      }
      // Sign-extend the big-endian two's complement.
      auto u = static_cast<UInt128>((static_cast<uint8_t>(bytes[0]) & 0x80) ? -1 : 0);
      for (const char c : bytes) u = (u << 8) | static_cast<uint8_t>(c);
      return Value(DecimalValue{static_cast<Int128>(u)});
    }
    default:
      return Status::Invalid("type ", ToString(type), " has no binary serialization");
  }
}

}  // namespace weir::lake::iceberg
