// Iceberg v3 deletion vectors (the Puffin blob type `deletion-vector-v1`): the deleted row
// positions of one data file as a 64-bit Roaring bitmap, kept as 32-bit CRoaring bitmaps keyed
// by the positions' high 32 bits, and their blob bytes (format/puffin-spec.md):
//   length (4 bytes big-endian, of magic + bitmap) | magic D1 D3 39 64 | bitmap | CRC-32
//   (4 bytes big-endian, of magic + bitmap)
// with the bitmap in Roaring's 64-bit "portable" form: the bucket count (8 bytes LE), then per
// bucket in ascending key order its key (4 bytes LE) and its 32-bit portable bitmap.
//
// A value type; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

struct roaring_bitmap_s;

namespace weir::lake::iceberg {

class DeletionVector {
 public:
  DeletionVector();
  ~DeletionVector();
  DeletionVector(DeletionVector&&) noexcept;
  DeletionVector& operator=(DeletionVector&&) noexcept;
  DeletionVector(const DeletionVector&) = delete;
  DeletionVector& operator=(const DeletionVector&) = delete;

  // Marks row `position` (0 ≤ position < 2^63) deleted.
  void Add(int64_t position);
  // Adds every position of `other`.
  void Merge(const DeletionVector& other);
  bool Contains(int64_t position) const;
  int64_t Cardinality() const;
  // The positions, ascending.
  std::vector<int64_t> Positions() const;

  // The 64-bit portable bitmap (run-optimized first: the smallest of Roaring's containers).
  std::string SerializeBitmap();
  static Result<DeletionVector> DeserializeBitmap(std::string_view bytes);

  // The `deletion-vector-v1` blob: length, magic, bitmap, CRC.
  std::string EncodeBlob();
  // Checks the length, magic and CRC of a blob and reads its bitmap.
  static Result<DeletionVector> DecodeBlob(std::string_view blob);

 private:
  struct Free {
    void operator()(roaring_bitmap_s* bitmap) const;
  };
  using Bitmap = std::unique_ptr<roaring_bitmap_s, Free>;
  roaring_bitmap_s* Bucket(uint32_t key);

  std::map<uint32_t, Bitmap> buckets_;
};

// The magic bytes that open a deletion vector's bitmap in its blob.
inline constexpr std::string_view kDeletionVectorMagic = "\xD1\xD3\x39\x64";

}  // namespace weir::lake::iceberg
