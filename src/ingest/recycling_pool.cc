#include "ingest/recycling_pool.h"

#include <algorithm>
#include <cstring>

namespace weir::ingest {
namespace {

// Arrow's own buffers ask for 64-byte alignment; blocks are allocated with it, and requests
// for more bypass the recycling.
constexpr int64_t kAlignment = 64;

int64_t RoundUp(int64_t size) { return (size + kAlignment - 1) / kAlignment * kAlignment; }

// A large block's capacity: `size` rounded up to a quarter of its power of two (at most 25 %
// more), so that requests of about the same size (a part's column, a little longer than the
// last one's) ask for the same capacity and a freed block serves them. The part of a block
// beyond what is written is never touched, so costs no resident memory.
int64_t SizeClass(int64_t size) {
  const int64_t rounded = RoundUp(size);
  int64_t power = kAlignment;
  while (power * 2 <= rounded) power *= 2;
  const int64_t step = std::max<int64_t>(power / 4, kAlignment);
  return (rounded + step - 1) / step * step;
}

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
  const int64_t capacity = SizeClass(size);
  if (auto it = retained_.lower_bound(capacity);
      it != retained_.end() && it->first <= 2 * capacity) {
    *out = it->second.block;
    live_.emplace(it->second.block, it->first);
    retained_bytes_.fetch_sub(it->first);
    Allocated(it->first);
    retained_.erase(it);
    reuses_.fetch_add(1);
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(base_->Allocate(capacity, kAlignment, out));
  fresh_bytes_.fetch_add(capacity);
  live_.emplace(*out, capacity);
  Allocated(capacity);
  return arrow::Status::OK();
}

void RecyclingMemoryPool::ReleaseLocked(uint8_t* block, int64_t capacity) {
  Allocated(-capacity);
  if (capacity > retain_limit_) {
    base_->Free(block, capacity, kAlignment);
    return;
  }
  // The blocks freed longest ago make room: what a stage frees now is what it asks for next
  // (a block left from an earlier, different load would otherwise hold the room for good).
  while (retained_bytes_.load() + capacity > retain_limit_) EvictOldestLocked();
  retained_.emplace(capacity, Retained{block, next_age_++});
  retained_bytes_.fetch_add(capacity);
}

void RecyclingMemoryPool::EvictOldestLocked() {
  auto oldest = retained_.begin();
  for (auto it = retained_.begin(); it != retained_.end(); ++it) {
    if (it->second.age < oldest->second.age) oldest = it;
  }
  base_->Free(oldest->second.block, oldest->first, kAlignment);
  retained_bytes_.fetch_sub(oldest->first);
  retained_.erase(oldest);
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
  while (retained_bytes_.load() > retain_limit_ && !retained_.empty()) EvictOldestLocked();
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
