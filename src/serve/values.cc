#include "serve/values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace weir::serve {
namespace {

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

template <typename T>
inline void AppendInt(Sink& out, T v) {
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

constexpr char kHexDigits[] = "0123456789abcdef";

inline void AppendHex(Sink& out, const uint8_t* bytes, size_t size) {
  char* p = out.Reserve(2 * size);
  out.Advance(2 * size);
  for (size_t i = 0; i < size; ++i) {
    *p++ = kHexDigits[bytes[i] >> 4];
    *p++ = kHexDigits[bytes[i] & 15];
  }
}

// The decimal digits of `v` (no leading zeros, "0" for zero) at the start of `buf` (>= 40
// bytes); returns how many.
int UInt128Digits(UInt128 v, char* buf) {
  constexpr uint64_t kChunk = 10000000000000000000ULL;  // 10^19
  char tmp[48];
  int pos = sizeof(tmp);
  while (v > std::numeric_limits<uint64_t>::max()) {
    uint64_t chunk = static_cast<uint64_t>(v % kChunk);
    v /= kChunk;
    for (int i = 0; i < 19; ++i) {
      tmp[--pos] = static_cast<char>('0' + chunk % 10);
      chunk /= 10;
    }
  }
  char head[24];
  auto [end, ec] = std::to_chars(head, head + sizeof(head), static_cast<uint64_t>(v));
  const int head_len = static_cast<int>(end - head);
  std::memcpy(buf, head, static_cast<size_t>(head_len));
  const int tail_len = static_cast<int>(sizeof(tmp)) - pos;
  std::memcpy(buf + head_len, tmp + pos, static_cast<size_t>(tail_len));
  return head_len + tail_len;
}

inline UInt128 ToInt128(const duckdb_hugeint& v) {
  return (static_cast<UInt128>(static_cast<uint64_t>(v.upper)) << 64) | v.lower;
}

inline UInt128 ToUInt128(const duckdb_uhugeint& v) {
  return (static_cast<UInt128>(v.upper) << 64) | v.lower;
}

inline UInt128 Magnitude(Int128 v) {
  return v < 0 ? UInt128{0} - static_cast<UInt128>(v) : static_cast<UInt128>(v);
}

// numeric_out: the digits of `magnitude` with `scale` of them after the point.
void AppendDecimalText(Sink& out, bool negative, UInt128 magnitude, int scale) {
  char digits[48];
  const int n = UInt128Digits(magnitude, digits);
  if (negative && magnitude != 0) out += '-';
  if (scale == 0) {
    out.append(digits, static_cast<size_t>(n));
  } else if (n > scale) {
    out.append(digits, static_cast<size_t>(n - scale));
    out += '.';
    out.append(digits + n - scale, static_cast<size_t>(scale));
  } else {
    out += "0.";
    out.append(static_cast<size_t>(scale - n), '0');
    out.append(digits, static_cast<size_t>(n));
  }
}

// numeric_send: ndigits, weight, sign, dscale, then base-10000 digits with leading and trailing
// zero digits stripped (the decimal point sits between base-10000 digits).
void AppendNumericBinary(Sink& out, bool negative, UInt128 magnitude, int scale) {
  constexpr uint64_t kPow10[] = {1, 10, 100, 1000};
  const int pad = (4 - scale % 4) % 4;  // aligns the point on a base-10000 digit
  if (magnitude < 1000000000000000ULL) {
    // Fast path: the value fits 64 bits once aligned; base-10000 digits from the right.
    uint64_t v = static_cast<uint64_t>(magnitude) * kPow10[pad];
    uint16_t groups[8];
    int count = 0;
    for (; v != 0; v /= 10000) groups[count++] = static_cast<uint16_t>(v % 10000);
    int low = 0;
    while (low < count && groups[low] == 0) ++low;
    const int ndigits = count - low;
    char* p = out.Reserve(8 + 2 * static_cast<size_t>(ndigits));
    StoreBE16(p, static_cast<uint16_t>(ndigits));
    StoreBE16(p + 2, static_cast<uint16_t>(ndigits == 0 ? 0 : count - 1 - (scale + pad) / 4));
    StoreBE16(p + 4, negative && ndigits > 0 ? kNumericNegative : kNumericPositive);
    StoreBE16(p + 6, static_cast<uint16_t>(scale));
    for (int g = count - 1, i = 0; g >= low; --g, ++i) StoreBE16(p + 8 + 2 * i, groups[g]);
    out.Advance(8 + 2 * static_cast<size_t>(ndigits));
    return;
  }
  char digits[48];
  const int n = UInt128Digits(magnitude, digits);
  const int int_len = std::max(n - scale, 0);
  const int int_pad = (4 - int_len % 4) % 4;
  const int frac_pad = pad;
  char padded[128];
  int len = 0;
  std::memset(padded, '0', sizeof(padded));
  len += int_pad;
  std::memcpy(padded + len, digits, static_cast<size_t>(int_len));
  len += int_len;
  if (n >= scale) {
    std::memcpy(padded + len, digits + int_len, static_cast<size_t>(scale));
  } else {
    std::memcpy(padded + len + scale - n, digits, static_cast<size_t>(n));
  }
  len += scale + frac_pad;
  uint16_t groups[32];
  const int count = len / 4;
  for (int g = 0; g < count; ++g) {
    const char* p = padded + 4 * g;
    groups[g] = static_cast<uint16_t>((p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 +
                                      (p[3] - '0'));
  }
  int first = 0;
  int last = count;
  int weight = (int_pad + int_len) / 4 - 1;
  while (first < last && groups[first] == 0) {
    ++first;
    --weight;
  }
  while (last > first && groups[last - 1] == 0) --last;
  if (first == last) weight = 0;
  AppendBE16(out, static_cast<uint16_t>(last - first));
  AppendBE16(out, static_cast<uint16_t>(static_cast<int16_t>(weight)));
  AppendBE16(out, negative && first < last ? kNumericNegative : kNumericPositive);
  AppendBE16(out, static_cast<uint16_t>(scale));
  for (int g = first; g < last; ++g) AppendBE16(out, groups[g]);
}

// ---------------------------------------------------------------------------------------------
// float4out/float8out with extra_float_digits > 0: the shortest digits that read back exactly
// (PostgreSQL's Ryu), positional when the decimal exponent is in [-4, max_positional), else
// d.ddde+XX.
//
// std::to_chars gives the shortest digits too, with one difference: PostgreSQL builds Ryu with
// the bounds of the rounding interval excluded, so where the shortest digits fall exactly on a
// bound (5.51e+21 is the midpoint between two doubles), it prints the shortest digits strictly
// inside instead (5.510000000000001e+21). Such values are recognised exactly and redone.

// The digits of a float: d1.d2...dn * 10^exponent.
struct FloatDigits {
  char digits[24];
  int count = 0;
  int exponent = 0;
};

// The digits as an integer (at most 17 of them).
uint64_t SignificandOf(const FloatDigits& f) {
  uint64_t significand = 0;
  for (int i = 0; i < f.count; ++i) {
    significand = significand * 10 + static_cast<uint64_t>(f.digits[i] - '0');
  }
  return significand;
}

// Parses std::to_chars' "d[.ddd]e(+|-)XX[X]" (the sign already skipped).
FloatDigits ParseScientific(const char* p, const char* end) {
  FloatDigits f;
  const char* e = end - 3;
  while (*e != 'e') --e;
  f.digits[0] = p[0];
  f.count = 1;
  if (p + 1 < e) {  // "d.ddd"
    const auto rest = static_cast<size_t>(e - (p + 2));
    std::memcpy(f.digits + 1, p + 2, rest);
    f.count += static_cast<int>(rest);
  }
  for (const char* q = e + 2; q < end; ++q) f.exponent = f.exponent * 10 + (*q - '0');
  if (e[1] == '-') f.exponent = -f.exponent;
  return f;
}

constexpr uint64_t kPow5[] = {1ULL,
                              5ULL,
                              25ULL,
                              125ULL,
                              625ULL,
                              3125ULL,
                              15625ULL,
                              78125ULL,
                              390625ULL,
                              1953125ULL,
                              9765625ULL,
                              48828125ULL,
                              244140625ULL,
                              1220703125ULL,
                              6103515625ULL,
                              30517578125ULL,
                              152587890625ULL,
                              762939453125ULL,
                              3814697265625ULL,
                              19073486328125ULL,
                              95367431640625ULL,
                              476837158203125ULL,
                              2384185791015625ULL,
                              11920928955078125ULL,
                              59604644775390625ULL,
                              298023223876953125ULL,
                              1490116119384765625ULL,
                              7450580596923828125ULL};

// Whether significand * 10^exponent10 is exactly odd * 2^exponent2 (`odd` odd, below 2^56).
bool DecimalIsDyadic(uint64_t significand, int exponent10, uint64_t odd, int exponent2) {
  if (significand == 0) return false;
  if (exponent10 >= 0) {
    if (exponent10 >= static_cast<int>(std::size(kPow5))) return false;
    const int twos = __builtin_ctzll(significand);
    const UInt128 odd_part = static_cast<UInt128>(significand >> twos) * kPow5[exponent10];
    return odd_part == odd && twos + exponent10 == exponent2;
  }
  const int fives = -exponent10;
  if (fives >= static_cast<int>(std::size(kPow5)) || significand % kPow5[fives] != 0) return false;
  const uint64_t rest = significand / kPow5[fives];
  const int twos = __builtin_ctzll(rest);
  return (rest >> twos) == odd && twos - fives == exponent2;
}

template <typename T>
struct FloatTraits;
template <>
struct FloatTraits<double> {
  using Bits = uint64_t;
  static constexpr int kMantissaBits = 52;
  static constexpr int kExponentBias = 1023;
  static constexpr int kMaxDigits = 17;
  static double Parse(const char* text) { return std::strtod(text, nullptr); }
};
template <>
struct FloatTraits<float> {
  using Bits = uint32_t;
  static constexpr int kMantissaBits = 23;
  static constexpr int kExponentBias = 127;
  static constexpr int kMaxDigits = 9;
  static float Parse(const char* text) { return std::strtof(text, nullptr); }
};

// Whether the decimal `f` is exactly a bound of the interval of decimals that round to `value`
// (positive, finite, not zero).
template <typename T>
bool OnRoundingBound(T value, const FloatDigits& f) {
  using Traits = FloatTraits<T>;
  typename Traits::Bits bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint64_t fraction = bits & ((typename Traits::Bits{1} << Traits::kMantissaBits) - 1);
  const int biased = static_cast<int>(bits >> Traits::kMantissaBits);
  // value = m * 2^e
  const uint64_t m = biased == 0 ? fraction : fraction | (uint64_t{1} << Traits::kMantissaBits);
  const int e = (biased == 0 ? 1 : biased) - Traits::kExponentBias - Traits::kMantissaBits;
  const int exponent10 = f.exponent - (f.count - 1);
  // The common case, cheaply: a bound below 1 needs the digits to be a multiple of 5.
  const char last = f.digits[f.count - 1];
  if (exponent10 < 0 && last != '5' && last != '0') return false;
  const uint64_t significand = SignificandOf(f);
  if (DecimalIsDyadic(significand, exponent10, 2 * m + 1, e - 1)) return true;
  if (fraction == 0 && biased > 1) {  // the gap below a power of two is half as wide
    return DecimalIsDyadic(significand, exponent10, 4 * m - 1, e - 2);
  }
  return DecimalIsDyadic(significand, exponent10, 2 * m - 1, e - 1);
}

// The digits of significand * 10^exponent10, trailing zeros dropped.
FloatDigits DigitsOf(uint64_t significand, int exponent10) {
  FloatDigits f;
  f.count = static_cast<int>(std::to_chars(f.digits, f.digits + 21, significand).ptr - f.digits);
  f.exponent = exponent10 + f.count - 1;
  while (f.count > 1 && f.digits[f.count - 1] == '0') --f.count;
  return f;
}

// Whether `f` reads back as `value` and is not on a bound of its rounding interval.
template <typename T>
bool StrictlyInside(T value, const FloatDigits& f) {
  char text[48];
  char* p = std::to_chars(text, text + 24, SignificandOf(f)).ptr;
  *p++ = 'e';
  *std::to_chars(p, text + 47, f.exponent - (f.count - 1)).ptr = '\0';
  return FloatTraits<T>::Parse(text) == value && !OnRoundingBound(value, f);
}

// The digits PostgreSQL prints for `value` (positive, finite, not zero).
template <typename T>
FloatDigits PgShortestDigits(T value) {
  char buf[48];
  const char* end = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific).ptr;
  const FloatDigits shortest = ParseScientific(buf, end);
  if (!OnRoundingBound(value, shortest)) return shortest;
  // The value rounded to ever more digits until strictly inside (or, where the interval is
  // lopsided below a power of two, the next decimal up at that precision).
  for (int count = shortest.count + 1; count <= FloatTraits<T>::kMaxDigits; ++count) {
    end =
        std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific, count - 1).ptr;
    const FloatDigits rounded = ParseScientific(buf, end);
    const int exponent10 = rounded.exponent - (rounded.count - 1);
    const uint64_t significand = SignificandOf(rounded);
    for (const uint64_t candidate : {significand, significand + 1}) {
      const FloatDigits f = DigitsOf(candidate, exponent10);
      if (StrictlyInside(value, f)) return f;
    }
  }
  return shortest;
}

template <typename T>
void AppendFloat(Sink& out, T value, int max_positional) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Infinity" : "Infinity";
    return;
  }
  char* start = out.Reserve(48);
  char* w = start;
  if (std::signbit(value)) {
    *w++ = '-';
    value = -value;
  }
  if (value == 0) {
    *w++ = '0';
    out.Advance(static_cast<size_t>(w - start));
    return;
  }
  const FloatDigits f = PgShortestDigits(value);
  const char* digits = f.digits;
  const int count = f.count;
  const int exponent = f.exponent;
  if (exponent < -4 || exponent >= max_positional) {
    *w++ = digits[0];
    if (count > 1) {
      *w++ = '.';
      std::memcpy(w, digits + 1, static_cast<size_t>(count - 1));
      w += count - 1;
    }
    *w++ = 'e';
    *w++ = exponent < 0 ? '-' : '+';
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude >= 100) *w++ = static_cast<char>('0' + magnitude / 100);
    *w++ = static_cast<char>('0' + magnitude / 10 % 10);
    *w++ = static_cast<char>('0' + magnitude % 10);
  } else if (exponent < 0) {
    *w++ = '0';
    *w++ = '.';
    for (int i = -1; i > exponent; --i) *w++ = '0';
    std::memcpy(w, digits, static_cast<size_t>(count));
    w += count;
  } else if (count <= exponent + 1) {
    std::memcpy(w, digits, static_cast<size_t>(count));
    w += count;
    for (int i = count; i <= exponent; ++i) *w++ = '0';
  } else {
    std::memcpy(w, digits, static_cast<size_t>(exponent + 1));
    w += exponent + 1;
    *w++ = '.';
    std::memcpy(w, digits + exponent + 1, static_cast<size_t>(count - exponent - 1));
    w += count - exponent - 1;
  }
  out.Advance(static_cast<size_t>(w - start));
}

