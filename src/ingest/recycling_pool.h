// An Arrow memory pool that keeps the large blocks freed into it and hands them out again, so
// that a stage which builds a part, lets it go and builds the next of about the same size does
// not fault its memory in again for every part.
//
// Why: the decode builders grow from nothing after every part (16 MiB of Arrow memory by
// default), and the allocator returns freed pages to the kernel in between; the next part's
// builders then take page faults and the kernel zeroes every page again. Measured on the
// reference events, that was 21 % of the poll thread's CPU (bench/README.md, issue 12). A
// process-wide "keep freed pages" allocator option buys the same CPU with ~100 MiB more RSS;
// this pool keeps at most `retain_bytes`, only of the blocks its own stage frees.
//
// Blocks of at least `min_block` bytes are recycled. Their capacity is the request rounded up
// to a quarter of its power of two (so that requests of about one size share a capacity); a
// request takes the smallest retained block that holds it and is at most twice its size (or
// allocates from `base`); a block grown within its capacity stays where it is. A freed block
// is retained; while the retained bytes would exceed `retain_bytes`, the blocks freed longest
// ago go back to `base` (a block larger than the bound goes at once). Smaller requests go to
// `base` directly. bytes_allocated() counts the capacity of the blocks handed out and of the
// small requests; retained_bytes() what is kept for reuse (resident as far as it was written:
// count both for RSS).
//
// Threading: thread-safe (one mutex around the large-block bookkeeping; small requests do not
// take it unless a block of theirs is being grown past `min_block`).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include <arrow/memory_pool.h>

namespace weir::ingest {

class RecyclingMemoryPool final : public arrow::MemoryPool {
 public:
  RecyclingMemoryPool(arrow::MemoryPool* base, int64_t min_block, int64_t retain_bytes);
  ~RecyclingMemoryPool() override;

  using arrow::MemoryPool::Allocate;
  using arrow::MemoryPool::Free;
  using arrow::MemoryPool::Reallocate;
  arrow::Status Allocate(int64_t size, int64_t alignment, uint8_t** out) override;
  arrow::Status Reallocate(int64_t old_size, int64_t new_size, int64_t alignment,
                           uint8_t** ptr) override;
  void Free(uint8_t* buffer, int64_t size, int64_t alignment) override;
  // Returns every retained block to `base`.
  void ReleaseUnused() override;

  int64_t bytes_allocated() const override { return bytes_allocated_.load(); }
  int64_t max_memory() const override { return max_memory_.load(); }
  int64_t total_bytes_allocated() const override { return total_bytes_allocated_.load(); }
  int64_t num_allocations() const override { return num_allocations_.load(); }
  std::string backend_name() const override { return base_->backend_name(); }

  // Bytes of freed blocks kept for reuse.
  int64_t retained_bytes() const { return retained_bytes_.load(); }
  // Requests served from a retained block (for tests and the benchmark's evidence).
  int64_t reuses() const { return reuses_.load(); }
  // Bytes of the large blocks taken from `base` (not served from a retained one): what the
  // kernel may have had to fault in and zero.
  int64_t fresh_bytes() const { return fresh_bytes_.load(); }
  // Changes the retention bound (blocks over it are returned at once).
  void set_retain_bytes(int64_t retain_bytes);

 private:
  // A block of at least `size` bytes: a retained one, or a new one from base_. Locked.
  arrow::Status TakeLocked(int64_t size, uint8_t** out);
  // Keeps `block` of `capacity` bytes for reuse, or returns it to base_. Locked.
  void ReleaseLocked(uint8_t* block, int64_t capacity);
  void TrimLocked();
  void EvictOldestLocked();  // returns the block freed longest ago to base_. Locked.
  void Allocated(int64_t bytes);

  arrow::MemoryPool* base_;
  const int64_t min_block_;
  std::mutex mutex_;
  int64_t retain_limit_;                        // GUARDED_BY(mutex_)
  std::unordered_map<uint8_t*, int64_t> live_;  // GUARDED_BY(mutex_): large block → capacity
  struct Retained {
    uint8_t* block;
    uint64_t age;  // when it was freed (a counter)
  };
  std::multimap<int64_t, Retained> retained_;  // GUARDED_BY(mutex_): capacity → block
  uint64_t next_age_ = 0;                      // GUARDED_BY(mutex_)
  std::atomic<int64_t> retained_bytes_{0};
  std::atomic<int64_t> bytes_allocated_{0};
  std::atomic<int64_t> max_memory_{0};
  std::atomic<int64_t> total_bytes_allocated_{0};
  std::atomic<int64_t> num_allocations_{0};
  std::atomic<int64_t> reuses_{0};
  std::atomic<int64_t> fresh_bytes_{0};
};

}  // namespace weir::ingest
