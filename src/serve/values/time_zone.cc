#include "serve/values/time_zone.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "base/text.h"

namespace weir::serve {

// A POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0"): standard time, and optionally daylight time
// with the two dates (and local times) it starts and ends each year.
struct PosixRule {
  struct Date {
    char kind = 'M';  // 'J': day 1..365 without Feb 29; 'D': day 0..365; 'M': month.week.day
    int day = 0, week = 0, month = 0;
    int32_t time = 7200;  // local seconds after midnight (may be negative or past 24h)
  };
  int32_t std_offset = 0;  // seconds east of UTC
  std::optional<int32_t> dst_offset;
  Date start, end;
};

struct TimeZone::Data {
  std::vector<int64_t> transitions;      // UTC seconds, ascending
  std::vector<uint8_t> transition_type;  // index into offsets
  std::vector<int32_t> offsets;          // seconds east of UTC, per local time type
  std::optional<PosixRule> rule;         // after the last transition
};

namespace {

Status InvalidZone(std::string_view name) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22023",
                         fmt::format("invalid value for parameter \"TimeZone\": \"{}\"", name));
}

std::filesystem::path ZoneDirectory() {
  const char* dir = std::getenv("TZDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo";
}

// The canonical spelling of `name` under the zone directory, each component matched without
// regard to case (as PostgreSQL's pg_tzset does); "" when no such file.
std::string CanonicalName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '/') return "";
  std::filesystem::path dir = ZoneDirectory();
  std::string canonical;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t slash = std::min(name.find('/', start), name.size());
    const std::string part = ToLower(name.substr(start, slash - start));
    if (part.empty() || part == "." || part == "..") return "";
    std::string found;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (ToLower(file) == part) {
        found = file;
        break;
      }
    }
    if (ec || found.empty()) return "";
    canonical += (canonical.empty() ? "" : "/") + found;
    dir /= found;
    start = slash + 1;
  }
  std::error_code ec;
  return std::filesystem::is_regular_file(dir, ec) ? canonical : "";
}

// --- POSIX TZ strings --------------------------------------------------------------------------

class RuleParser {
 public:
  explicit RuleParser(std::string_view text) : text_(text) {}

  std::optional<PosixRule> Parse() {
    PosixRule rule;
    if (!Name()) return std::nullopt;
    auto std_west = Offset();
    if (!std_west) return std::nullopt;
    rule.std_offset = -*std_west;
    if (pos_ == text_.size()) return rule;
    if (!Name()) return std::nullopt;
    rule.dst_offset = rule.std_offset + 3600;
    if (pos_ < text_.size() && text_[pos_] != ',') {
      auto dst_west = Offset();
      if (!dst_west) return std::nullopt;
      rule.dst_offset = -*dst_west;
    }
    if (pos_ == text_.size()) {
      // No dates: the US rules of POSIX's default.
      rule.start = {'M', 0, 2, 3, 7200};
      rule.end = {'M', 0, 1, 11, 7200};
      return rule;
    }
    if (!Eat(',') || !DateRule(rule.start) || !Eat(',') || !DateRule(rule.end)) {
      return std::nullopt;
    }
    return pos_ == text_.size() ? std::optional<PosixRule>(rule) : std::nullopt;
  }

