// float4out/float8out with extra_float_digits > 0: the shortest digits that read back exactly
// (PostgreSQL's Ryu), positional when the decimal exponent is in [-4, max_positional), else
// d.ddde+XX.
//
// std::to_chars gives the shortest digits too, with one difference: PostgreSQL builds Ryu with
// the bounds of the rounding interval excluded, so where the shortest digits fall exactly on a
// bound (5.51e+21 is the midpoint between two doubles), it prints the shortest digits strictly
// inside instead (5.510000000000001e+21). Such values are recognised exactly and redone.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "serve/values/values_internal.h"

namespace weir::serve::values_internal {
namespace {

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

}  // namespace

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

void AppendRoundedFloat(Sink& out, double value, int digits) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Infinity" : "Infinity";
    return;
  }
  char text[64];
  const int length = std::snprintf(text, sizeof text, "%.*g", digits, value);
  out += std::string_view(text, static_cast<size_t>(std::max(length, 0)));
}

template void AppendFloat<float>(Sink& out, float value, int max_positional);
template void AppendFloat<double>(Sink& out, double value, int max_positional);

}  // namespace weir::serve::values_internal
