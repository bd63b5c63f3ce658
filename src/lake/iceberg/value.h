// One Iceberg value (a partition value, a bound), interpreted through its Type.
//
// The representation follows the spec's physical forms: date = int32 days, time/timestamp(tz)
// = int64 microseconds, string/binary/fixed = bytes in std::string, decimal = the unscaled
// 128-bit integer (the scale is the type's), uuid = 16 big-endian bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>

#include "lake/iceberg/types.h"

namespace weir::lake::iceberg {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

struct DecimalValue {
  Int128 unscaled = 0;
  bool operator==(const DecimalValue&) const = default;
};

using UuidBytes = std::array<uint8_t, 16>;

using Value = std::variant<std::monostate, bool, int32_t, int64_t, float, double, std::string,
                           DecimalValue, UuidBytes>;

inline bool IsNull(const Value& value) { return std::holds_alternative<std::monostate>(value); }

// Whether `value` has the representation `type` needs.
bool Matches(const Value& value, const Type& type);

// Orders two non-null values of one primitive type as Iceberg does (strings and binary by
// unsigned bytes, floats with -0.0 before 0.0); -1, 0 or 1.
int Compare(const Value& a, const Value& b);

// The spec's JSON single-value form (Appendix D), used in tests and diagnostics.
std::string DebugString(const Value& value, const Type& type);

}  // namespace weir::lake::iceberg
