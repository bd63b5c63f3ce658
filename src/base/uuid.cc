#include "base/uuid.h"

namespace weir {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// 36 characters with hyphens at 8, 13, 18 and 23 (and nowhere else), or 32 hex digits.
std::optional<Uuid> ParseBare(std::string_view text) {
  const bool hyphenated = text.size() == 36;
  if (!hyphenated && text.size() != 32) return std::nullopt;
  Uuid uuid;
  size_t digit = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (hyphenated && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (text[i] != '-') return std::nullopt;
      continue;
    }
    const int value = HexValue(text[i]);
    if (value < 0) return std::nullopt;
    uuid.bytes[digit / 2] |= static_cast<uint8_t>(value << (digit % 2 ? 0 : 4));
    ++digit;
  }
  return uuid;
}

}  // namespace

std::string Uuid::ToString() const {
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xF]);
  }
  return out;
}

std::optional<Uuid> Uuid::TryParse(std::string_view text) {
  constexpr std::string_view kUrn = "urn:uuid:";
  if (text.starts_with(kUrn)) return ParseBare(text.substr(kUrn.size()));
  if (text.size() >= 2 && text.front() == '{' && text.back() == '}') {
    return ParseBare(text.substr(1, text.size() - 2));
  }
  return ParseBare(text);
}

Result<Uuid> Uuid::Parse(std::string_view text) {
  if (auto uuid = TryParse(text)) return *uuid;
  return Status::Invalid(
      "'", text,
      "' is not a UUID (8-4-4-4-12 or 32 hex digits, optionally in {} or after urn:uuid:)");
}

int64_t Uuid::UnixMillis() const {
  int64_t millis = 0;
  for (int i = 0; i < 6; ++i) millis = millis << 8 | bytes[i];
  return millis;
}

UuidV7Generator::UuidV7Generator(const Clock& clock, uint64_t seed)
    : clock_(clock), random_(seed) {}

Uuid UuidV7Generator::Next() {
  int64_t millis = weir::UnixMillis(clock_.Now());
  if (millis <= last_millis_) {
    // Same millisecond (or the wall clock stepped back): keep ordering with the counter,
    // borrowing the next millisecond when the counter runs out.
    millis = last_millis_;
    if (++counter_ > 0xFFF) {
      ++millis;
      counter_ = static_cast<uint16_t>(random_() & 0x3FF);
    }
  } else {
    // A random start leaves room to count up within the millisecond.
    counter_ = static_cast<uint16_t>(random_() & 0x3FF);
  }
  last_millis_ = millis;

  Uuid uuid;
  for (int i = 0; i < 6; ++i) uuid.bytes[i] = static_cast<uint8_t>(millis >> (8 * (5 - i)));
  uuid.bytes[6] = static_cast<uint8_t>(0x70 | (counter_ >> 8));
  uuid.bytes[7] = static_cast<uint8_t>(counter_ & 0xFF);
  const uint64_t tail = random_();
  for (int i = 8; i < 16; ++i) uuid.bytes[i] = static_cast<uint8_t>(tail >> (8 * (15 - i)));
  uuid.bytes[8] = static_cast<uint8_t>(0x80 | (uuid.bytes[8] & 0x3F));  // RFC 9562 variant
  return uuid;
}

}  // namespace weir
