// Process logging (spdlog). Call ConfigureLogging once at start, before threads exist; then
// log with spdlog::info(...) etc. from any thread.
#pragma once

#include <string_view>

#include "base/status.h"

namespace weir {

enum class LogFormat { kText, kJson };

// Sets the level ("trace", "debug", "info", "warn", "error", "critical", "off", in any case)
// and the line format of the default logger, which writes to stderr.
Status ConfigureLogging(std::string_view level, LogFormat format);

// Escapes text for a JSON string literal (without the quotes).
std::string JsonEscape(std::string_view text);

}  // namespace weir
