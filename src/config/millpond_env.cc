#include "config/millpond_env.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "config/setting_table.h"

namespace weir::config {
namespace {

bool Matches(const MillpondVariable& variable, std::string_view name) {
  if (!variable.name.empty() && variable.name.back() == '*') {
    return std::string_view(name).starts_with(variable.name.substr(0, variable.name.size() - 1));
  }
  return name == variable.name;
}

RawValue MillpondRaw(std::string text, std::string_view variable) {
  RawValue raw;
  raw.text = std::move(text);
  raw.origin = fmt::format("{} (millpond)", variable);
  return raw;
}

// "1.5" → "1500ms" (seconds with an optional fraction, to the millisecond); nullopt otherwise.
std::optional<std::string> SecondsAsMilliseconds(std::string_view text) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  auto digits = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (whole.empty() || whole.size() > 9 || !digits(whole) || !digits(fraction) ||
      (dot != std::string_view::npos && fraction.empty())) {
    return std::nullopt;
  }
  int64_t ms = std::stoll(std::string(whole)) * 1000;
  int64_t scale = 100;
  for (size_t i = 0; i < fraction.size() && scale > 0; ++i, scale /= 10) {
    ms += (fraction[i] - '0') * scale;
  }
  return std::to_string(ms) + "ms";
}

}  // namespace

