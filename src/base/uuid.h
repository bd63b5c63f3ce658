// UUIDs: the one text grammar of uuid values (typed columns, filters), and version 7
// (time-ordered) for object names, so names sort by creation time and a repeated upload of the
// same flush reuses its name.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace weir {

struct Uuid {
  std::array<uint8_t, 16> bytes{};

  // Lower-case 8-4-4-4-12 hex form (the canonical text).
  std::string ToString() const;

  // Parses millpond's uuid grammar, exactly these shapes with hex digits in any case: the
  // 8-4-4-4-12 form, 32 hex digits without hyphens, either of those inside `{…}`, or either
  // after the prefix `urn:uuid:` (that prefix in lower case only). Version and variant bits are
  // not checked (any 128-bit value). Everything else is refused: `URN:UUID:`, `urn:`/`uuid:`
  // anywhere else, braces around a URN, hyphens at other offsets, `0x` prefixes, `_`
  // separators, spaces. The error names the text.
  static Result<Uuid> Parse(std::string_view text);
  // As Parse, without building an error (the per-value path of a column).
  static std::optional<Uuid> TryParse(std::string_view text);

  int version() const { return bytes[6] >> 4; }
  // The Unix-epoch milliseconds of a version 7 UUID.
  int64_t UnixMillis() const;

  friend bool operator==(const Uuid&, const Uuid&) = default;
  friend auto operator<=>(const Uuid&, const Uuid&) = default;
};

// Generates UUIDv7s (RFC 9562): 48-bit millisecond timestamp, then a 12-bit counter seeded
// randomly each millisecond so ids from one generator are strictly increasing, then random
// bits. Not thread-safe: one generator per thread.
class UuidV7Generator {
 public:
  UuidV7Generator(const Clock& clock, uint64_t seed);
  Uuid Next();

 private:
  const Clock& clock_;
  std::mt19937_64 random_;
  int64_t last_millis_ = -1;
  uint16_t counter_ = 0;
};

}  // namespace weir
