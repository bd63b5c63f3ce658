#include "ingest/recycling_pool.h"

#include <algorithm>
#include <cstring>

namespace weir::ingest {
namespace {

// Arrow's own buffers ask for 64-byte alignment; blocks are allocated with it, and requests
// for more bypass the recycling.
constexpr int64_t kAlignment = 64;

int64_t RoundUp(int64_t size) { return (size + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

RecyclingMemoryPool::RecyclingMemoryPool(arrow::MemoryPool* base, int64_t min_block,
                                         int64_t retain_bytes)
    : base_(base),
      min_block_(std::max<int64_t>(min_block, kAlignment)),
      retain_limit_(retain_bytes) {}

RecyclingMemoryPool::~RecyclingMemoryPool() { ReleaseUnused(); }

void RecyclingMemoryPool::Allocated(int64_t bytes) {
  const int64_t now = bytes_allocated_.fetch_add(bytes) + bytes;
  if (bytes > 0) total_bytes_allocated_.fetch_add(bytes);
  int64_t max = max_memory_.load();
  while (now > max && !max_memory_.compare_exchange_weak(max, now)) {
  }
}

arrow::Status RecyclingMemoryPool::TakeLocked(int64_t size, uint8_t** out) {
  const int64_t capacity = RoundUp(size);
  if (auto it = retained_.lower_bound(capacity);
      it != retained_.end() && it->first <= 2 * capacity) {
    *out = it->second;
    live_.emplace(it->second, it->first);
    retained_bytes_.fetch_sub(it->first);
    Allocated(it->first);
    retained_.erase(it);
    reuses_.fetch_add(1);
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(base_->Allocate(capacity, kAlignment, out));
  live_.emplace(*out, capacity);
  Allocated(capacity);
  return arrow::Status::OK();
}

void RecyclingMemoryPool::ReleaseLocked(uint8_t* block, int64_t capacity) {
  Allocated(-capacity);
  if (retained_bytes_.load() + capacity <= retain_limit_) {
    retained_.emplace(capacity, block);
    retained_bytes_.fetch_add(capacity);
    return;
  }
  base_->Free(block, capacity, kAlignment);
}

arrow::Status RecyclingMemoryPool::Allocate(int64_t size, int64_t alignment, uint8_t** out) {
  num_allocations_.fetch_add(1);
  if (size < min_block_ || alignment > kAlignment) {
    ARROW_RETURN_NOT_OK(base_->Allocate(size, alignment, out));
    Allocated(size);
    return arrow::Status::OK();
  }
  std::lock_guard lock(mutex_);
  return TakeLocked(size, out);
}

arrow::Status RecyclingMemoryPool::Reallocate(int64_t old_size, int64_t new_size, int64_t alignment,
                                              uint8_t** ptr) {
  std::unique_lock lock(mutex_);
  if (auto it = live_.find(*ptr); it != live_.end()) {
    if (new_size <= it->second) return arrow::Status::OK();  // within its capacity
    uint8_t* grown = nullptr;
    ARROW_RETURN_NOT_OK(TakeLocked(new_size, &grown));
    std::memcpy(grown, *ptr, static_cast<size_t>(std::min(old_size, new_size)));
    const int64_t capacity = it->second;
    live_.erase(it);
    ReleaseLocked(*ptr, capacity);
    *ptr = grown;
    return arrow::Status::OK();
  }
  if (new_size < min_block_ || alignment > kAlignment) {
    lock.unlock();
    ARROW_RETURN_NOT_OK(base_->Reallocate(old_size, new_size, alignment, ptr));
    Allocated(new_size - old_size);
    return arrow::Status::OK();
  }
  // A small block grown past min_block_: from now on a recycled one.
  uint8_t* grown = nullptr;
  ARROW_RETURN_NOT_OK(TakeLocked(new_size, &grown));
  lock.unlock();
  std::memcpy(grown, *ptr, static_cast<size_t>(std::min(old_size, new_size)));
  base_->Free(*ptr, old_size, alignment);
  Allocated(-old_size);
  *ptr = grown;
  return arrow::Status::OK();
}

void RecyclingMemoryPool::Free(uint8_t* buffer, int64_t size, int64_t alignment) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = live_.find(buffer); it != live_.end()) {
      const int64_t capacity = it->second;
      live_.erase(it);
      ReleaseLocked(buffer, capacity);
      return;
    }
  }
  base_->Free(buffer, size, alignment);
  Allocated(-size);
}

void RecyclingMemoryPool::TrimLocked() {
  // The largest blocks go first: they are the ones most likely to be outgrown.
  while (retained_bytes_.load() > retain_limit_ && !retained_.empty()) {
    auto last = std::prev(retained_.end());
    base_->Free(last->second, last->first, kAlignment);
    retained_bytes_.fetch_sub(last->first);
    retained_.erase(last);
  }
}

void RecyclingMemoryPool::set_retain_bytes(int64_t retain_bytes) {
  std::lock_guard lock(mutex_);
  retain_limit_ = retain_bytes;
  TrimLocked();
}

void RecyclingMemoryPool::ReleaseUnused() {
  std::lock_guard lock(mutex_);
  const int64_t limit = retain_limit_;
  retain_limit_ = 0;
  TrimLocked();
  retain_limit_ = limit;
  base_->ReleaseUnused();
}

}  // namespace weir::ingest
