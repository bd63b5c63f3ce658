// PostgreSQL's text output format of one value read from a DuckDB vector (the *out functions:
// numeric_out, date_out, timestamptz_out in the session's TimeZone, interval_out with
// IntervalStyle postgres, array_out, ...).
#include "serve/values/time_zone.h"
#include "serve/values/values_internal.h"

namespace weir::serve::values_internal {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

inline void AppendHex(Sink& out, const uint8_t* bytes, size_t size) {
  char* p = out.Reserve(2 * size);
  out.Advance(2 * size);
  for (size_t i = 0; i < size; ++i) {
    *p++ = kHexDigits[bytes[i] >> 4];
    *p++ = kHexDigits[bytes[i] & 15];
  }
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

// ---------------------------------------------------------------------------------------------
// Calendar (proleptic Gregorian, astronomical years: 0 is 1 BC).

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

// A timestamp (microseconds since 1970) as "YYYY-MM-DD HH:MM:SS[.f][ BC]", or with a zone
// `offset` (seconds east of UTC; null: none) as its local time and "+HH[:MM[:SS]]".
void AppendZone(Sink& out, int32_t seconds_east);
void AppendTimestamp(Sink& out, int64_t micros, const int32_t* offset) {
  if (micros == kTimestampInfinity) {
    out += "infinity";
    return;
  }
  if (micros == -kTimestampInfinity || micros == std::numeric_limits<int64_t>::min()) {
    out += "-infinity";
    return;
  }
  if (offset != nullptr) micros += int64_t{*offset} * kMicrosPerSecond;
  const int64_t days = FloorDiv(micros, kMicrosPerDay);
  const bool bc = AppendCivilDate(out, days);
  out += ' ';
  AppendTimeOfDay(out, micros - days * kMicrosPerDay);
  if (offset != nullptr) AppendZone(out, *offset);
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

}  // namespace

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

void AppendTimestampTz(Sink& out, int64_t micros, const TimeZone* zone) {
  const int32_t offset =
      zone != nullptr && micros != kTimestampInfinity && micros != -kTimestampInfinity
          ? zone->OffsetAt(FloorDiv(micros, kMicrosPerSecond))
          : 0;
  AppendTimestamp(out, micros, &offset);
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
      if (node.output.extra_float_digits <= 0) {
        return AppendRoundedFloat(out, At<float>(node.data, row),
                                  std::max(1, 6 + node.output.extra_float_digits));
      }
      return AppendFloat(out, At<float>(node.data, row), 6);
    case Kind::kDouble:
      if (node.output.extra_float_digits <= 0) {
        return AppendRoundedFloat(out, At<double>(node.data, row),
                                  std::max(1, 15 + node.output.extra_float_digits));
      }
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
      return AppendTimestamp(out, TimestampMicros(node, row), nullptr);
    case Kind::kTimestampTz:
      return AppendTimestampTz(out, At<int64_t>(node.data, row), node.output.time_zone);
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

}  // namespace weir::serve::values_internal
