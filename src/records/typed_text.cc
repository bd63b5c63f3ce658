#include "records/typed_text.h"

#include "base/uuid.h"

namespace weir::records {
namespace {

bool Digits(std::string_view text, size_t at, size_t count, int* out) {
  if (at + count > text.size()) return false;
  int value = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  *out = value;
  return true;
}

bool LeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && LeapYear(year) ? 29 : kDays[month - 1];
}

// Days from 1970-01-01 to the civil date (proleptic Gregorian).
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<UuidBytes> ParseUuidText(std::string_view text) {
  if (auto uuid = Uuid::TryParse(text)) return uuid->bytes;
  return std::nullopt;
}

std::string UuidText(const UuidBytes& bytes) { return Uuid{bytes}.ToString(); }

std::optional<int64_t> ParseTimestampText(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, 0, 4, &year) || text.size() < 10 || text[4] != '-' ||
      !Digits(text, 5, 2, &month) || text[7] != '-' || !Digits(text, 8, 2, &day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) return std::nullopt;
  size_t at = 10;
  int64_t micros = 0;
  if (at < text.size() && (text[at] == 'T' || text[at] == ' ')) {
    if (!Digits(text, at + 1, 2, &hour) || at + 3 >= text.size() || text[at + 3] != ':' ||
        !Digits(text, at + 4, 2, &minute)) {
      return std::nullopt;
    }
    at += 6;
    if (at < text.size() && text[at] == ':') {
      if (!Digits(text, at + 1, 2, &second)) return std::nullopt;
      at += 3;
      if (at < text.size() && text[at] == '.') {
        ++at;
        size_t digits = 0;
        while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
          if (++digits > 6) return std::nullopt;
          micros = micros * 10 + (text[at] - '0');
          ++at;
        }
        if (digits == 0) return std::nullopt;
        for (size_t d = digits; d < 6; ++d) micros *= 10;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  }
  int offset_minutes = 0;
  if (at < text.size()) {
    if (text[at] == 'Z' && at + 1 == text.size()) {
      at += 1;
    } else if ((text[at] == '+' || text[at] == '-')) {
      const int sign = text[at] == '-' ? -1 : 1;
      int oh = 0, om = 0;
      if (!Digits(text, at + 1, 2, &oh)) return std::nullopt;
      size_t end = at + 3;
      if (end < text.size()) {
        if (text[end] == ':') ++end;
        if (!Digits(text, end, 2, &om)) return std::nullopt;
        end += 2;
      }
      if (end != text.size() || oh > 23 || om > 59) return std::nullopt;
      offset_minutes = sign * (oh * 60 + om);
      at = end;
    } else {
      return std::nullopt;
    }
  }
  if (at != text.size()) return std::nullopt;
  const int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                          second - static_cast<int64_t>(offset_minutes) * 60;
  return seconds * 1000000 + micros;
}

}  // namespace weir::records
