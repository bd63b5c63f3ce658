// Process logging (spdlog). Call ConfigureLogging once at start, before threads exist; then
// log with spdlog::info(...) etc. from any thread, or with LogWithFields for a line that
// carries named values (a library's client and peer, say).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <spdlog/common.h>

#include "base/status.h"

namespace weir {

enum class LogFormat { kText, kJson };

// Sets the level ("trace", "debug", "info", "warn", "error", "critical", "off", in any case)
// and the line format of the default logger, which writes to stderr.
Status ConfigureLogging(std::string_view level, LogFormat format);

// A named value attached to one log line: a JSON key of its own next to "msg", or
// ` key=value` after the message in text (quoted when it holds a space, '"' or '=').
struct LogField {
  std::string_view key;
  std::string_view value;
};

// Logs `message` at `level` through the default logger with `fields`; a field whose value is
// empty is left out. Fields are rendered only by the formats ConfigureLogging sets.
void LogWithFields(spdlog::level::level_enum level, std::string_view message,
                   std::initializer_list<LogField> fields);

// Escapes text for a JSON string literal (without the quotes).
std::string JsonEscape(std::string_view text);

}  // namespace weir
