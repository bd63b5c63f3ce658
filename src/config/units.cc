#include "config/units.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <utility>

#include "base/text.h"

namespace weir::config {
namespace {

// Reads leading digits into `value`; returns how many were read (0 on overflow or none).
size_t ReadDigits(std::string_view text, int64_t* value) {
  int64_t result = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    const int digit = text[i] - '0';
    if (result > (std::numeric_limits<int64_t>::max() - digit) / 10) return 0;
    result = result * 10 + digit;
  }
  *value = result;
  return i;
}

bool MultiplyChecked(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace

std::optional<int64_t> ParseByteSize(std::string_view text) {
  text = TrimSpace(text);
  int64_t amount = 0;
  const size_t digits = ReadDigits(text, &amount);
  if (digits == 0) return std::nullopt;
  const std::string unit = ToLower(TrimSpace(text.substr(digits)));
  static constexpr std::array<std::pair<std::string_view, int64_t>, 10> kUnits = {{
      {"", 1},
      {"b", 1},
      {"kb", 1000},
      {"mb", 1000 * 1000},
      {"gb", 1000LL * 1000 * 1000},
      {"tb", 1000LL * 1000 * 1000 * 1000},
      {"kib", 1LL << 10},
      {"mib", 1LL << 20},
      {"gib", 1LL << 30},
      {"tib", 1LL << 40},
  }};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) {
      int64_t bytes = 0;
      if (!MultiplyChecked(amount, factor, &bytes)) return std::nullopt;
      return bytes;
    }
  }
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  text = TrimSpace(text);
  if (text.empty()) return std::nullopt;
  if (text == "0") return std::chrono::milliseconds(0);  // zero needs no unit
  int64_t total = 0;
  while (!text.empty()) {
    int64_t amount = 0;
    const size_t digits = ReadDigits(text, &amount);
    if (digits == 0) return std::nullopt;
    text.remove_prefix(digits);
    size_t unit_length = 0;
    while (unit_length < text.size() &&
           std::isalpha(static_cast<unsigned char>(text[unit_length]))) {
      ++unit_length;
    }
    const std::string unit = ToLower(text.substr(0, unit_length));
    text.remove_prefix(unit_length);
    int64_t factor = 0;
    if (unit == "ms") {
      factor = 1;
    } else if (unit == "s") {
      factor = 1000;
    } else if (unit == "m") {
      factor = 60 * 1000;
    } else if (unit == "h") {
      factor = 60 * 60 * 1000;
    } else if (unit == "d") {
      factor = 24 * 60 * 60 * 1000;
    } else {
      return std::nullopt;
    }
    int64_t part = 0;
    if (!MultiplyChecked(amount, factor, &part) || __builtin_add_overflow(total, part, &total)) {
      return std::nullopt;
    }
  }
  return std::chrono::milliseconds(total);
}

std::optional<bool> ParseBool(std::string_view text) {
  const std::string value = ToLower(TrimSpace(text));
  if (value == "true" || value == "yes" || value == "on" || value == "1") return true;
  if (value == "false" || value == "no" || value == "off" || value == "0") return false;
  return std::nullopt;
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  text = TrimSpace(text);
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int64_t value = 0;
  const size_t digits = ReadDigits(text, &value);
  if (digits == 0 || digits != text.size()) return std::nullopt;
  return negative ? -value : value;
}

std::string FormatByteSize(int64_t bytes) {
  static constexpr std::array<std::pair<std::string_view, int>, 4> kUnits = {{
      {"TiB", 40},
      {"GiB", 30},
      {"MiB", 20},
      {"KiB", 10},
  }};
  if (bytes > 0) {
    for (const auto& [name, shift] : kUnits) {
      const int64_t factor = int64_t{1} << shift;
      if (bytes % factor == 0) return std::to_string(bytes / factor) + std::string(name);
    }
  }
  return std::to_string(bytes);
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  const int64_t ms = duration.count();
  if (ms == 0) return "0";
  if (ms != 0 && ms % (60 * 60 * 1000) == 0) return std::to_string(ms / (60 * 60 * 1000)) + "h";
  if (ms != 0 && ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace weir::config