// ---------------------------------------------------------------------------------------------
// Calendar (proleptic Gregorian, astronomical years: 0 is 1 BC).

inline int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

struct CivilDate {
  int64_t year;
  int month;
  int day;
};

CivilDate CivilFromDays(int64_t days_since_1970) {
  const int64_t z = days_since_1970 + 719468;  // days since 0000-03-01
  const int64_t era = FloorDiv(z, 146097);
  const int64_t day_of_era = z - era * 146097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;  // March is 0
  const int day = static_cast<int>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  const int month = static_cast<int>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

// "YYYY-MM-DD" (at least four year digits); returns whether the date is BC.
bool AppendCivilDate(Sink& out, int64_t days_since_1970) {
  const CivilDate date = CivilFromDays(days_since_1970);
  const bool bc = date.year <= 0;
  AppendPadded(out, bc ? 1 - date.year : date.year, 4);
  out += '-';
  AppendTwoDigits(out, date.month);
  out += '-';
  AppendTwoDigits(out, date.day);
  return bc;
}

void AppendDate(Sink& out, int32_t days) {
  if (days == kDateInfinity) {
    out += "infinity";
  } else if (days == -kDateInfinity) {
    out += "-infinity";
  } else if (AppendCivilDate(out, days)) {
    out += " BC";
  }
}

// "HH:MM:SS[.ffffff]" for 0 <= micros <= 24:00:00.
void AppendTimeOfDay(Sink& out, int64_t micros) {
  AppendTwoDigits(out, static_cast<int>(micros / kMicrosPerHour));
  out += ':';
  AppendTwoDigits(out, static_cast<int>(micros / kMicrosPerMinute % 60));
  out += ':';
  AppendTwoDigits(out, static_cast<int>(micros / kMicrosPerSecond % 60));
  AppendFraction(out, micros % kMicrosPerSecond);
}

// A timestamp (microseconds since 1970, UTC) as "YYYY-MM-DD HH:MM:SS[.f][+00][ BC]".
void AppendTimestamp(Sink& out, int64_t micros, bool with_zone) {
  if (micros == kTimestampInfinity) {
    out += "infinity";
    return;
  }
  if (micros == -kTimestampInfinity || micros == std::numeric_limits<int64_t>::min()) {
    out += "-infinity";
    return;
  }
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  const bool bc = AppendCivilDate(out, days);
  out += ' ';
  AppendTimeOfDay(out, micros - days * kMicrosPerDay);
  if (with_zone) out += "+00";
  if (bc) out += " BC";
}

// EncodeTimezone: "+HH[:MM[:SS]]" for an offset in seconds east of UTC.
void AppendZone(Sink& out, int32_t seconds_east) {
  out += seconds_east >= 0 ? '+' : '-';
  const int32_t total = seconds_east >= 0 ? seconds_east : -seconds_east;
  AppendTwoDigits(out, total / 3600);
  const int minutes = total / 60 % 60;
  const int seconds = total % 60;
  if (minutes != 0 || seconds != 0) {
    out += ':';
    AppendTwoDigits(out, minutes);
  }
  if (seconds != 0) {
    out += ':';
    AppendTwoDigits(out, seconds);
  }
}

int64_t TimeTzMicros(const duckdb_time_tz_struct& t) {
  return ((t.time.hour * int64_t{60} + t.time.min) * 60 + t.time.sec) * kMicrosPerSecond +
         t.time.micros;
}

// IntervalStyle postgres: "1 year 2 mons 3 days 04:05:06.789", "-00:00:01", "00:00:00".
void AppendIntervalPart(Sink& out, int64_t value, const char* unit, bool& is_zero,
                        bool& is_before) {
  if (value == 0) return;
  if (!is_zero) out += ' ';
  if (is_before && value > 0) out += '+';
  AppendInt(out, value);
  out += ' ';
  out += unit;
  if (value != 1) out += 's';
  is_before = value < 0;
  is_zero = false;
}

void AppendInterval(Sink& out, const duckdb_interval& interval) {
  bool is_zero = true;
  bool is_before = false;
  AppendIntervalPart(out, interval.months / 12, "year", is_zero, is_before);
  AppendIntervalPart(out, interval.months % 12, "mon", is_zero, is_before);
  AppendIntervalPart(out, interval.days, "day", is_zero, is_before);
  const int64_t micros = interval.micros;
  if (!is_zero && micros == 0) return;
  const int64_t hours = micros / kMicrosPerHour;
  const int64_t minutes = micros % kMicrosPerHour / kMicrosPerMinute;
  const int64_t seconds = micros % kMicrosPerMinute / kMicrosPerSecond;
  const int64_t fraction = micros % kMicrosPerSecond;
  if (!is_zero) out += ' ';
  if (micros < 0) {
    out += '-';
  } else if (is_before) {
    out += '+';
  }
  AppendPadded(out, hours < 0 ? -hours : hours, 2);
  out += ':';
  AppendTwoDigits(out, static_cast<int>(minutes < 0 ? -minutes : minutes));
  out += ':';
  AppendTwoDigits(out, static_cast<int>(seconds < 0 ? -seconds : seconds));
  AppendFraction(out, fraction < 0 ? -fraction : fraction);
}

// DuckDB stores a UUID as a hugeint with the top bit flipped (so it sorts as bytes do).
void UuidBytes(const duckdb_hugeint& v, uint8_t bytes[16]) {
  const uint64_t upper = static_cast<uint64_t>(v.upper) ^ (uint64_t{1} << 63);
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<uint8_t>(upper >> (56 - 8 * i));
    bytes[8 + i] = static_cast<uint8_t>(v.lower >> (56 - 8 * i));
  }
}

