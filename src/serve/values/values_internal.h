// Private to the values_*.cc files that implement values.h: what they share. The small helpers
// of the encoding hot path (the output Sink, big-endian stores, reading a value from a bound
// vector) are inline here, so that every file inlines them into its per-value code.
//
//   values_types.cc         PostgreSQL's type table; a DuckDB type's encoding plan (BuildNode)
//   values_float.cc         float4out/float8out: PostgreSQL's shortest round-trip digits
//   values_text.cc          AppendText: PostgreSQL's text output of one value
//   values_binary.cc        AppendBinary: PostgreSQL's binary output of one value
//   values_rendered.cc      DuckDB's own rendering of types PostgreSQL has no counterpart of
//   values_encoder.cc       ColumnEncoder and AppendDataRows (DataRow messages)
//   values_decode.cc        DecodeValue; values_decode_text.cc and values_decode_binary.cc
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <duckdb.h>

#include "base/status.h"
#include "lake/duckdb_handles.h"
#include "serve/values/values.h"

namespace weir::serve::values_internal {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;
// PostgreSQL counts dates and timestamps from 2000-01-01, DuckDB from 1970-01-01.
constexpr int32_t kPgEpochDays = 10957;
constexpr int64_t kPgEpochMicros = kPgEpochDays * kMicrosPerDay;
// DuckDB marks infinite dates and timestamps with +/-max; PostgreSQL with max and min.
constexpr int32_t kDateInfinity = std::numeric_limits<int32_t>::max();
constexpr int64_t kTimestampInfinity = std::numeric_limits<int64_t>::max();

// numeric's binary header (PostgreSQL's numeric_send).
constexpr uint16_t kNumericPositive = 0x0000;
constexpr uint16_t kNumericNegative = 0x4000;
constexpr uint16_t kNumericNaN = 0xC000;
constexpr uint16_t kNumericPlusInfinity = 0xD000;
constexpr uint16_t kNumericMinusInfinity = 0xF000;
constexpr uint16_t kNumericMaxScale = 0x3FFF;

// ---------------------------------------------------------------------------------------------
// Writers.

// Appends to a std::string through a pointer: the string grows ahead of the writes (the new part
// zero-filled, in steps of half of what this sink wrote so far) and is cut to what was written
// when the sink goes away, so a value costs a bounds check and a copy rather than std::string's
// bookkeeping on every small append.
class Sink {
 public:
  explicit Sink(std::string& out) : out_(out), begin_(out.size()), size_(begin_) {}
  ~Sink() { out_.resize(size_); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  size_t size() const { return size_; }
  char* data() { return out_.data(); }
  // Room for `n` more bytes at data() + size(); Advance() past what was written there.
  char* Reserve(size_t n) {
    if (out_.size() - size_ < n) Grow(n);
    return out_.data() + size_;
  }
  void Advance(size_t n) { size_ += n; }
  // Skips `n` bytes to be filled in later (a length).
  void Skip(size_t n) {
    Reserve(n);
    size_ += n;
  }
  void Truncate(size_t n) { size_ = n; }

  void append(const char* p, size_t n) {
    std::memcpy(Reserve(n), p, n);
    size_ += n;
  }
  void append(const char* begin, const char* end) {
    append(begin, static_cast<size_t>(end - begin));
  }
  void append(size_t n, char c) {
    std::memset(Reserve(n), c, n);
    size_ += n;
  }
  Sink& operator+=(char c) {
    *Reserve(1) = c;
    ++size_;
    return *this;
  }
  Sink& operator+=(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }

 private:
  [[gnu::noinline]] void Grow(size_t n) {
    out_.resize(size_ + std::max({n, (size_ - begin_) / 2, size_t{64}}));
  }

  std::string& out_;
  size_t begin_;
  size_t size_;
};

inline void StoreBE32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}

inline void StoreBE16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v >> 8);
  p[1] = static_cast<char>(v);
}

inline void AppendBE16(Sink& out, uint16_t v) {
  StoreBE16(out.Reserve(2), v);
  out.Advance(2);
}

