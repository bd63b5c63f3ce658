// Small text helpers shared by the stages that parse settings and expressions.
#pragma once

#include <string>
#include <string_view>

namespace weir {

// `text` without leading and trailing ASCII whitespace.
std::string_view TrimSpace(std::string_view text);

// `text` without leading and trailing spaces and tabs (the blanks of a setting's list items).
std::string_view TrimBlanks(std::string_view text);

// `text` with ASCII letters in lower case.
std::string ToLower(std::string_view text);

// A plain identifier: an ASCII letter or `_`, then letters, digits and `_` (what settings accept
// as a column or table name without quoting).
bool IsPlainIdentifier(std::string_view text);

}  // namespace weir
