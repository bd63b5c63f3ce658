// Text forms of numbers shared by every stage that renders values (promotion to varchar,
// catalog statistics), so one value always reads the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir {

// The shortest decimal text that reads back to exactly `value` ("0.5", "1e+300", "-0").
std::string ShortestText(double value);

// The whole of `text` as an int64 ("42", "-7"); nullopt for anything else (blanks, "1.0",
// out of range).
std::optional<int64_t> ParseInt64Text(std::string_view text);
// The whole of `text` as a finite double ("2.5", "1e3"); nullopt for anything else, NaN and
// infinities included.
std::optional<double> ParseFiniteDoubleText(std::string_view text);

// A byte count for people: "512 B", "1.5 KiB", "128.0 MiB" (binary units, one decimal).
std::string BytesText(double bytes);

}  // namespace weir
