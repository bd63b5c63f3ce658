#include "config/setting_value.h"

#include <algorithm>
#include <cctype>
#include <type_traits>

#include <fmt/format.h>

#include "config/units.h"

#include "base/text.h"

namespace weir::config {
namespace {

// Splits on commas outside parentheses, trimming items and dropping empty ones.
std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      const std::string_view item = TrimSpace(text.substr(start, i - start));
      if (!item.empty()) items.emplace_back(item);
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return items;
}

std::string Bound(const Setting& setting, int64_t bound) {
  if (setting.type == SettingType::kBytes) return FormatByteSize(bound);
  if (setting.type == SettingType::kDuration) {
    return FormatDuration(std::chrono::milliseconds(bound));
  }
  return std::to_string(bound);
}

std::optional<std::string> CheckBounds(const Setting& setting, std::string_view text,
                                       int64_t number) {
  if ((setting.min && number < *setting.min) || (setting.max && number > *setting.max)) {
    return fmt::format("value \"{}\" is out of range [{}, {}]", text,
                       setting.min ? Bound(setting, *setting.min) : "",
                       setting.max ? Bound(setting, *setting.max) : "");
  }
  return std::nullopt;
}

}  // namespace

std::variant<Value, std::string> ParseValue(const Setting& setting, std::string_view text) {
  const std::string_view trimmed = TrimSpace(text);
  switch (setting.type) {
    case SettingType::kString:
      return Value(std::string(trimmed));
    case SettingType::kInt: {
      const auto number = ParseInteger(trimmed);
      if (!number) return fmt::format("value \"{}\" is not an integer", text);
      if (auto problem = CheckBounds(setting, text, *number)) return *problem;
      return Value(*number);
    }
    case SettingType::kBytes: {
      const auto bytes = ParseByteSize(trimmed);
      if (!bytes) {
        return fmt::format("value \"{}\" is not a byte size (e.g. 1048576, 64KiB, 100MiB, 1GB)",
                           text);
      }
      if (auto problem = CheckBounds(setting, text, *bytes)) return *problem;
      return Value(*bytes);
    }
    case SettingType::kDuration: {
      const auto duration = ParseDuration(trimmed);
      if (!duration) {
        return fmt::format("value \"{}\" is not a duration (e.g. 500ms, 60s, 2m, 1h)", text);
      }
      if (auto problem = CheckBounds(setting, text, duration->count())) return *problem;
      return Value(*duration);
    }
    case SettingType::kBool: {
      const auto flag = ParseBool(trimmed);
      if (!flag) return fmt::format("value \"{}\" is not a boolean (true or false)", text);
      return Value(*flag);
    }
    case SettingType::kEnum: {
      std::string lowered = ToLower(trimmed);
      for (const auto& [alias, canonical] : setting.aliases) {
        if (lowered == alias) lowered = std::string(canonical);
      }
      for (const std::string_view allowed : setting.allowed) {
        if (lowered == allowed) return Value(lowered);
      }
      return fmt::format("value \"{}\" is not one of {}", text, fmt::join(setting.allowed, ", "));
    }
    case SettingType::kStringList:
      return Value(SplitList(trimmed));
    case SettingType::kStringMap: {
      std::map<std::string, std::string> entries;
      for (const std::string& item : SplitList(trimmed)) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0) {
          return fmt::format("value \"{}\" is not a list of key=value", text);
        }
        entries[std::string(TrimSpace(item.substr(0, eq)))] =
            std::string(TrimSpace(item.substr(eq + 1)));
      }
      return Value(std::move(entries));
    }
  }
  return fmt::format("value \"{}\" has an unknown type", text);
}

std::string FormatValue(const Setting& setting, const Value& value) {
  return std::visit(
      [&setting](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return setting.type == SettingType::kBytes ? FormatByteSize(v) : std::to_string(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
          return FormatDuration(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return fmt::format("{}", fmt::join(v, ","));
        } else {
          std::vector<std::string> items;
          for (const auto& [key, item] : v) items.push_back(key + "=" + item);
          return fmt::format("{}", fmt::join(items, ","));
        }
      },
      value);
}

bool IsSecretProperty(std::string_view key) {
  const std::string lowered = ToLower(key);
  for (const std::string_view word : {"password", "secret", "jaas", "token", "key.pem"}) {
    if (lowered.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string MaskConninfo(std::string_view conninfo) {
  std::string text(conninfo);
  if (text.rfind("postgres://", 0) == 0 || text.rfind("postgresql://", 0) == 0) {
    // postgres://user:password@host/... : mask between the first ':' after the scheme and '@'.
    const size_t authority = text.find("//") + 2;
    const size_t at = text.find('@', authority);
    const size_t colon = text.find(':', authority);
    if (at != std::string::npos && colon != std::string::npos && colon < at) {
      text.replace(colon + 1, at - colon - 1, "****");
    }
    const size_t query = text.find("password=");
    if (query != std::string::npos) {
      const size_t end = text.find('&', query);
      text.replace(query + 9, (end == std::string::npos ? text.size() : end) - query - 9, "****");
    }
    return text;
  }
  size_t pos = 0;
  while ((pos = text.find("password", pos)) != std::string::npos) {
    size_t value = pos + 8;
    while (value < text.size() && text[value] == ' ') ++value;
    if (value >= text.size() || text[value] != '=') {
      pos = value;
      continue;
    }
    ++value;
    while (value < text.size() && text[value] == ' ') ++value;
    size_t end = value;
    if (end < text.size() && text[end] == '\'') {
      ++end;
      while (end < text.size() && text[end] != '\'') end += text[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, text.size());
    } else {
      while (end < text.size() && text[end] != ' ') ++end;
    }
    text.replace(value, end - value, "****");
    pos = value + 4;
  }
  return text;
}

std::string DisplayValue(const Setting& setting, const Value& value) {
  if (setting.secrecy == Secrecy::kSecret) {
    const auto* text = std::get_if<std::string>(&value);
    return text != nullptr && text->empty() ? "" : "****";
  }
  if (setting.secrecy == Secrecy::kConninfo) return MaskConninfo(FormatValue(setting, value));
  if (const auto* entries = std::get_if<std::map<std::string, std::string>>(&value)) {
    std::map<std::string, std::string> masked = *entries;
    for (auto& [key, item] : masked) {
      if (IsSecretProperty(key)) item = "****";
    }
    return FormatValue(setting, masked);
  }
  return FormatValue(setting, value);
}

}  // namespace weir::config
