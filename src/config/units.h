// Text forms of the setting value kinds: byte sizes, durations, booleans and integers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::config {

// "1048576", "64KiB", "100MiB", "1GiB" (binary, 1024-based) or "1KB", "1GB" (decimal,
// 1000-based); unit case-insensitive, optional space before it. nullopt when not a byte size.
std::optional<int64_t> ParseByteSize(std::string_view text);

// "500ms", "60s", "2m", "1h", "7d", or a sum such as "1d12h". A bare number has no unit and is
// refused, except 0. nullopt when not a duration.
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

// true/false, yes/no, on/off, 1/0 (any case). nullopt otherwise.
std::optional<bool> ParseBool(std::string_view text);

// A base-10 integer with optional sign. nullopt when not one or out of int64 range.
std::optional<int64_t> ParseInteger(std::string_view text);

// The shortest exact text: "100MiB", "64KiB", "1000" (plain bytes when not a whole unit).
std::string FormatByteSize(int64_t bytes);

// The shortest exact text: "96s", "500ms", "2m", "1h", "0".
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace weir::config
