#include "base/logging.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace weir {
namespace {

// The fields of the line being formatted on this thread (spdlog's default logger is
// synchronous: the sink formats on the caller's thread, inside LogWithFields).
thread_local std::initializer_list<LogField> t_fields;

bool NeedsQuotes(std::string_view value) {
  return value.find_first_of(" \"=") != std::string_view::npos;
}

void Append(spdlog::memory_buf_t& dest, std::string_view text) {
  dest.append(text.data(), text.data() + text.size());
}

// `%&` in the JSON pattern: `,"key":"value"` per field of the line.
class JsonFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (const LogField& field : t_fields) {
      if (field.value.empty()) continue;
      Append(dest, ",\"");
      Append(dest, JsonEscape(field.key));
      Append(dest, "\":\"");
      Append(dest, JsonEscape(field.value));
      Append(dest, "\"");
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonFieldsFlag>();
  }
};

// `%&` in the text pattern: ` key=value` per field of the line.
class TextFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (const LogField& field : t_fields) {
      if (field.value.empty()) continue;
      Append(dest, " ");
      Append(dest, field.key);
      Append(dest, "=");
      if (NeedsQuotes(field.value)) {
        Append(dest, "\"");
        Append(dest, JsonEscape(field.value));
        Append(dest, "\"");
      } else {
        Append(dest, field.value);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextFieldsFlag>();
  }
};

// `%*` in a pattern: the message escaped for a JSON string.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const std::string escaped =
        JsonEscape(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out;
}

void LogWithFields(spdlog::level::level_enum level, std::string_view message,
                   std::initializer_list<LogField> fields) {
  const std::initializer_list<LogField> outer = t_fields;  // a sink that logs, re-entering
  t_fields = fields;
  spdlog::default_logger_raw()->log(level, "{}", message);
  t_fields = outer;
}

Status ConfigureLogging(std::string_view level, LogFormat format) {
  std::string lower(level);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "warning") lower = "warn";
  const spdlog::level::level_enum parsed = spdlog::level::from_str(lower);
  // from_str answers "off" for anything it does not know; only accept that when asked for.
  if (parsed == spdlog::level::off && lower != "off") {
    return Status::Invalid("log level '", level,
                           "' is not one of trace, debug, info, warn, error, critical, off");
  }
  auto logger =
      std::make_shared<spdlog::logger>("weir", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == LogFormat::kJson) {
    formatter->add_flag<JsonMessageFlag>('*').add_flag<JsonFieldsFlag>('&').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","thread":%t,"msg":"%*"%&})");
  } else {
    formatter->add_flag<TextFieldsFlag>('&').set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l [%t] %v%&");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(parsed);
  spdlog::set_default_logger(std::move(logger));
  return Status::OK();
}

}  // namespace weir