inline void AppendBE32(Sink& out, uint32_t v) {
  StoreBE32(out.Reserve(4), v);
  out.Advance(4);
}

inline void AppendBE64(Sink& out, uint64_t v) {
  char* p = out.Reserve(8);
  StoreBE32(p, static_cast<uint32_t>(v >> 32));
  StoreBE32(p + 4, static_cast<uint32_t>(v));
  out.Advance(8);
}

// Forced inline: GCC otherwise calls it out of line from a file with several callers, which
// costs the integer columns' text path about 8% per value.
template <typename T>
[[gnu::always_inline]] inline void AppendInt(Sink& out, T v) {
  char* p = out.Reserve(24);
  out.Advance(static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - p));
}

// Two digits, zero-padded (values 0..99).
inline void AppendTwoDigits(Sink& out, int v) {
  char* p = out.Reserve(2);
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
  out.Advance(2);
}

// At least `width` digits, zero-padded on the left (v >= 0).
inline void AppendPadded(Sink& out, int64_t v, int width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  const int n = static_cast<int>(end - buf);
  if (n < width) out.append(static_cast<size_t>(width - n), '0');
  out.append(buf, end);
}

// ".ffffff" without trailing zeros; nothing when `micros` is zero (0 <= micros < 1e6).
inline void AppendFraction(Sink& out, int64_t micros) {
  if (micros == 0) return;
  char b[7] = {'.'};
  for (int i = 6; i >= 1; --i) {
    b[i] = static_cast<char>('0' + micros % 10);
    micros /= 10;
  }
  int n = 7;
  while (b[n - 1] == '0') --n;
  out.append(b, static_cast<size_t>(n));
}

// ---------------------------------------------------------------------------------------------
// Numbers and dates.

// The decimal digits of `v` (no leading zeros, "0" for zero) at the start of `buf` (>= 40
// bytes); returns how many.
int UInt128Digits(UInt128 v, char* buf);

inline UInt128 ToInt128(const duckdb_hugeint& v) {
  return (static_cast<UInt128>(static_cast<uint64_t>(v.upper)) << 64) | v.lower;
}

inline UInt128 ToUInt128(const duckdb_uhugeint& v) {
  return (static_cast<UInt128>(v.upper) << 64) | v.lower;
}

inline UInt128 Magnitude(Int128 v) {
  return v < 0 ? UInt128{0} - static_cast<UInt128>(v) : static_cast<UInt128>(v);
}

inline int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

inline bool IsArraySpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// duckdb_create_list_value refuses a null array even for no values.
inline duckdb_value CreateList(duckdb_logical_type child_type, std::vector<duckdb_value>& values) {
  duckdb_value none = nullptr;
  return duckdb_create_list_value(child_type, values.empty() ? &none : values.data(),
                                  values.size());
}

// ---------------------------------------------------------------------------------------------
// Types.

struct PgBaseType {
  uint32_t oid;
  uint32_t array_oid;
  int16_t size;
  const char* name;  // format_type()
  const char* duckdb_name;
};

// The table entry of type `oid` (nullptr when it is none of ours).
const PgBaseType* FindPgType(uint32_t oid);
// The element type of array type `oid` (nullptr when `oid` is no array type of ours).
const PgBaseType* FindPgArrayElement(uint32_t oid);

// How a column's values are read from its vector and written.
enum class Kind : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kHugeint,
  kUHugeint,
  kFloat,
  kDouble,
  kDecimal16,
  kDecimal32,
  kDecimal64,
  kDecimal128,
  kString,  // VARCHAR, JSON
  kBlob,
  kDate,
  kTime,
  kTimeNs,
  kTimeTz,
  kTimestamp,  // also _S, _MS, _NS (`unit` says which)
  kTimestampTz,
  kInterval,
  kUuid,
  kEnum8,
  kEnum16,
  kEnum32,
  kBit,
  kList,
  kArray,
  kRendered,  // anything else: DuckDB's own VARCHAR rendering, sent as text
};

