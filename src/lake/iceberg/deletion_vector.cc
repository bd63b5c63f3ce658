#include "lake/iceberg/deletion_vector.h"

#include <zlib.h>

#include <roaring/roaring.h>

#include "base/byte_order.h"

namespace weir::lake::iceberg {
namespace {

void PutBe32(std::string& out, uint32_t value) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
uint32_t GetBe32(std::string_view in, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(in[at + i]);
  return value;
}

}  // namespace

void DeletionVector::Free::operator()(roaring_bitmap_s* bitmap) const {
  roaring_bitmap_free(bitmap);
}

DeletionVector::DeletionVector() = default;
DeletionVector::~DeletionVector() = default;
DeletionVector::DeletionVector(DeletionVector&&) noexcept = default;
DeletionVector& DeletionVector::operator=(DeletionVector&&) noexcept = default;

roaring_bitmap_s* DeletionVector::Bucket(uint32_t key) {
  auto& bucket = buckets_[key];
  if (!bucket) bucket.reset(roaring_bitmap_create());
  return bucket.get();
}

void DeletionVector::Add(int64_t position) {
  const auto p = static_cast<uint64_t>(position);
  roaring_bitmap_add(Bucket(static_cast<uint32_t>(p >> 32)), static_cast<uint32_t>(p));
}

void DeletionVector::Merge(const DeletionVector& other) {
  for (const auto& [key, bitmap] : other.buckets_) {
    roaring_bitmap_or_inplace(Bucket(key), bitmap.get());
  }
}

bool DeletionVector::Contains(int64_t position) const {
  const auto p = static_cast<uint64_t>(position);
  const auto bucket = buckets_.find(static_cast<uint32_t>(p >> 32));
  return bucket != buckets_.end() &&
         roaring_bitmap_contains(bucket->second.get(), static_cast<uint32_t>(p));
}

int64_t DeletionVector::Cardinality() const {
  uint64_t total = 0;
  for (const auto& [key, bitmap] : buckets_) total += roaring_bitmap_get_cardinality(bitmap.get());
  return static_cast<int64_t>(total);
}

std::vector<int64_t> DeletionVector::Positions() const {
  std::vector<int64_t> out;
  for (const auto& [key, bitmap] : buckets_) {
    std::vector<uint32_t> low(roaring_bitmap_get_cardinality(bitmap.get()));
    roaring_bitmap_to_uint32_array(bitmap.get(), low.data());
    for (const uint32_t l : low) out.push_back(static_cast<int64_t>((uint64_t{key} << 32) | l));
  }
  return out;
}

std::string DeletionVector::SerializeBitmap() {
  std::string out;
  size_t nonempty = 0;
  for (const auto& [key, bitmap] : buckets_) {
    if (roaring_bitmap_get_cardinality(bitmap.get()) > 0) ++nonempty;
  }
  PutLittleEndian(out, nonempty, 8);
  for (auto& [key, bitmap] : buckets_) {
    if (roaring_bitmap_get_cardinality(bitmap.get()) == 0) continue;
    roaring_bitmap_run_optimize(bitmap.get());
    PutLittleEndian(out, key, 4);
    const size_t at = out.size();
    out.resize(at + roaring_bitmap_portable_size_in_bytes(bitmap.get()));
    const size_t written = roaring_bitmap_portable_serialize(bitmap.get(), out.data() + at);
    out.resize(at + written);
  }
  return out;
}

Result<DeletionVector> DeletionVector::DeserializeBitmap(std::string_view bytes) {
  if (bytes.size() < 8) return Status::Invalid("a deletion vector bitmap shorter than 8 bytes");
  const uint64_t count = GetLittleEndian(bytes, 0, 8);
  DeletionVector out;
  size_t at = 8;
  int64_t previous = -1;
  for (uint64_t i = 0; i < count; ++i) {
    if (bytes.size() - at < 4) return Status::Invalid("a deletion vector bitmap is truncated");
    const auto key = static_cast<uint32_t>(GetLittleEndian(bytes, at, 4));
    at += 4;
    if (static_cast<int64_t>(key) <= previous) {
      return Status::Invalid("the keys of a deletion vector bitmap are not ascending");
    }
    previous = key;
    const size_t size =
        roaring_bitmap_portable_deserialize_size(bytes.data() + at, bytes.size() - at);
    if (size == 0) return Status::Invalid("a deletion vector's bitmap of key ", key, " is corrupt");
    Bitmap bitmap(roaring_bitmap_portable_deserialize_safe(bytes.data() + at, bytes.size() - at));
    if (!bitmap) return Status::Invalid("a deletion vector's bitmap of key ", key, " is corrupt");
    at += size;
    out.buckets_[key] = std::move(bitmap);
  }
  if (at != bytes.size()) {
    return Status::Invalid("a deletion vector bitmap has ", bytes.size() - at, " trailing bytes");
  }
  return out;
}

std::string DeletionVector::EncodeBlob() {
  std::string body(kDeletionVectorMagic);
  body += SerializeBitmap();
  std::string out;
  PutBe32(out, static_cast<uint32_t>(body.size()));
  out += body;
  PutBe32(out, static_cast<uint32_t>(
                   crc32(0L, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  return out;
}

Result<DeletionVector> DeletionVector::DecodeBlob(std::string_view blob) {
  if (blob.size() < 12) return Status::Invalid("a deletion vector blob shorter than 12 bytes");
  const uint32_t length = GetBe32(blob, 0);
  if (length != blob.size() - 8) {
    return Status::Invalid("a deletion vector blob of ", blob.size(), " bytes declares ", length,
                           " bytes of magic and bitmap");
  }
  const std::string_view body = blob.substr(4, length);
  if (!body.starts_with(kDeletionVectorMagic)) {
    return Status::Invalid("a deletion vector blob lacks the magic bytes D1 D3 39 64");
  }
  const auto crc =
      static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(body.data()), body.size()));
  if (crc != GetBe32(blob, 4 + length)) {
    return Status::Invalid("a deletion vector blob's CRC-32 does not match its bytes");
  }
  return DeserializeBitmap(body.substr(kDeletionVectorMagic.size()));
}

}  // namespace weir::lake::iceberg