std::string LibrdkafkaPropertyName(std::string_view suffix) {
  std::string out;
  for (const char c : suffix) {
    out += c == '_' ? '.' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

const std::vector<MillpondVariable>& MillpondVariables() {
  using H = MillpondHandling;
  static const std::vector<MillpondVariable> variables = {
      {"REPLICA_COUNT", H::kSpecial,
       "kafka.replica_count, and sets kafka.assignment to static (millpond's only mode)"},
      {"DUCKLAKE_RDS_HOST", H::kSpecial,
       "catalog.postgres_host, and sets catalog.kind to postgres; the DSN is built from the "
       "DUCKLAKE_RDS_* variables"},
      {"FLUSH_INTERVAL_MS", H::kSpecial, "datasets[].flush.interval, in milliseconds"},
      {"KAFKA_CONSUMER_*", H::kSpecial,
       "kafka.properties: the rest of the name lower-cased with `_` → `.` "
       "(KAFKA_CONSUMER_SECURITY_PROTOCOL=SASL_SSL → security.protocol=SASL_SSL)"},
      {"KAFKA_TOPIC", H::kSpecial,
       "datasets[].topic; with DUCKLAKE_TABLE it defines the one dataset when the YAML has none, "
       "and the default group id becomes `millpond-<topic>-<table>` so offsets carry over"},
      {"KAFKA_CONSUMER_AUTO_OFFSET_RESET", H::kRefused,
       "refused as by millpond: use KAFKA_AUTO_OFFSET_RESET"},
      {"MILLPOND_DESTINATION", H::kSpecial,
       "`ducklake` (or empty) accepted; any other destination refused"},
      {"MILLPOND_INCLUDE_VALUES_POLL_INTERVAL_S", H::kSpecial,
       "datasets[].include_values.poll_interval, in seconds (fractions allowed)"},
      {"MILLPOND_INCLUDE_VALUES_REQUEST_TIMEOUT_S", H::kSpecial,
       "datasets[].include_values.request_timeout, in seconds (fractions allowed)"},
      {"MILLPOND_INCLUDE_VALUES_STARTUP_TIMEOUT_S", H::kSpecial,
       "datasets[].include_values.startup_timeout, in seconds (fractions allowed)"},
      {"DUCKLAKE_CONNECTION", H::kIgnored,
       "weir writes the catalog itself from DUCKLAKE_RDS_* (or catalog.*)"},
      {"DUCKLAKE_MAX_RETRY_COUNT", H::kIgnored,
       "DuckDB's inner retry count; weir's retry budget is commit.max_attempts"},
      {"STATS_INTERVAL_MS", H::kIgnored,
       "weir exports librdkafka's statistics on /metrics (`weir_librdkafka_*`) every 15 s"},
      {"BROKER_SOURCE", H::kIgnored, "no broker label on metrics"},
      {"POSTHOG_*", H::kIgnored, "no OTLP log export"},
      {"MILLPOND_SERVICE_*", H::kIgnored, "no OTLP log export"},
      {"MILLPOND_*", H::kIgnored, "unknown millpond variable"},
  };
  return variables;
}

MillpondEnvironment ReadMillpondEnvironment(const std::map<std::string, std::string>& environment) {
  MillpondEnvironment out;
  for (const auto& [name, text] : environment) {
    // Plain aliases from the table.
    bool aliased = false;
    for (const Setting& setting : SettingTable()) {
      if (setting.millpond_env != name) continue;
      aliased = true;
      RawValue raw = MillpondRaw(text, name);
      if (name.size() > 2 && name.substr(name.size() - 2) == "_S" &&
          std::string_view(name).starts_with("MILLPOND_INCLUDE_VALUES_")) {
        // millpond's unit (a float of seconds); anything else stays as is and fails parsing.
        if (const auto ms = SecondsAsMilliseconds(text)) raw.text = *ms;
      }
      if (name == "FLUSH_INTERVAL_MS") {
        // millpond's unit; a value that is not a number stays as is and fails parsing.
        const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        });
        if (digits) raw.text += "ms";
      }
      if (setting.scope == Scope::kDataset) {
        out.layer.every_dataset[std::string(setting.name)] = std::move(raw);
      } else {
        out.layer.process[std::string(setting.name)] = std::move(raw);
      }
    }
    if (name == "REPLICA_COUNT")
      out.layer.process["kafka.assignment"] = MillpondRaw("static", name);
    if (name == "DUCKLAKE_RDS_HOST")
      out.layer.process["catalog.kind"] = MillpondRaw("postgres", name);
    if (name == "KAFKA_TOPIC" || name == "DUCKLAKE_TABLE") out.contract_used = true;
    if (aliased) continue;

    if (name == "KAFKA_CONSUMER_AUTO_OFFSET_RESET") {
      out.errors.push_back(
          fmt::format("KAFKA_CONSUMER_AUTO_OFFSET_RESET: value \"{}\" is refused; set "
                      "KAFKA_AUTO_OFFSET_RESET (kafka.auto_offset_reset) instead",
                      text));
      continue;
    }
    if (std::string_view(name).starts_with("KAFKA_CONSUMER_") && name.size() > 15) {
      RawValue& raw = out.layer.process["kafka.properties"];
      if (!raw.entries) raw.entries.emplace();
      (*raw.entries)[LibrdkafkaPropertyName(std::string_view(name).substr(15))] = text;
      raw.origin = "KAFKA_CONSUMER_* (millpond)";
      continue;
    }
    if (name == "MILLPOND_DESTINATION") {
      std::string lowered;
      for (const char c : text) {
        if (!std::isspace(static_cast<unsigned char>(c))) {
          lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
      }
      if (!lowered.empty() && lowered != "ducklake") {
        out.errors.push_back(fmt::format(
            "MILLPOND_DESTINATION: value \"{}\" is not supported (weir writes DuckLake only "
            "from the millpond environment)",
            text));
      }
      continue;
    }
    for (const MillpondVariable& variable : MillpondVariables()) {
      if (!Matches(variable, name)) continue;
      if (variable.handling == MillpondHandling::kRefused) {
        out.errors.push_back(
            fmt::format("{}: value \"{}\" is refused: {}", name, text, variable.note));
      } else if (variable.handling == MillpondHandling::kIgnored) {
        out.warnings.push_back(
            fmt::format("{} is a millpond variable weir does not use ({})", name, variable.note));
      }
      break;
    }
  }
  return out;
}

}  // namespace weir::config
