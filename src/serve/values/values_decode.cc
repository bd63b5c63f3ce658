// DecodeValue: a client's value (Bind parameter, COPY field) in PostgreSQL's text or binary
// format, to a DuckDB value.
#include <fmt/format.h>

#include "serve/values/values.h"
#include "serve/values/values_internal.h"

namespace weir::serve {
namespace values_internal {

Result<OwnedValue> Varchar(std::string_view text, std::string_view what) {
  OwnedValue value(duckdb_create_varchar_length(text.data(), text.size()));
  if (!value) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22021",
                           fmt::format("{}: invalid byte sequence for encoding \"UTF8\"", what));
  }
  return value;
}

// The DuckDB type of a value decoded from PostgreSQL type `type`.
duckdb_type DecodedTypeId(const PgBaseType& type, int16_t format) {
  switch (type.oid) {
    case 17:
      return DUCKDB_TYPE_BLOB;
    case 16:
      return DUCKDB_TYPE_BOOLEAN;
    default:
      break;
  }
  if (format == 0) return DUCKDB_TYPE_VARCHAR;
  switch (type.oid) {
    case 21:
      return DUCKDB_TYPE_SMALLINT;
    case 23:
      return DUCKDB_TYPE_INTEGER;
    case 20:
      return DUCKDB_TYPE_BIGINT;
    case 26:
      return DUCKDB_TYPE_UINTEGER;
    case 700:
      return DUCKDB_TYPE_FLOAT;
    case 701:
      return DUCKDB_TYPE_DOUBLE;
    case 1082:
      return DUCKDB_TYPE_DATE;
    case 1083:
      return DUCKDB_TYPE_TIME;
    case 1266:
      return DUCKDB_TYPE_TIME_TZ;
    case 1114:
      return DUCKDB_TYPE_TIMESTAMP;
    case 1184:
      return DUCKDB_TYPE_TIMESTAMP_TZ;
    case 1186:
      return DUCKDB_TYPE_INTERVAL;
    case 2950:
      return DUCKDB_TYPE_UUID;
    default:
      return DUCKDB_TYPE_VARCHAR;
  }
}

}  // namespace values_internal

namespace {

using values_internal::FindPgArrayElement;
using values_internal::FindPgType;
using values_internal::NullValue;
using values_internal::PgBaseType;
using values_internal::Varchar;

Result<OwnedValue> Decode(std::optional<std::string_view> bytes, int16_t format, uint32_t oid,
                          std::string_view what) {
  if (!bytes.has_value()) return NullValue();
  if (format != 0 && format != 1) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22023",
                           fmt::format("{}: unsupported format code {}", what, format));
  }
  const PgBaseType* scalar = FindPgType(oid);
  const PgBaseType* element = scalar == nullptr ? FindPgArrayElement(oid) : nullptr;
  if (format == 0) {
    if (element != nullptr) return values_internal::DecodeTextArray(*bytes, *element, what);
    return scalar == nullptr ? Varchar(*bytes, what)
                             : values_internal::DecodeTextScalar(*bytes, *scalar, what);
  }
  if (scalar != nullptr) return values_internal::DecodeBinaryScalar(*bytes, *scalar, what);
  if (element != nullptr) return values_internal::DecodeBinaryArray(*bytes, *element, what);
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "08P01",
      fmt::format("{}: binary format is not supported for type OID {}", what, oid));
}

}  // namespace

Result<OwnedValue> DecodeValue(std::optional<std::string_view> bytes, int16_t format, uint32_t oid,
                               std::string_view what) {
  WEIR_ASSIGN_OR_RAISE(OwnedValue value, Decode(bytes, format, oid, what));
  if (!value) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P02",
                           fmt::format("{}: a value DuckDB cannot hold", what));
  }
  return value;
}

}  // namespace weir::serve