enum class TimeUnit : uint8_t { kSeconds, kMillis, kMicros, kNanos };

// One level of a column's type: a scalar, or a list/array with its element below.
struct Node {
  Kind kind = Kind::kRendered;
  PgType pg;
  int scale = 0;  // DECIMAL
  TimeUnit unit = TimeUnit::kMicros;
  idx_t array_size = 0;
  std::vector<std::string> dictionary;  // ENUM
  std::unique_ptr<Node> child;          // LIST / ARRAY
  lake::DuckDbLogicalType owned_type;   // kRendered: to rebuild values
  OutputSettings output;                // the session's (copied to every level)

  // Bound to the current chunk.
  duckdb_vector vector = nullptr;
  const void* data = nullptr;
  const uint64_t* validity = nullptr;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  bool IsNull(idx_t row) const {
    return validity != nullptr && ((validity[row >> 6] >> (row & 63)) & 1) == 0;
  }
  bool IsArray() const { return kind == Kind::kList || kind == Kind::kArray; }
  // Whether the text form can never need quoting inside an array literal.
  bool IsPlainInArray() const { return kind <= Kind::kDecimal128 || kind == Kind::kUuid; }
  bool HasBinary() const { return !IsArray() || !child->IsArray(); }

  void Bind(duckdb_vector v) {
    vector = v;
    data = duckdb_vector_get_data(v);
    validity = duckdb_vector_get_validity(v);
    if (kind == Kind::kList) child->Bind(duckdb_list_vector_get_child(v));
    if (kind == Kind::kArray) child->Bind(duckdb_array_vector_get_child(v));
  }
};

// The encoding plan of a column of `type` (values_types.cc).
std::unique_ptr<Node> BuildNode(duckdb_logical_type type);

// ---------------------------------------------------------------------------------------------
// Reading a value from a bound vector.

template <typename T>
inline const T& At(const void* data, idx_t row) {
  return static_cast<const T*>(data)[row];
}

inline std::string_view StringAt(const void* data, idx_t row) {
  const auto* s = static_cast<const duckdb_string_t*>(data) + row;
  const uint32_t length = s->value.inlined.length;
  return {length <= 12 ? s->value.inlined.inlined : s->value.pointer.ptr, length};
}

inline int64_t TimestampMicros(const Node& node, idx_t row) {
  const int64_t value = At<int64_t>(node.data, row);
  if (value == kTimestampInfinity || value == -kTimestampInfinity) return value;
  switch (node.unit) {
    case TimeUnit::kSeconds:
      return value * kMicrosPerSecond;
    case TimeUnit::kMillis:
      return value * 1000;
    case TimeUnit::kNanos:
      return FloorDiv(value, 1000);  // the printed digits cut to six places
    case TimeUnit::kMicros:
      break;
  }
  return value;
}

inline duckdb_time_tz_struct TimeTzAt(const Node& node, idx_t row) {
  return duckdb_from_time_tz(At<duckdb_time_tz>(node.data, row));
}

inline int64_t TimeTzMicros(const duckdb_time_tz_struct& t) {
  return ((t.time.hour * int64_t{60} + t.time.min) * 60 + t.time.sec) * kMicrosPerSecond +
         t.time.micros;
}

// The decimal at `row` as sign, magnitude and scale (DECIMAL and the wide integers).
struct DecimalParts {
  bool negative;
  UInt128 magnitude;
  int scale;
};

inline DecimalParts DecimalAt(const Node& node, idx_t row) {
  switch (node.kind) {
    case Kind::kDecimal16: {
      const int64_t v = At<int16_t>(node.data, row);
      return {v < 0, Magnitude(v), node.scale};
    }
    case Kind::kDecimal32: {
      const int64_t v = At<int32_t>(node.data, row);
      return {v < 0, Magnitude(v), node.scale};
    }
    case Kind::kDecimal64: {
      const int64_t v = At<int64_t>(node.data, row);
      return {v < 0, Magnitude(v), node.scale};
    }
    case Kind::kUInt64:
      return {false, At<uint64_t>(node.data, row), 0};
    case Kind::kUHugeint:
      return {false, ToUInt128(At<duckdb_uhugeint>(node.data, row)), 0};
    default: {  // kDecimal128, kHugeint
      const Int128 v = static_cast<Int128>(ToInt128(At<duckdb_hugeint>(node.data, row)));
      return {v < 0, Magnitude(v), node.kind == Kind::kDecimal128 ? node.scale : 0};
    }
  }
}

