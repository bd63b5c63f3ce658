// Partition transforms exactly as the Iceberg spec defines them: identity, year, month, day,
// hour (ordinals since 1970), bucket[N] (Murmur3 x86_32 of the spec's hash representation),
// truncate[W] and void; their result types; and the human strings of partition paths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "lake/iceberg/types.h"
#include "lake/iceberg/value.h"
#include "lake/table_spec.h"

namespace weir::lake::iceberg {

enum class TransformKind {
  kIdentity,
  kBucket,
  kTruncate,
  kYear,
  kMonth,
  kDay,
  kHour,
  kVoid,
  kUnknown
};

struct Transform {
  TransformKind kind = TransformKind::kIdentity;
  int64_t parameter = 0;  // N of bucket[N], W of truncate[W]
  std::string text;       // the spec text, kept verbatim for an unknown transform

  // Parses "identity", "bucket[16]", "truncate[4]", "day", ..., "void"; refuses an unknown
  // transform and a bucket count or width that is not positive. The text of every transform
  // but void is parsed by lake::ParseKnownTransform, the one grammar of transform text. The
  // message names the value; callers add the setting it came from.
  static Result<Transform> Parse(std::string_view text);
  // As Parse, but a transform this version does not know (another engine's) becomes kUnknown,
  // which readers ignore and writers refuse (see ResultType).
  static Result<Transform> ParseFromMetadata(std::string_view text);

  // The Iceberg transform of a format-neutral one (the kinds match one to one).
  static Transform Of(const lake::Transform& transform);

  static Transform Identity() { return Transform{TransformKind::kIdentity, 0, ""}; }
  static Transform Bucket(int64_t n) { return Transform{TransformKind::kBucket, n, ""}; }
  static Transform Truncate(int64_t w) { return Transform{TransformKind::kTruncate, w, ""}; }

  std::string ToString() const;

  // The type of the transform's result for a source column of type `source`, or an error when
  // the transform cannot apply to it (day of a string, an unknown transform, ...).
  Result<Type> ResultType(const Type& source) const;

  // The partition value of `value` (of type `source`); null stays null.
  Result<Value> Apply(const Type& source, const Value& value) const;

  bool operator==(const Transform& other) const {
    return kind == other.kind && parameter == other.parameter && text == other.text;
  }
};

// Murmur3 x86 32-bit, seed 0.
int32_t Murmur3Hash32(std::string_view bytes);

// The spec's 32-bit hash of a non-null value (Appendix B): ints and longs as 8-byte
// little-endian longs, dates as longs of days, times and timestamps as longs of microseconds,
// strings as UTF-8, uuids as 16 big-endian bytes, decimals as the minimal two's-complement
// big-endian bytes of the unscaled value.
Result<int32_t> BucketHash(const Type& type, const Value& value);

// The minimal two's-complement big-endian bytes of an unscaled decimal.
std::string MinimalBigEndian(Int128 unscaled);

// The human string of a value of `type` as Iceberg's reference implementation writes it in
// partition paths ("2026-12-01", "2026-12-01T10:00Z"); "null" for null.
std::string HumanString(const Value& value, const Type& type);

// The human string of a partition value produced by `transform` (year "2026", month
// "2026-12", day "2026-12-01", hour "2026-12-01-10", others as HumanString of the result type).
std::string PartitionHumanString(const Transform& transform, const Type& result_type,
                                 const Value& value);

// Percent-escapes text as Java's URLEncoder does (letters, digits, ".-*_" kept, space "+").
std::string EscapePathComponent(std::string_view text);

// Civil date of days since 1970-01-01 (proleptic Gregorian).
struct CivilDate {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
};
CivilDate CivilFromDays(int64_t days);
int64_t DaysFromCivil(int64_t year, int month, int day);

}  // namespace weir::lake::iceberg
