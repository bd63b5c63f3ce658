// Little-endian integers of 1 to 8 bytes in byte strings (Variant values, deletion vectors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace weir {

// Appends the `bytes` low bytes of `value` to `out`, least significant first.
inline void PutLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int b = 0; b < bytes; ++b) out.push_back(static_cast<char>((value >> (8 * b)) & 0xFF));
}

// The `bytes`-byte little-endian integer at `at` of `in` (the caller checked the bounds).
inline uint64_t GetLittleEndian(std::string_view in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int b = 0; b < bytes; ++b) {
    value |= uint64_t{static_cast<unsigned char>(in[at + b])} << (8 * b);
  }
  return value;
}

}  // namespace weir
