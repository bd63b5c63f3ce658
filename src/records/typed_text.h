// The text grammars of typed columns (issue 14), as millpond accepts them.
//
// UUIDs: millpond's grammar, implemented once by base::Uuid::Parse (base/uuid.h) — the
// canonical 8-4-4-4-12 form, 32 hex digits without hyphens, either of those inside `{…}`, or
// either after the prefix `urn:uuid:` (that prefix in lower case only), hex digits in any case,
// version and variant bits not checked; everything else is refused.
//
// Timestamps (UTC unless an offset is given): `YYYY-MM-DD`, then optionally `T` or a space and
// `HH:MM`, optionally `:SS` and a fraction of 1 to 6 digits, then optionally `Z` or an offset
// `±HH`, `±HHMM` or `±HH:MM`. Fields are range-checked (month days, leap years; no leap
// second); more than microsecond precision is refused rather than rounded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir::records {

using UuidBytes = std::array<uint8_t, 16>;

// The 16 big-endian bytes of `text`, or nullopt when it is not one of the accepted shapes.
std::optional<UuidBytes> ParseUuidText(std::string_view text);

// The canonical lower-case hyphenated form.
std::string UuidText(const UuidBytes& bytes);

// Microseconds since 1970-01-01T00:00:00Z, or nullopt when `text` is not an accepted timestamp.
std::optional<int64_t> ParseTimestampText(std::string_view text);

}  // namespace weir::records
