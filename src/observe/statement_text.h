// The text of a statement as the status page shows it: literal values replaced by `?`, so the
// page does not show the values other users' statements carried (string, dollar-quoted, bit and
// numeric literals; comments are dropped), whitespace collapsed, and at most
// kStatementDisplayChars characters (cut at a UTF-8 boundary, "…" appended). Identifiers,
// keywords and quoted identifiers are kept. A display aid, never a permission check.
// Pure function; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace weir::observe {

inline constexpr size_t kStatementDisplayChars = 160;

std::string DisplayStatement(std::string_view sql);

}  // namespace weir::observe