inline std::pair<idx_t, idx_t> ElementRange(const Node& node, idx_t row) {
  if (node.kind == Kind::kArray) return {row * node.array_size, node.array_size};
  const auto& entry = At<duckdb_list_entry>(node.data, row);
  return {entry.offset, entry.length};
}

// DuckDB stores a UUID as a hugeint with the top bit flipped (so it sorts as bytes do).
inline void UuidBytes(const duckdb_hugeint& v, uint8_t bytes[16]) {
  const uint64_t upper = static_cast<uint64_t>(v.upper) ^ (uint64_t{1} << 63);
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<uint8_t>(upper >> (56 - 8 * i));
    bytes[8 + i] = static_cast<uint8_t>(v.lower >> (56 - 8 * i));
  }
}

// ---------------------------------------------------------------------------------------------
// Encoders (the value at `row` is not null; `scratch` is the column's reusable buffer).

// timestamptz_out in `zone` (UTC when null): "YYYY-MM-DD HH:MM:SS[.f]+HH[:MM[:SS]][ BC]".
void AppendTimestampTz(Sink& out, int64_t micros, const TimeZone* zone);
// float4out/float8out with extra_float_digits <= 0: `digits` significant digits, as %g.
void AppendRoundedFloat(Sink& out, double value, int digits);

// PostgreSQL's text output format (values_text.cc).
void AppendText(const Node& node, idx_t row, Sink& out, std::string& scratch);
// PostgreSQL's binary format (values_binary.cc); only where node.HasBinary().
void AppendBinary(const Node& node, idx_t row, Sink& out, std::string& scratch);
// float4out/float8out: PostgreSQL's shortest digits that read back exactly, positional when the
// decimal exponent is in [-4, max_positional), else d.ddde+XX (values_float.cc; float, double).
template <typename T>
void AppendFloat(Sink& out, T value, int max_positional);
extern template void AppendFloat<float>(Sink& out, float value, int max_positional);
extern template void AppendFloat<double>(Sink& out, double value, int max_positional);
// DuckDB's VARCHAR rendering of a kRendered value (values_rendered.cc).
void AppendRendered(const Node& node, idx_t row, Sink& out);

// ---------------------------------------------------------------------------------------------
// Decoding.

constexpr int32_t kMaxArrayDims = 6;

inline OwnedValue NullValue() { return OwnedValue(duckdb_create_null_value()); }

// A VARCHAR value (22021 when `text` is not UTF-8).
Result<OwnedValue> Varchar(std::string_view text, std::string_view what);

// The DuckDB type of a value decoded from PostgreSQL type `type`.
duckdb_type DecodedTypeId(const PgBaseType& type, int16_t format);

// PostgreSQL's text format of `type` (values_decode_text.cc).
Result<OwnedValue> DecodeTextScalar(std::string_view text, const PgBaseType& type,
                                    std::string_view what);
// array_in's literal of an array of `element` (values_decode_text.cc).
Result<OwnedValue> DecodeTextArray(std::string_view text, const PgBaseType& element,
                                   std::string_view what);
// PostgreSQL's binary format of `type` (values_decode_binary.cc).
Result<OwnedValue> DecodeBinaryScalar(std::string_view bytes, const PgBaseType& type,
                                      std::string_view what);
// array_send's format of an array of `element` (values_decode_binary.cc).
Result<OwnedValue> DecodeBinaryArray(std::string_view bytes, const PgBaseType& element,
                                     std::string_view what);

}  // namespace weir::serve::values_internal