void AppendUuid(Sink& out, const duckdb_hugeint& v) {
  uint8_t bytes[16];
  UuidBytes(v, bytes);
  char text[36];
  int pos = 0;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text[pos++] = '-';
    text[pos++] = kHexDigits[bytes[i] >> 4];
    text[pos++] = kHexDigits[bytes[i] & 15];
  }
  out.append(text, sizeof(text));
}

inline std::string_view StringAt(const void* data, idx_t row) {
  const auto* s = static_cast<const duckdb_string_t*>(data) + row;
  const uint32_t length = s->value.inlined.length;
  return {length <= 12 ? s->value.inlined.inlined : s->value.pointer.ptr, length};
}

// DuckDB's BIT storage: a byte counting the padding bits, then the bits (padding first).
void AppendBitText(Sink& out, std::string_view storage) {
  if (storage.empty()) return;
  const int padding = static_cast<uint8_t>(storage[0]);
  const size_t bits = (storage.size() - 1) * 8;
  for (size_t i = static_cast<size_t>(padding); i < bits; ++i) {
    const auto byte = static_cast<uint8_t>(storage[1 + i / 8]);
    out += (byte >> (7 - i % 8)) & 1 ? '1' : '0';
  }
}

// ---------------------------------------------------------------------------------------------
// Owned DuckDB handles.

struct TypeHandle {
  duckdb_logical_type type = nullptr;
  explicit TypeHandle(duckdb_logical_type t) : type(t) {}
  ~TypeHandle() {
    if (type != nullptr) duckdb_destroy_logical_type(&type);
  }
  TypeHandle(const TypeHandle&) = delete;
  TypeHandle& operator=(const TypeHandle&) = delete;
};

struct DuckDbString {
  char* text = nullptr;
  explicit DuckDbString(char* t) : text(t) {}
  ~DuckDbString() { duckdb_free(text); }
  DuckDbString(const DuckDbString&) = delete;
  DuckDbString& operator=(const DuckDbString&) = delete;
  std::string_view view() const { return text == nullptr ? std::string_view() : text; }
};

bool IsJson(duckdb_logical_type type) {
  DuckDbString alias(duckdb_logical_type_get_alias(type));
  return alias.view() == "JSON";
}

// duckdb_create_list_value refuses a null array even for no values.
duckdb_value CreateList(duckdb_logical_type child_type, std::vector<duckdb_value>& values) {
  duckdb_value none = nullptr;
  return duckdb_create_list_value(child_type, values.empty() ? &none : values.data(),
                                  values.size());
}

