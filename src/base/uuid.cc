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

bool IsDashPosition(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

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

Result<Uuid> Uuid::Parse(std::string_view text) {
  if (text.size() != 36) {
    return Status::Invalid("UUID must have 36 characters, got ", text.size(), ": '", text, "'");
  }
  Uuid uuid;
  size_t byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (IsDashPosition(i)) {
      if (text[i] != '-') return Status::Invalid("UUID expects '-' at ", i, ": '", text, "'");
      ++i;
      continue;
    }
    const int hi = HexValue(text[i]);
    const int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0 || IsDashPosition(i + 1)) {
      return Status::Invalid("UUID has a non-hex digit near ", i, ": '", text, "'");
    }
    uuid.bytes[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return uuid;
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
