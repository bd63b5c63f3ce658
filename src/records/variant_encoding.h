// JSON text → the Parquet Variant binary encoding (parquet-format VariantEncoding.md): one
// value's `metadata` (a dictionary of its object keys, sorted and unique, version 1) and
// `value` (primitives, short strings, objects with field ids and offsets, arrays), with the
// smallest header sizes that fit.
//
// Numbers are encoded as DuckDB's `json::VARIANT` types them, so a reader gets back what it
// would from DuckDB's own cast: an integer in int64's range as the narrowest of int8/16/32/64;
// an integer in (INT64_MAX, UINT64_MAX] (DuckDB's UINT64, which Variant lacks) exactly, as a
// decimal16 of scale 0; a larger integer, and every number with a fraction or exponent, as a
// double (±inf beyond its range). Duplicate keys of an object keep the last value.
//
// Threading: an encoder is used by one thread at a time (it reuses its parser and buffers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace weir::records {

// The bytes (1 to 4) of the Variant spec's offset and field-id fields able to hold `max_value`.
inline int VariantFieldBytes(uint64_t max_value) {
  if (max_value <= 0xFF) return 1;
  if (max_value <= 0xFFFF) return 2;
  if (max_value <= 0xFFFFFF) return 3;
  return 4;
}

// Primitive type ids of the Variant spec used here.
enum class VariantPrimitive : uint8_t {
  kNull = 0,
  kTrue = 1,
  kFalse = 2,
  kInt8 = 3,
  kInt16 = 4,
  kInt32 = 5,
  kInt64 = 6,
  kDouble = 7,
  kDecimal16 = 10,
  kString = 16,
};

struct VariantBytes {
  std::string metadata;
  std::string value;
};

class VariantEncoder {
 public:
  VariantEncoder();
  ~VariantEncoder();
  VariantEncoder(const VariantEncoder&) = delete;
  VariantEncoder& operator=(const VariantEncoder&) = delete;

  // Encodes one JSON document into `out` (overwritten). Bad data when `json` is not one valid
  // JSON value (trailing content, invalid UTF-8, nesting beyond the parser's depth).
  Status Encode(std::string_view json, VariantBytes* out);

 private:
  struct Impl;
  Impl* impl_;
};

// The metadata of a value without object keys (`01 00 00`).
std::string_view EmptyVariantMetadata();

}  // namespace weir::records