// An owned copy of `type` (the C API has no copy; a list type's child is one).
duckdb_logical_type CopyType(duckdb_logical_type type) {
  TypeHandle list(duckdb_create_list_type(type));
  return duckdb_list_type_child_type(list.type);
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

constexpr PgBaseType kPgBool{16, 1000, 1, "boolean", "BOOLEAN"};
constexpr PgBaseType kPgInt2{21, 1005, 2, "smallint", "SMALLINT"};
constexpr PgBaseType kPgInt4{23, 1007, 4, "integer", "INTEGER"};
constexpr PgBaseType kPgInt8{20, 1016, 8, "bigint", "BIGINT"};
constexpr PgBaseType kPgFloat4{700, 1021, 4, "real", "FLOAT"};
constexpr PgBaseType kPgFloat8{701, 1022, 8, "double precision", "DOUBLE"};
// An unconstrained numeric keeps every digit; DuckDB's widest decimal is the closest fit.
constexpr PgBaseType kPgNumeric{1700, 1231, -1, "numeric", "DECIMAL(38,10)"};
constexpr PgBaseType kPgText{25, 1009, -1, "text", "VARCHAR"};
constexpr PgBaseType kPgBytea{17, 1001, -1, "bytea", "BLOB"};
constexpr PgBaseType kPgDate{1082, 1182, 4, "date", "DATE"};
constexpr PgBaseType kPgTime{1083, 1183, 8, "time without time zone", "TIME"};
constexpr PgBaseType kPgTimeTz{1266, 1270, 12, "time with time zone", "TIMETZ"};
constexpr PgBaseType kPgTimestamp{1114, 1115, 8, "timestamp without time zone", "TIMESTAMP"};
constexpr PgBaseType kPgTimestampTz{1184, 1185, 8, "timestamp with time zone", "TIMESTAMPTZ"};
constexpr PgBaseType kPgInterval{1186, 1187, 16, "interval", "INTERVAL"};
constexpr PgBaseType kPgUuid{2950, 2951, 16, "uuid", "UUID"};
constexpr PgBaseType kPgJson{114, 199, -1, "json", "JSON"};
// Accepted from clients only (never sent).
constexpr PgBaseType kPgVarchar{1043, 1015, -1, "character varying", "VARCHAR"};
constexpr PgBaseType kPgBpchar{1042, 1014, -1, "character", "VARCHAR"};
constexpr PgBaseType kPgName{19, 1003, 64, "name", "VARCHAR"};
constexpr PgBaseType kPgJsonb{3802, 3807, -1, "jsonb", "JSON"};
constexpr PgBaseType kPgOid{26, 1028, 4, "oid", "UINTEGER"};

constexpr const PgBaseType* kPgTypes[] = {
    &kPgBool,      &kPgInt2,        &kPgInt4,     &kPgInt8, &kPgFloat4, &kPgFloat8,
    &kPgNumeric,   &kPgText,        &kPgBytea,    &kPgDate, &kPgTime,   &kPgTimeTz,
    &kPgTimestamp, &kPgTimestampTz, &kPgInterval, &kPgUuid, &kPgJson,   &kPgVarchar,
    &kPgBpchar,    &kPgName,        &kPgJsonb,    &kPgOid,
};

const PgBaseType* FindPgType(uint32_t oid) {
  for (const PgBaseType* type : kPgTypes) {
    if (type->oid == oid) return type;
  }
  return nullptr;
}

// The element type of array type `oid` (nullptr when `oid` is no array type of ours).
const PgBaseType* FindPgArrayElement(uint32_t oid) {
  for (const PgBaseType* type : kPgTypes) {
    if (type->array_oid == oid) return type;
  }
  return nullptr;
}

PgType MakePgType(const PgBaseType& base, int32_t modifier = -1, std::string name = {}) {
  return {base.oid, base.size, modifier, name.empty() ? std::string(base.name) : std::move(name)};
}

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
  std::vector<std::string> dictionary;       // ENUM
  std::unique_ptr<Node> child;               // LIST / ARRAY
  duckdb_logical_type owned_type = nullptr;  // kRendered: to rebuild values

  // Bound to the current chunk.
  duckdb_vector vector = nullptr;
  const void* data = nullptr;
  const uint64_t* validity = nullptr;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node() {
    if (owned_type != nullptr) duckdb_destroy_logical_type(&owned_type);
  }

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

void SetScalar(Node& node, Kind kind, const PgBaseType& base) {
  node.kind = kind;
  node.pg = MakePgType(base);
}

std::unique_ptr<Node> BuildNode(duckdb_logical_type type) {
  auto node = std::make_unique<Node>();
  const duckdb_type id = duckdb_get_type_id(type);
  switch (id) {
    case DUCKDB_TYPE_BOOLEAN:
      SetScalar(*node, Kind::kBool, kPgBool);
      break;
    case DUCKDB_TYPE_TINYINT:
      SetScalar(*node, Kind::kInt8, kPgInt2);
      break;
    case DUCKDB_TYPE_SMALLINT:
      SetScalar(*node, Kind::kInt16, kPgInt2);
      break;
    case DUCKDB_TYPE_UTINYINT:
      SetScalar(*node, Kind::kUInt8, kPgInt2);
      break;
    case DUCKDB_TYPE_INTEGER:
      SetScalar(*node, Kind::kInt32, kPgInt4);
      break;
    case DUCKDB_TYPE_USMALLINT:
      SetScalar(*node, Kind::kUInt16, kPgInt4);
      break;
    case DUCKDB_TYPE_BIGINT:
      SetScalar(*node, Kind::kInt64, kPgInt8);
      break;
    case DUCKDB_TYPE_UINTEGER:
      SetScalar(*node, Kind::kUInt32, kPgInt8);
      break;
    case DUCKDB_TYPE_UBIGINT:
      SetScalar(*node, Kind::kUInt64, kPgNumeric);
      break;
    case DUCKDB_TYPE_HUGEINT:
      SetScalar(*node, Kind::kHugeint, kPgNumeric);
      break;
    case DUCKDB_TYPE_UHUGEINT:
      SetScalar(*node, Kind::kUHugeint, kPgNumeric);
      break;
    case DUCKDB_TYPE_FLOAT:
      SetScalar(*node, Kind::kFloat, kPgFloat4);
      break;
    case DUCKDB_TYPE_DOUBLE:
      SetScalar(*node, Kind::kDouble, kPgFloat8);
      break;
    case DUCKDB_TYPE_DECIMAL: {
      const int width = duckdb_decimal_width(type);
      node->scale = duckdb_decimal_scale(type);
      switch (duckdb_decimal_internal_type(type)) {
        case DUCKDB_TYPE_SMALLINT:
          node->kind = Kind::kDecimal16;
          break;
        case DUCKDB_TYPE_INTEGER:
          node->kind = Kind::kDecimal32;
          break;
        case DUCKDB_TYPE_BIGINT:
          node->kind = Kind::kDecimal64;
          break;
        default:
          node->kind = Kind::kDecimal128;
          break;
      }
      node->pg = MakePgType(kPgNumeric, ((width << 16) | node->scale) + 4,
                            fmt::format("numeric({},{})", width, node->scale));
      break;
    }
    case DUCKDB_TYPE_VARCHAR:
      SetScalar(*node, Kind::kString, IsJson(type) ? kPgJson : kPgText);
      break;
    case DUCKDB_TYPE_BLOB:
    case DUCKDB_TYPE_GEOMETRY:  // its WKB, as PostgreSQL clients without PostGIS can read it
      SetScalar(*node, Kind::kBlob, kPgBytea);
      break;
    case DUCKDB_TYPE_DATE:
      SetScalar(*node, Kind::kDate, kPgDate);
      break;
    case DUCKDB_TYPE_TIME:
      SetScalar(*node, Kind::kTime, kPgTime);
      break;
    case DUCKDB_TYPE_TIME_NS:
      SetScalar(*node, Kind::kTimeNs, kPgTime);
      break;
    case DUCKDB_TYPE_TIME_TZ:
      SetScalar(*node, Kind::kTimeTz, kPgTimeTz);
      break;
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
      SetScalar(*node, Kind::kTimestamp, kPgTimestamp);
      node->unit = id == DUCKDB_TYPE_TIMESTAMP_S    ? TimeUnit::kSeconds
                   : id == DUCKDB_TYPE_TIMESTAMP_MS ? TimeUnit::kMillis
                   : id == DUCKDB_TYPE_TIMESTAMP_NS ? TimeUnit::kNanos
                                                    : TimeUnit::kMicros;
      break;
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      SetScalar(*node, Kind::kTimestampTz, kPgTimestampTz);
      break;
    case DUCKDB_TYPE_INTERVAL:
      SetScalar(*node, Kind::kInterval, kPgInterval);
      break;
    case DUCKDB_TYPE_UUID:
      SetScalar(*node, Kind::kUuid, kPgUuid);
      break;
    case DUCKDB_TYPE_ENUM: {
      switch (duckdb_enum_internal_type(type)) {
        case DUCKDB_TYPE_UTINYINT:
          SetScalar(*node, Kind::kEnum8, kPgText);
          break;
        case DUCKDB_TYPE_USMALLINT:
          SetScalar(*node, Kind::kEnum16, kPgText);
          break;
        default:
          SetScalar(*node, Kind::kEnum32, kPgText);
          break;
      }
      const uint32_t size = duckdb_enum_dictionary_size(type);
      node->dictionary.reserve(size);
      for (uint32_t i = 0; i < size; ++i) {
        DuckDbString entry(duckdb_enum_dictionary_value(type, i));
        node->dictionary.emplace_back(entry.view());
      }
      break;
    }
    case DUCKDB_TYPE_BIT:
      SetScalar(*node, Kind::kBit, kPgText);
      break;
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_ARRAY: {
      const bool is_list = id == DUCKDB_TYPE_LIST;
      TypeHandle child_type(is_list ? duckdb_list_type_child_type(type)
                                    : duckdb_array_type_child_type(type));
      node->kind = is_list ? Kind::kList : Kind::kArray;
      if (!is_list) node->array_size = duckdb_array_type_array_size(type);
      node->child = BuildNode(child_type.type);
      const PgType& element = node->child->pg;
      if (node->child->IsArray()) {
        node->pg = element;  // PostgreSQL's arrays of arrays are one multi-dimensional type
      } else {
        const PgBaseType* base = FindPgType(element.oid);
        node->pg = PgType{base->array_oid, -1, element.modifier, element.name + "[]"};
      }
      break;
    }
    default:
      SetScalar(*node, Kind::kRendered, kPgText);
      node->owned_type = CopyType(type);
      break;
  }
  return node;
}

// ---------------------------------------------------------------------------------------------
// DuckDB's own rendering, for types PostgreSQL has no counterpart of: the value is rebuilt from
// the vector (one allocation per value; these types are rare) and cast to VARCHAR by DuckDB.

template <typename T>
inline const T& At(const void* data, idx_t row) {
  return static_cast<const T*>(data)[row];
}

// BIGNUM storage: a 3-byte header (top bit set when positive; the size in bytes below it), then
// the magnitude big-endian; a negative number has every byte inverted.
duckdb_value BignumValue(std::string_view storage) {
  if (storage.size() < 3) return nullptr;
  const bool negative = (static_cast<uint8_t>(storage[0]) & 0x80) == 0;
  std::string magnitude(storage.substr(3));
  if (negative) {
    for (char& c : magnitude) c = static_cast<char>(~static_cast<uint8_t>(c));
  }
  duckdb_bignum bignum{reinterpret_cast<uint8_t*>(magnitude.data()), magnitude.size(), negative};
  return duckdb_create_bignum(bignum);
}

duckdb_value ValueAt(duckdb_vector vector, duckdb_logical_type type, idx_t row);

// A LIST/ARRAY/MAP value from `count` child rows starting at `offset`.
duckdb_value NestedValueAt(duckdb_vector vector, duckdb_logical_type type, idx_t row) {
  const duckdb_type id = duckdb_get_type_id(type);
  const void* data = duckdb_vector_get_data(vector);
  idx_t offset = 0;
  idx_t count = 0;
  if (id == DUCKDB_TYPE_ARRAY) {
    count = duckdb_array_type_array_size(type);
    offset = row * count;
  } else {
    offset = At<duckdb_list_entry>(data, row).offset;
    count = At<duckdb_list_entry>(data, row).length;
  }
  std::vector<OwnedValue> owned;
  std::vector<duckdb_value> raw;
  auto collect = [&](duckdb_vector child, duckdb_logical_type child_type) -> bool {
    for (idx_t i = 0; i < count; ++i) {
      owned.emplace_back(ValueAt(child, child_type, offset + i));
      if (!owned.back()) return false;
      raw.push_back(owned.back().get());
    }
    return true;
  };
  if (id == DUCKDB_TYPE_MAP) {
    duckdb_vector entries = duckdb_list_vector_get_child(vector);
    TypeHandle key_type(duckdb_map_type_key_type(type));
    TypeHandle value_type(duckdb_map_type_value_type(type));
    if (!collect(duckdb_struct_vector_get_child(entries, 0), key_type.type) ||
        !collect(duckdb_struct_vector_get_child(entries, 1), value_type.type)) {
      return nullptr;
    }
    duckdb_value none = nullptr;
    return count == 0 ? duckdb_create_map_value(type, &none, &none, 0)
                      : duckdb_create_map_value(type, raw.data(), raw.data() + count, count);
  }
  const bool is_list = id == DUCKDB_TYPE_LIST;
  TypeHandle child_type(is_list ? duckdb_list_type_child_type(type)
                                : duckdb_array_type_child_type(type));
  duckdb_vector child =
      is_list ? duckdb_list_vector_get_child(vector) : duckdb_array_vector_get_child(vector);
  if (!collect(child, child_type.type)) return nullptr;
  return is_list ? CreateList(child_type.type, raw)
                 : duckdb_create_array_value(child_type.type, raw.data(), count);
}

duckdb_value ValueAt(duckdb_vector vector, duckdb_logical_type type, idx_t row) {
  const uint64_t* validity = duckdb_vector_get_validity(vector);
  if (validity != nullptr && ((validity[row >> 6] >> (row & 63)) & 1) == 0) {
    return duckdb_create_null_value();
  }
  const void* data = duckdb_vector_get_data(vector);
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_BOOLEAN:
      return duckdb_create_bool(At<bool>(data, row));
    case DUCKDB_TYPE_TINYINT:
      return duckdb_create_int8(At<int8_t>(data, row));
    case DUCKDB_TYPE_SMALLINT:
      return duckdb_create_int16(At<int16_t>(data, row));
    case DUCKDB_TYPE_INTEGER:
      return duckdb_create_int32(At<int32_t>(data, row));
    case DUCKDB_TYPE_BIGINT:
      return duckdb_create_int64(At<int64_t>(data, row));
    case DUCKDB_TYPE_UTINYINT:
      return duckdb_create_uint8(At<uint8_t>(data, row));
    case DUCKDB_TYPE_USMALLINT:
      return duckdb_create_uint16(At<uint16_t>(data, row));
    case DUCKDB_TYPE_UINTEGER:
      return duckdb_create_uint32(At<uint32_t>(data, row));
    case DUCKDB_TYPE_UBIGINT:
      return duckdb_create_uint64(At<uint64_t>(data, row));
    case DUCKDB_TYPE_HUGEINT:
      return duckdb_create_hugeint(At<duckdb_hugeint>(data, row));
    case DUCKDB_TYPE_UHUGEINT:
      return duckdb_create_uhugeint(At<duckdb_uhugeint>(data, row));
    case DUCKDB_TYPE_FLOAT:
      return duckdb_create_float(At<float>(data, row));
    case DUCKDB_TYPE_DOUBLE:
      return duckdb_create_double(At<double>(data, row));
    case DUCKDB_TYPE_DATE:
      return duckdb_create_date(At<duckdb_date>(data, row));
    case DUCKDB_TYPE_TIME:
      return duckdb_create_time(At<duckdb_time>(data, row));
    case DUCKDB_TYPE_TIME_NS:
      return duckdb_create_time_ns(At<duckdb_time_ns>(data, row));
    case DUCKDB_TYPE_TIME_TZ:
      return duckdb_create_time_tz_value(At<duckdb_time_tz>(data, row));
    case DUCKDB_TYPE_TIMESTAMP:
      return duckdb_create_timestamp(At<duckdb_timestamp>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return duckdb_create_timestamp_tz(At<duckdb_timestamp>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_S:
      return duckdb_create_timestamp_s(At<duckdb_timestamp_s>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_MS:
      return duckdb_create_timestamp_ms(At<duckdb_timestamp_ms>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_NS:
      return duckdb_create_timestamp_ns(At<duckdb_timestamp_ns>(data, row));
    case DUCKDB_TYPE_INTERVAL:
      return duckdb_create_interval(At<duckdb_interval>(data, row));
    case DUCKDB_TYPE_VARCHAR: {
      const std::string_view text = StringAt(data, row);
      return duckdb_create_varchar_length(text.data(), text.size());
    }
    case DUCKDB_TYPE_BLOB: {
      const std::string_view bytes = StringAt(data, row);
      return duckdb_create_blob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    case DUCKDB_TYPE_BIT: {
      std::string bits(StringAt(data, row));
      return duckdb_create_bit({reinterpret_cast<uint8_t*>(bits.data()), bits.size()});
    }
    case DUCKDB_TYPE_BIGNUM:
      return BignumValue(StringAt(data, row));
    case DUCKDB_TYPE_UUID: {
      const auto& stored = At<duckdb_hugeint>(data, row);
      return duckdb_create_uuid(
          {stored.lower, static_cast<uint64_t>(stored.upper) ^ (uint64_t{1} << 63)});
    }
    case DUCKDB_TYPE_DECIMAL: {
      duckdb_decimal decimal{duckdb_decimal_width(type), duckdb_decimal_scale(type), {0, 0}};
      int64_t small = 0;
      switch (duckdb_decimal_internal_type(type)) {
        case DUCKDB_TYPE_SMALLINT:
          small = At<int16_t>(data, row);
          break;
        case DUCKDB_TYPE_INTEGER:
          small = At<int32_t>(data, row);
          break;
        case DUCKDB_TYPE_BIGINT:
          small = At<int64_t>(data, row);
          break;
        default:
          decimal.value = At<duckdb_hugeint>(data, row);
          return duckdb_create_decimal(decimal);
      }
      decimal.value = {static_cast<uint64_t>(small), small < 0 ? -1 : 0};
      return duckdb_create_decimal(decimal);
    }
    case DUCKDB_TYPE_ENUM: {
      uint64_t index = 0;
      switch (duckdb_enum_internal_type(type)) {
        case DUCKDB_TYPE_UTINYINT:
          index = At<uint8_t>(data, row);
          break;
        case DUCKDB_TYPE_USMALLINT:
          index = At<uint16_t>(data, row);
          break;
        default:
          index = At<uint32_t>(data, row);
          break;
      }
      return duckdb_create_enum_value(type, index);
    }
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_ARRAY:
    case DUCKDB_TYPE_MAP:
      return NestedValueAt(vector, type, row);
    case DUCKDB_TYPE_STRUCT: {
      const idx_t count = duckdb_struct_type_child_count(type);
      std::vector<OwnedValue> owned;
      std::vector<duckdb_value> raw;
      for (idx_t i = 0; i < count; ++i) {
        TypeHandle child_type(duckdb_struct_type_child_type(type, i));
        owned.emplace_back(
            ValueAt(duckdb_struct_vector_get_child(vector, i), child_type.type, row));
        if (!owned.back()) return nullptr;
        raw.push_back(owned.back().get());
      }
      return duckdb_create_struct_value(type, raw.data());
    }
    case DUCKDB_TYPE_UNION: {
      // A union's vector is a struct: the tag, then one child per member.
      const uint8_t tag =
          At<uint8_t>(duckdb_vector_get_data(duckdb_struct_vector_get_child(vector, 0)), row);
      TypeHandle member_type(duckdb_union_type_member_type(type, tag));
      OwnedValue member(
          ValueAt(duckdb_struct_vector_get_child(vector, idx_t{tag} + 1), member_type.type, row));
      if (!member) return nullptr;
      return duckdb_create_union_value(type, tag, member.get());
    }
    default:
      return nullptr;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding.

void AppendText(const Node& node, idx_t row, Sink& out, std::string& scratch);
void AppendBinary(const Node& node, idx_t row, Sink& out, std::string& scratch);

int64_t TimestampMicros(const Node& node, idx_t row) {
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

duckdb_time_tz_struct TimeTzAt(const Node& node, idx_t row) {
  return duckdb_from_time_tz(At<duckdb_time_tz>(node.data, row));
}

std::string_view EnumAt(const Node& node, idx_t row) {
  uint32_t index = 0;
  switch (node.kind) {
    case Kind::kEnum8:
      index = At<uint8_t>(node.data, row);
      break;
    case Kind::kEnum16:
      index = At<uint16_t>(node.data, row);
      break;
    default:
      index = At<uint32_t>(node.data, row);
      break;
  }
  return index < node.dictionary.size() ? std::string_view(node.dictionary[index])
                                        : std::string_view();
}

// The decimal at `row` as sign, magnitude and scale (DECIMAL and the wide integers).
struct DecimalParts {
  bool negative;
  UInt128 magnitude;
  int scale;
};

DecimalParts DecimalAt(const Node& node, idx_t row) {
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

std::pair<idx_t, idx_t> ElementRange(const Node& node, idx_t row) {
  if (node.kind == Kind::kArray) return {row * node.array_size, node.array_size};
  const auto& entry = At<duckdb_list_entry>(node.data, row);
  return {entry.offset, entry.length};
}

inline bool IsArraySpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// array_out's quoting of the element written at out[start..]: quoted when empty, "NULL" in any
// case, or holding a quote, backslash, brace, delimiter or space; quotes and backslashes escaped.
void QuoteArrayElement(Sink& out, size_t start, std::string& scratch) {
  const std::string_view element(out.data() + start, out.size() - start);
  bool quote = element.empty() ||
               (element.size() == 4 && (element[0] | 0x20) == 'n' && (element[1] | 0x20) == 'u' &&
                (element[2] | 0x20) == 'l' && (element[3] | 0x20) == 'l');
  bool escape = false;
  for (const char c : element) {
    if (c == '"' || c == '\\') {
      escape = true;
    } else if (c == '{' || c == '}' || c == ',' || IsArraySpace(c)) {
      quote = true;
    }
  }
  if (!quote && !escape) return;
  if (!escape) {
    char* data = out.Reserve(1) - out.size();
    std::memmove(data + start + 1, data + start, element.size());
    data[start] = '"';
    out.Advance(1);
    out += '"';
    return;
  }
  scratch.assign(element);
  out.Truncate(start);
  out += '"';
  for (const char c : scratch) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

void AppendArrayText(const Node& node, idx_t row, Sink& out, std::string& scratch) {
  const auto [offset, length] = ElementRange(node, row);
  const Node& child = *node.child;
  const bool check_quotes = !child.IsArray() && !child.IsPlainInArray();
  out += '{';
  for (idx_t i = 0; i < length; ++i) {
    if (i > 0) out += ',';
    if (child.IsNull(offset + i)) {
      out += "NULL";
      continue;
    }
    const size_t start = out.size();
    AppendText(child, offset + i, out, scratch);
    if (check_quotes) QuoteArrayElement(out, start, scratch);
  }
  out += '}';
}

// array_send for one dimension: ndim, has-null flag, element OID, (size, lower bound 1), then
// each element as its length (-1 for NULL) and bytes.
void AppendArrayBinary(const Node& node, idx_t row, Sink& out, std::string& scratch) {
  const auto [offset, length] = ElementRange(node, row);
  const Node& child = *node.child;
  bool has_null = false;
  for (idx_t i = 0; i < length && !has_null; ++i) has_null = child.IsNull(offset + i);
  AppendBE32(out, length > 0 ? 1 : 0);
  AppendBE32(out, has_null ? 1 : 0);
  AppendBE32(out, child.pg.oid);
  if (length > 0) {
    AppendBE32(out, static_cast<uint32_t>(length));
    AppendBE32(out, 1);
  }
  for (idx_t i = 0; i < length; ++i) {
    if (child.IsNull(offset + i)) {
      AppendBE32(out, 0xFFFFFFFFu);
      continue;
    }
    const size_t at = out.size();
    out.Skip(4);
    AppendBinary(child, offset + i, out, scratch);
    StoreBE32(out.data() + at, static_cast<uint32_t>(out.size() - at - 4));
  }
}

void AppendRendered(const Node& node, idx_t row, Sink& out) {
  if (node.owned_type == nullptr) return;
  OwnedValue value(ValueAt(node.vector, node.owned_type, row));
  if (!value) return;
  DuckDbString text(duckdb_get_varchar(value.get()));
  out += text.view();
}

void AppendText(const Node& node, idx_t row, Sink& out, std::string& scratch) {
  switch (node.kind) {
    case Kind::kBool:
      out += At<bool>(node.data, row) ? 't' : 'f';
      return;
    case Kind::kInt8:
      return AppendInt(out, At<int8_t>(node.data, row));
    case Kind::kInt16:
      return AppendInt(out, At<int16_t>(node.data, row));
    case Kind::kInt32:
      return AppendInt(out, At<int32_t>(node.data, row));
    case Kind::kInt64:
      return AppendInt(out, At<int64_t>(node.data, row));
    case Kind::kUInt8:
      return AppendInt(out, At<uint8_t>(node.data, row));
    case Kind::kUInt16:
      return AppendInt(out, At<uint16_t>(node.data, row));
    case Kind::kUInt32:
      return AppendInt(out, At<uint32_t>(node.data, row));
    case Kind::kUInt64:
      return AppendInt(out, At<uint64_t>(node.data, row));
    case Kind::kFloat:
      return AppendFloat(out, At<float>(node.data, row), 6);
    case Kind::kDouble:
      return AppendFloat(out, At<double>(node.data, row), 15);
    case Kind::kHugeint:
    case Kind::kUHugeint:
    case Kind::kDecimal16:
    case Kind::kDecimal32:
    case Kind::kDecimal64:
    case Kind::kDecimal128: {
      const DecimalParts parts = DecimalAt(node, row);
      return AppendDecimalText(out, parts.negative, parts.magnitude, parts.scale);
    }
    case Kind::kString:
      out += StringAt(node.data, row);
      return;
    case Kind::kBlob: {
      const std::string_view bytes = StringAt(node.data, row);
      out += "\\x";
      return AppendHex(out, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    case Kind::kDate:
      return AppendDate(out, At<int32_t>(node.data, row));
    case Kind::kTime:
      return AppendTimeOfDay(out, At<int64_t>(node.data, row));
    case Kind::kTimeNs:
      return AppendTimeOfDay(out, At<int64_t>(node.data, row) / 1000);
    case Kind::kTimeTz: {
      const duckdb_time_tz_struct t = TimeTzAt(node, row);
      AppendTimeOfDay(out, TimeTzMicros(t));
      return AppendZone(out, t.offset);
    }
    case Kind::kTimestamp:
      return AppendTimestamp(out, TimestampMicros(node, row), false);
    case Kind::kTimestampTz:
      return AppendTimestamp(out, At<int64_t>(node.data, row), true);
    case Kind::kInterval:
      return AppendInterval(out, At<duckdb_interval>(node.data, row));
    case Kind::kUuid:
      return AppendUuid(out, At<duckdb_hugeint>(node.data, row));
    case Kind::kEnum8:
    case Kind::kEnum16:
    case Kind::kEnum32:
      out += EnumAt(node, row);
      return;
    case Kind::kBit:
      return AppendBitText(out, StringAt(node.data, row));
    case Kind::kList:
    case Kind::kArray:
      return AppendArrayText(node, row, out, scratch);
    case Kind::kRendered:
      return AppendRendered(node, row, out);
  }
}

// PostgreSQL's date and timestamp counts from 2000, infinities kept and the rest clamped into
// range (PostgreSQL cannot hold DuckDB's most distant values anyway).
uint32_t PgDays(int32_t days) {
  if (days == kDateInfinity) return static_cast<uint32_t>(kDateInfinity);
  const int64_t shifted = int64_t{days} - kPgEpochDays;
  const int64_t clamped = std::clamp<int64_t>(shifted, std::numeric_limits<int32_t>::min(),
                                              std::numeric_limits<int32_t>::max());
  return static_cast<uint32_t>(days == -kDateInfinity ? std::numeric_limits<int32_t>::min()
                                                      : static_cast<int32_t>(clamped));
}

uint64_t PgMicros(int64_t micros) {
  if (micros == kTimestampInfinity) return static_cast<uint64_t>(kTimestampInfinity);
  int64_t shifted = 0;
  if (micros == -kTimestampInfinity || __builtin_sub_overflow(micros, kPgEpochMicros, &shifted)) {
    return static_cast<uint64_t>(std::numeric_limits<int64_t>::min());
  }
  return static_cast<uint64_t>(shifted);
}

void AppendBinary(const Node& node, idx_t row, Sink& out, std::string& scratch) {
  switch (node.kind) {
    case Kind::kBool:
      out += At<bool>(node.data, row) ? '\1' : '\0';
      return;
    case Kind::kInt8:
      return AppendBE16(out, static_cast<uint16_t>(At<int8_t>(node.data, row)));
    case Kind::kInt16:
      return AppendBE16(out, static_cast<uint16_t>(At<int16_t>(node.data, row)));
    case Kind::kUInt8:
      return AppendBE16(out, At<uint8_t>(node.data, row));
    case Kind::kInt32:
      return AppendBE32(out, static_cast<uint32_t>(At<int32_t>(node.data, row)));
    case Kind::kUInt16:
      return AppendBE32(out, At<uint16_t>(node.data, row));
    case Kind::kInt64:
      return AppendBE64(out, static_cast<uint64_t>(At<int64_t>(node.data, row)));
    case Kind::kUInt32:
      return AppendBE64(out, At<uint32_t>(node.data, row));
    case Kind::kFloat: {
      uint32_t bits = 0;
      std::memcpy(&bits, &At<float>(node.data, row), sizeof(bits));
      return AppendBE32(out, bits);
    }
    case Kind::kDouble: {
      uint64_t bits = 0;
      std::memcpy(&bits, &At<double>(node.data, row), sizeof(bits));
      return AppendBE64(out, bits);
    }
    case Kind::kUInt64:
    case Kind::kHugeint:
    case Kind::kUHugeint:
    case Kind::kDecimal16:
    case Kind::kDecimal32:
    case Kind::kDecimal64:
    case Kind::kDecimal128: {
      const DecimalParts parts = DecimalAt(node, row);
      return AppendNumericBinary(out, parts.negative, parts.magnitude, parts.scale);
    }
    case Kind::kString:
    case Kind::kBlob:
      out += StringAt(node.data, row);
      return;
    case Kind::kDate:
      return AppendBE32(out, PgDays(At<int32_t>(node.data, row)));
    case Kind::kTime:
      return AppendBE64(out, static_cast<uint64_t>(At<int64_t>(node.data, row)));
    case Kind::kTimeNs:
      return AppendBE64(out, static_cast<uint64_t>(At<int64_t>(node.data, row) / 1000));
    case Kind::kTimeTz: {
      const duckdb_time_tz_struct t = TimeTzAt(node, row);
      AppendBE64(out, static_cast<uint64_t>(TimeTzMicros(t)));
      return AppendBE32(out, static_cast<uint32_t>(-t.offset));  // PostgreSQL: seconds west
    }
    case Kind::kTimestamp:
      return AppendBE64(out, PgMicros(TimestampMicros(node, row)));
    case Kind::kTimestampTz:
      return AppendBE64(out, PgMicros(At<int64_t>(node.data, row)));
    case Kind::kInterval: {
      const auto& interval = At<duckdb_interval>(node.data, row);
      AppendBE64(out, static_cast<uint64_t>(interval.micros));
      AppendBE32(out, static_cast<uint32_t>(interval.days));
      return AppendBE32(out, static_cast<uint32_t>(interval.months));
    }
    case Kind::kUuid: {
      uint8_t bytes[16];
      UuidBytes(At<duckdb_hugeint>(node.data, row), bytes);
      out.append(reinterpret_cast<const char*>(bytes), sizeof(bytes));
      return;
    }
    case Kind::kList:
    case Kind::kArray:
      return AppendArrayBinary(node, row, out, scratch);
    case Kind::kEnum8:
    case Kind::kEnum16:
    case Kind::kEnum32:
    case Kind::kBit:
    case Kind::kRendered:
      return AppendText(node, row, out, scratch);  // text's binary form is its bytes
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

PgType PgTypeOf(duckdb_logical_type type) { return BuildNode(type)->pg; }

bool NeedsVarcharCast(duckdb_logical_type type) {
  auto child_needs = [](duckdb_logical_type child) {
    TypeHandle owned(child);
    return NeedsVarcharCast(owned.type);
  };
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_VARIANT:
      return true;
    case DUCKDB_TYPE_LIST:
      return child_needs(duckdb_list_type_child_type(type));
    case DUCKDB_TYPE_ARRAY:
      return child_needs(duckdb_array_type_child_type(type));
    case DUCKDB_TYPE_MAP:
      return child_needs(duckdb_map_type_key_type(type)) ||
             child_needs(duckdb_map_type_value_type(type));
    case DUCKDB_TYPE_STRUCT:
      for (idx_t i = 0; i < duckdb_struct_type_child_count(type); ++i) {
        if (child_needs(duckdb_struct_type_child_type(type, i))) return true;
      }
      return false;
    case DUCKDB_TYPE_UNION:
      for (idx_t i = 0; i < duckdb_union_type_member_count(type); ++i) {
        if (child_needs(duckdb_union_type_member_type(type, i))) return true;
      }
      return false;
    default:
      return false;
  }
}

struct ColumnEncoder::State {
  std::unique_ptr<Node> root;
  std::string scratch;
};

ColumnEncoder::ColumnEncoder(duckdb_logical_type type) : state_(std::make_unique<State>()) {
  state_->root = BuildNode(type);
}
ColumnEncoder::~ColumnEncoder() = default;
ColumnEncoder::ColumnEncoder(ColumnEncoder&&) noexcept = default;
ColumnEncoder& ColumnEncoder::operator=(ColumnEncoder&&) noexcept = default;

const PgType& ColumnEncoder::pg_type() const { return state_->root->pg; }
bool ColumnEncoder::has_binary() const { return state_->root->HasBinary(); }
void ColumnEncoder::Bind(duckdb_vector vector) { state_->root->Bind(vector); }
bool ColumnEncoder::IsNull(idx_t row) const { return state_->root->IsNull(row); }

void ColumnEncoder::AppendText(idx_t row, std::string& out) const {
  Sink sink(out);
  serve::AppendText(*state_->root, row, sink, state_->scratch);
}

void ColumnEncoder::AppendBinary(idx_t row, std::string& out) const {
  Sink sink(out);
  serve::AppendBinary(*state_->root, row, sink, state_->scratch);
}

void AppendDataRows(std::vector<ColumnEncoder>& columns, const std::vector<bool>& binary,
                    duckdb_data_chunk chunk, idx_t begin, idx_t end, std::string& out) {
  struct Column {
    const Node* node;
    std::string* scratch;
    bool binary;
  };
  std::vector<Column> bound;
  bound.reserve(columns.size());
  size_t row_estimate = 7;
  for (size_t c = 0; c < columns.size(); ++c) {
    ColumnEncoder::State& state = *columns[c].state_;
    state.root->Bind(duckdb_data_chunk_get_vector(chunk, c));
    const bool as_binary = c < binary.size() && binary[c] && state.root->HasBinary();
    bound.push_back({state.root.get(), &state.scratch, as_binary});
    const int16_t size = state.root->pg.size;
    row_estimate += 4 + (as_binary && size > 0 ? static_cast<size_t>(size) : 12);
  }
  const auto count = static_cast<uint16_t>(columns.size());
  Sink sink(out);
  if (end > begin) sink.Reserve((end - begin) * row_estimate);
  for (idx_t row = begin; row < end; ++row) {
    const size_t message = sink.size();
    char* header = sink.Reserve(7);
    header[0] = 'D';
    StoreBE16(header + 5, count);
    sink.Advance(7);
    for (const Column& column : bound) {
      if (column.node->IsNull(row)) {
        AppendBE32(sink, 0xFFFFFFFFu);
        continue;
      }
      const size_t at = sink.size();
      sink.Skip(4);
      if (column.binary) {
        AppendBinary(*column.node, row, sink, *column.scratch);
      } else {
        AppendText(*column.node, row, sink, *column.scratch);
      }
      StoreBE32(sink.data() + at, static_cast<uint32_t>(sink.size() - at - 4));
    }
    StoreBE32(sink.data() + message + 1, static_cast<uint32_t>(sink.size() - message - 1));
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding.

namespace {

Status BadBinary(std::string_view what, std::string_view type_name, std::string_view detail) {
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "08P01",
      fmt::format("{}: invalid binary value for type {}: {}", what, type_name, detail));
}

Status BadBinary(std::string_view what, const PgBaseType& type, std::string_view detail) {
  return BadBinary(what, std::string_view(type.name), detail);
}

Status BadText(std::string_view what, std::string_view type_name, std::string_view text) {
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "22P02",
      fmt::format("{}: invalid input syntax for type {}: \"{}\"", what, type_name, text));
}

Status OutOfRange(std::string_view what, const PgBaseType& type) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22008",
                         fmt::format("{}: {} out of range", what, type.name));
}

Result<OwnedValue> Varchar(std::string_view text, std::string_view what) {
  OwnedValue value(duckdb_create_varchar_length(text.data(), text.size()));
  if (!value) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22021",
                           fmt::format("{}: invalid byte sequence for encoding \"UTF8\"", what));
  }
  return value;
}

OwnedValue NullValue() { return OwnedValue(duckdb_create_null_value()); }

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
Result<std::string> NumericText(std::string_view bytes, std::string_view what) {
  ByteReader in(bytes);
  uint16_t ndigits = 0;
  int16_t weight = 0;
  uint16_t sign = 0;
  uint16_t dscale = 0;
  if (!in.Int(ndigits) || !in.Int(weight) || !in.Int(sign) || !in.Int(dscale)) {
    return BadBinary(what, kPgNumeric, "shorter than its header");
  }
  if (in.remaining() != size_t{ndigits} * 2) {
    return BadBinary(what, kPgNumeric, "length does not match its digit count");
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
      return BadBinary(what, kPgNumeric, "invalid sign");
  }
  if (dscale > kNumericMaxScale) return BadBinary(what, kPgNumeric, "invalid scale");
  std::vector<uint16_t> digits(ndigits);
  for (uint16_t& digit : digits) {
    in.Int(digit);
    if (digit >= 10000) return BadBinary(what, kPgNumeric, "invalid digit");
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

template <typename T>
Result<T> ReadExact(std::string_view bytes, const PgBaseType& type, std::string_view what) {
  ByteReader in(bytes);
  T value{};
  if (bytes.size() != sizeof(T) || !in.Int(value)) {
    return BadBinary(what, type, fmt::format("expected {} bytes, got {}", sizeof(T), bytes.size()));
  }
  return value;
}

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
      WEIR_ASSIGN_OR_RAISE(const std::string text, NumericText(bytes, what));
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

// Groups `values` (the elements of a `dims` array in row-major order) into nested LIST values;
// no values make one empty list.
Result<OwnedValue> NestLists(std::vector<OwnedValue> values, const std::vector<int32_t>& dims,
                             duckdb_type element_id, std::string_view what) {
  TypeHandle level_type(duckdb_create_logical_type(element_id));
  if (values.empty()) {
    std::vector<duckdb_value> none;
    return OwnedValue(CreateList(level_type.type, none));
  }
  for (size_t d = dims.size(); d-- > 0;) {
    const size_t width = static_cast<size_t>(dims[d]);
    std::vector<OwnedValue> grouped;
    grouped.reserve(values.size() / width);
    std::vector<duckdb_value> raw(width);
    for (size_t start = 0; start < values.size(); start += width) {
      for (size_t i = 0; i < width; ++i) raw[i] = values[start + i].get();
      OwnedValue list(duckdb_create_list_value(level_type.type, raw.data(), width));
      if (!list) return BadBinary(what, "array", "elements DuckDB cannot hold in one list");
      grouped.push_back(std::move(list));
    }
    values = std::move(grouped);
    TypeHandle outer(duckdb_create_list_type(level_type.type));
    std::swap(outer.type, level_type.type);
  }
  return std::move(values.front());
}

constexpr int32_t kMaxArrayDims = 6;

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

// ---- Text format.

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
         });
}

inline bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline int HexValue(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

// byteain: "\x" hex (whitespace allowed between pairs) or the escape format (\\ and \ooo).
Result<OwnedValue> DecodeByteaText(std::string_view text, std::string_view what) {
  std::string bytes;
  if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') {
    bytes.reserve((text.size() - 2) / 2);
    for (size_t i = 2; i < text.size();) {
      if (IsArraySpace(text[i])) {
        ++i;
        continue;
      }
      if (i + 1 >= text.size() || !IsHexDigit(text[i]) || !IsHexDigit(text[i + 1])) {
        return BadText(what, "bytea", text);
      }
      bytes += static_cast<char>(HexValue(text[i]) * 16 + HexValue(text[i + 1]));
      i += 2;
    }
  } else {
    bytes.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\') {
        bytes += text[i];
      } else if (i + 1 < text.size() && text[i + 1] == '\\') {
        bytes += '\\';
        ++i;
      } else if (i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' &&
                 text[i + 2] >= '0' && text[i + 2] <= '7' && text[i + 3] >= '0' &&
                 text[i + 3] <= '7') {
        bytes += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                   (text[i + 3] - '0'));
        i += 3;
      } else {
        return BadText(what, "bytea", text);
      }
    }
  }
  return OwnedValue(
      duckdb_create_blob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

// boolin: t/true/y/yes/on/1 and f/false/n/no/off/0, any case, unique prefixes, spaces around.
Result<OwnedValue> DecodeBoolText(std::string_view text, std::string_view what) {
  std::string_view word = text;
  while (!word.empty() && IsArraySpace(word.front())) word.remove_prefix(1);
  while (!word.empty() && IsArraySpace(word.back())) word.remove_suffix(1);
  auto prefix_of = [&](std::string_view full, size_t min_len) {
    return word.size() >= min_len && word.size() <= full.size() &&
           EqualsIgnoreCase(word, full.substr(0, word.size()));
  };
  if (prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || word == "1") {
    return OwnedValue(duckdb_create_bool(true));
  }
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || word == "0") {
    return OwnedValue(duckdb_create_bool(false));
  }
  return BadText(what, "boolean", text);
}

// PostgreSQL writes BC dates as "0044-03-15 BC" and "0044-03-15 13:04:05+00 BC"; DuckDB reads
// "0044-03-15 (BC)" and "0044-03-15 (BC) 13:04:05+00".
std::string DuckDbDateTimeText(std::string_view text) {
  std::string_view body = text;
  while (!body.empty() && IsArraySpace(body.back())) body.remove_suffix(1);
  if (body.size() < 3 || body[0] < '0' || body[0] > '9' ||
      !EqualsIgnoreCase(body.substr(body.size() - 2), "BC") ||
      !IsArraySpace(body[body.size() - 3])) {
    return std::string(text);
  }
  body.remove_suffix(3);
  while (!body.empty() && IsArraySpace(body.back())) body.remove_suffix(1);
  const size_t date_end = std::min(body.find_first_of(" T"), body.size());
  std::string result(body.substr(0, date_end));
  result += " (BC)";
  if (date_end < body.size() && body[date_end] == 'T') {
    result += ' ';
    result += body.substr(date_end + 1);
  } else {
    result += body.substr(date_end);
  }
  return result;
}

// PostgreSQL writes "+" before a field that follows a negative one ("-1 days +04:05:06");
// DuckDB's interval reader wants no sign there.
std::string DuckDbIntervalText(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && (i == 0 || IsArraySpace(text[i - 1]))) continue;
    result += text[i];
  }
  return result;
}

Result<OwnedValue> DecodeTextScalar(std::string_view text, const PgBaseType& type,
                                    std::string_view what) {
  switch (type.oid) {
    case 17:
      return DecodeByteaText(text, what);
    case 16:
      return DecodeBoolText(text, what);
    case 1082:
    case 1114:
    case 1184:
      return Varchar(DuckDbDateTimeText(text), what);
    case 1186:
      return Varchar(DuckDbIntervalText(text), what);
    default:
      return Varchar(text, what);
  }
}

// array_in: "{a,"b c",NULL,{...}}", optionally after "[1:3]=" bounds; elements are decoded as
// `element` text, an unquoted NULL is NULL.
class ArrayTextParser {
 public:
  ArrayTextParser(std::string_view text, const PgBaseType& element, std::string_view what)
      : text_(text), element_(element), what_(what) {}

  Result<OwnedValue> Parse() {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '[') {
      const size_t equals = text_.find('=', pos_);
      if (equals == std::string_view::npos) return Malformed();
      pos_ = equals + 1;
      SkipSpace();
    }
    int depth = 0;
    WEIR_ASSIGN_OR_RAISE(OwnedValue value, ParseLevel(depth));
    SkipSpace();
    if (pos_ != text_.size()) return Malformed();
    return value;
  }

 private:
  Status Malformed() const {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P02",
                           fmt::format("{}: malformed array literal for type {}[]: \"{}\"", what_,
                                       element_.name, text_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsArraySpace(text_[pos_])) ++pos_;
  }

  // One "{...}" level; `depth` is set to the number of levels below and including it.
  Result<OwnedValue> ParseLevel(int& depth) {
    if (pos_ >= text_.size() || text_[pos_] != '{') return Malformed();
    ++pos_;
    if (++nesting_ > kMaxArrayDims) return Malformed();
    std::vector<OwnedValue> items;
    int child_depth = -1;  // -1 unknown, 0 scalars, n sub-arrays of depth n
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
    } else {
      while (true) {
        SkipSpace();
        if (pos_ >= text_.size()) return Malformed();
        int item_depth = 0;
        if (text_[pos_] == '{') {
          WEIR_ASSIGN_OR_RAISE(OwnedValue sub, ParseLevel(item_depth));
          items.push_back(std::move(sub));
        } else {
          WEIR_ASSIGN_OR_RAISE(OwnedValue scalar, ParseScalar());
          items.push_back(std::move(scalar));
        }
        if (child_depth != -1 && child_depth != item_depth) return Malformed();
        child_depth = item_depth;
        SkipSpace();
        if (pos_ >= text_.size()) return Malformed();
        if (text_[pos_] == '}') {
          ++pos_;
          break;
        }
        if (text_[pos_] != ',') return Malformed();
        ++pos_;
      }
    }
    --nesting_;
    depth = std::max(child_depth, 0) + 1;
    TypeHandle child_type(duckdb_create_logical_type(DecodedTypeId(element_, 0)));
    for (int d = 0; d < child_depth; ++d) {
      TypeHandle list(duckdb_create_list_type(child_type.type));
      std::swap(list.type, child_type.type);
    }
    std::vector<duckdb_value> raw;
    raw.reserve(items.size());
    for (const OwnedValue& item : items) raw.push_back(item.get());
    OwnedValue list(CreateList(child_type.type, raw));
    if (!list) return Malformed();
    return list;
  }

  Result<OwnedValue> ParseScalar() {
    std::string item;
    bool quoted = false;
    bool escaped = false;
    size_t trailing_space = 0;  // unquoted trailing spaces are dropped
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (quoted) {
        ++pos_;
        if (c == '"') {
          quoted = false;
        } else if (c == '\\') {
          if (pos_ >= text_.size()) return Malformed();
          item += text_[pos_++];
        } else {
          item += c;
        }
        trailing_space = 0;
        escaped = true;
        continue;
      }
      if (c == ',' || c == '}') break;
      if (c == '{') return Malformed();
      ++pos_;
      if (c == '"') {
        quoted = true;
        escaped = true;
      } else if (c == '\\') {
        if (pos_ >= text_.size()) return Malformed();
        item += text_[pos_++];
        escaped = true;
        trailing_space = 0;
      } else {
        item += c;
        trailing_space = IsArraySpace(c) ? trailing_space + 1 : 0;
      }
    }
    if (quoted) return Malformed();
    item.resize(item.size() - trailing_space);
    if (!escaped && EqualsIgnoreCase(item, "NULL")) return NullValue();
    if (!escaped && item.empty()) return Malformed();
    return DecodeTextScalar(item, element_, what_);
  }

  std::string_view text_;
  const PgBaseType& element_;
  std::string_view what_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

std::string DuckDbTypeNameOf(uint32_t oid) {
  if (const PgBaseType* type = FindPgType(oid)) return type->duckdb_name;
  if (const PgBaseType* element = FindPgArrayElement(oid)) {
    return std::string(element->duckdb_name) + "[]";
  }
  return "";
}

namespace {

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
    if (element != nullptr) return ArrayTextParser(*bytes, *element, what).Parse();
    return scalar == nullptr ? Varchar(*bytes, what) : DecodeTextScalar(*bytes, *scalar, what);
  }
  if (scalar != nullptr) return DecodeBinaryScalar(*bytes, *scalar, what);
  if (element != nullptr) return DecodeBinaryArray(*bytes, *element, what);
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
