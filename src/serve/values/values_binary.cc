// PostgreSQL's binary format of one value read from a DuckDB vector (the *send functions).
#include "serve/values/values_internal.h"

namespace weir::serve::values_internal {
namespace {

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

}  // namespace

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

}  // namespace weir::serve::values_internal