 private:
  bool Eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Name() {
    if (Eat('<')) {
      const size_t close = text_.find('>', pos_);
      if (close == std::string_view::npos) return false;
      pos_ = close + 1;
      return true;
    }
    const size_t begin = pos_;
    while (pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_ - begin >= 3;
  }
  std::optional<int> Number() {
    const size_t begin = pos_;
    int value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > 100000) return std::nullopt;
    }
    return pos_ > begin ? std::optional<int>(value) : std::nullopt;
  }
  // [+-]hh[:mm[:ss]] in seconds.
  std::optional<int32_t> Offset() {
    int sign = 1;
    if (Eat('-')) {
      sign = -1;
    } else {
      Eat('+');
    }
    auto hours = Number();
    if (!hours) return std::nullopt;
    int32_t seconds = *hours * 3600;
    if (Eat(':')) {
      auto minutes = Number();
      if (!minutes) return std::nullopt;
      seconds += *minutes * 60;
      if (Eat(':')) {
        auto secs = Number();
        if (!secs) return std::nullopt;
        seconds += *secs;
      }
    }
    return sign * seconds;
  }
  bool DateRule(PosixRule::Date& date) {
    if (Eat('M')) {
      auto month = Number();
      if (!month || !Eat('.')) return false;
      auto week = Number();
      if (!week || !Eat('.')) return false;
      auto day = Number();
      if (!day || *month < 1 || *month > 12 || *week < 1 || *week > 5 || *day > 6) return false;
      date = {'M', *day, *week, *month, 7200};
    } else {
      const char kind = Eat('J') ? 'J' : 'D';
      auto day = Number();
      if (!day || *day > 365) return false;
      date = {kind, *day, 0, 0, 7200};
    }
    if (Eat('/')) {
      auto time = Offset();
      if (!time) return false;
      date.time = *time;
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t YearOf(int64_t days) {
  // The civil year of a day count (Howard Hinnant's civil_from_days).
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  return yoe + era * 400 + (month <= 2);
}

bool IsLeap(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

// The local seconds since 1970 at which `date` falls in `year`.
int64_t LocalSecondsOf(const PosixRule::Date& date, int64_t year) {
  int64_t days = 0;
  if (date.kind == 'J') {
    days = DaysFromCivil(year, 1, 1) + date.day - 1 + (IsLeap(year) && date.day >= 60 ? 1 : 0);
  } else if (date.kind == 'D') {
    days = DaysFromCivil(year, 1, 1) + date.day;
  } else {
    const int64_t first = DaysFromCivil(year, date.month, 1);
    const int first_weekday = static_cast<int>(((first % 7) + 11) % 7);  // 1970-01-01: Thursday
    int64_t day = first + (date.day - first_weekday + 7) % 7 + 7 * (date.week - 1);
    const int next_month = date.month == 12 ? 1 : date.month + 1;
    const int64_t month_end = DaysFromCivil(date.month == 12 ? year + 1 : year, next_month, 1);
    while (day >= month_end) day -= 7;  // week 5: the last such day
    days = day;
  }
  return days * 86400 + date.time;
}

int32_t RuleOffsetAt(const PosixRule& rule, int64_t utc) {
  if (!rule.dst_offset) return rule.std_offset;
  const int64_t year =
      YearOf((utc + rule.std_offset) >= 0 ? (utc + rule.std_offset) / 86400
                                          : ((utc + rule.std_offset) - 86399) / 86400);
  const int64_t start = LocalSecondsOf(rule.start, year) - rule.std_offset;
  const int64_t end = LocalSecondsOf(rule.end, year) - *rule.dst_offset;
  const bool dst = start < end ? (utc >= start && utc < end) : !(utc >= end && utc < start);
  return dst ? *rule.dst_offset : rule.std_offset;
}

// --- TZif ----------------------------------------------------------------------------------------

class Bytes {
 public:
  explicit Bytes(std::string_view data) : data_(data) {}
  bool Has(size_t n) const { return pos_ + n <= data_.size(); }
  uint64_t Big(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += n;
    return v;
  }
  void Skip(size_t n) { pos_ += n; }
  std::string_view Rest() const { return data_.substr(pos_); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

std::optional<TimeZone::Data> ParseTzif(std::string_view bytes) {
  Bytes in(bytes);
  const auto header = [&](uint32_t counts[6], char* version) {
    if (!in.Has(44) || in.Rest().substr(0, 4) != "TZif") return false;
    in.Skip(4);
    *version = static_cast<char>(in.Big(1));
    in.Skip(15);
    for (int i = 0; i < 6; ++i) counts[i] = static_cast<uint32_t>(in.Big(4));
    return true;
  };
  uint32_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  char version = 0;
  if (!header(c, &version)) return std::nullopt;
  size_t time_size = 4;
  if (version >= '2') {
    // Skip the 32-bit block for the 64-bit one that follows it.
    const size_t v1 = c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0];
    if (!in.Has(v1)) return std::nullopt;
    in.Skip(v1);
    if (!header(c, &version)) return std::nullopt;
    time_size = 8;
  }
  const size_t block =
      c[3] * (time_size + 1) + c[4] * 6 + c[5] + c[2] * (time_size + 4) + c[1] + c[0];
  if (!in.Has(block) || c[4] == 0 || c[4] > 256) return std::nullopt;
  TimeZone::Data data;
  for (uint32_t i = 0; i < c[3]; ++i) {
    const uint64_t raw = in.Big(time_size);
    data.transitions.push_back(time_size == 8 ? static_cast<int64_t>(raw)
                                              : static_cast<int32_t>(static_cast<uint32_t>(raw)));
  }
  for (uint32_t i = 0; i < c[3]; ++i) {
    data.transition_type.push_back(static_cast<uint8_t>(in.Big(1)));
    if (data.transition_type.back() >= c[4]) return std::nullopt;
  }
  for (uint32_t i = 0; i < c[4]; ++i) {
    data.offsets.push_back(static_cast<int32_t>(static_cast<uint32_t>(in.Big(4))));
    in.Skip(2);  // isdst, abbreviation index
  }
  in.Skip(c[5] + c[2] * (time_size + 4) + c[1] + c[0]);
  if (time_size == 8) {
    const std::string_view footer = in.Rest();
    if (footer.size() >= 2 && footer.front() == '\n') {
      const size_t end = footer.find('\n', 1);
      const std::string_view tz = footer.substr(1, end == std::string_view::npos ? 0 : end - 1);
      if (!tz.empty()) data.rule = RuleParser(tz).Parse();
    }
  }
  return data;
}

}  // namespace

Result<TimeZone> TimeZone::FromTzif(std::string name, std::string_view bytes) {
  auto data = ParseTzif(bytes);
  if (!data) return InvalidZone(name);
  return TimeZone(std::move(name), std::make_shared<const Data>(std::move(*data)));
}

Result<TimeZone> TimeZone::Find(std::string_view name) {
  const std::string canonical = CanonicalName(TrimSpace(name));
  if (canonical.empty()) return InvalidZone(name);
  static std::mutex mutex;
  static std::map<std::string, TimeZone>* cache = new std::map<std::string, TimeZone>();
  {
    std::lock_guard lock(mutex);
    if (auto found = cache->find(canonical); found != cache->end()) return found->second;
  }
  std::ifstream file(ZoneDirectory() / canonical, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  auto zone = FromTzif(canonical, contents.str());
  if (!zone.ok()) return InvalidZone(name);  // a file that is no zone (zone1970.tab, ...)
  std::lock_guard lock(mutex);
  return cache->emplace(canonical, *zone).first->second;
}

const TimeZone& TimeZone::Utc() {
  static const TimeZone utc("UTC", nullptr);
  return utc;
}

int32_t TimeZone::OffsetAt(int64_t utc_seconds) const {
  if (data_ == nullptr) return 0;
  const Data& d = *data_;
  if (d.transitions.empty() || utc_seconds < d.transitions.front()) {
    if (d.transitions.empty() && d.rule) return RuleOffsetAt(*d.rule, utc_seconds);
    return d.offsets.front();  // before the first transition: the first local time type
  }
  if (utc_seconds >= d.transitions.back() && d.rule) return RuleOffsetAt(*d.rule, utc_seconds);
  const auto after = std::upper_bound(d.transitions.begin(), d.transitions.end(), utc_seconds);
  return d.offsets[d.transition_type[static_cast<size_t>(after - d.transitions.begin()) - 1]];
}

}  // namespace weir::serve
