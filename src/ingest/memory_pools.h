// The Arrow memory pools of the ingest stages, so that what each holds is visible
// (weir_arrow_pool_bytes{stage}): decode (the record builders and the sealed parts queued for
// the flush threads) and encode (the Parquet writers: open row groups, pages, the casts and
// partition splits of the part being written). Both recycle their large blocks
// (ingest/recycling_pool.h) over Arrow's default pool, so a part's memory is not faulted in
// again for the next one; the decode pool keeps about a part (RetainDecodeBlocks), the encode
// pool about what each encode lane's row group grows through (RetainEncodeBlocks).
//
// Threading: thread-safe (the pools are); the pools live for the whole process (never
// destroyed, so no buffer can outlive its pool).
#pragma once

#include <arrow/memory_pool.h>

#include "ingest/recycling_pool.h"

namespace weir::ingest {

// Blocks smaller than this are not recycled (the builders' first growth steps, small pages).
inline constexpr int64_t kRecycledBlockBytes = 64 << 10;

inline RecyclingMemoryPool* DecodePool() {
  static auto* pool =
      new RecyclingMemoryPool(arrow::default_memory_pool(), kRecycledBlockBytes, 32 << 20);
  return pool;
}

inline RecyclingMemoryPool* EncodePool() {
  static auto* pool =
      new RecyclingMemoryPool(arrow::default_memory_pool(), kRecycledBlockBytes, 16 << 20);
  return pool;
}

// Bound what the pools keep for reuse: about one part per streaming dataset for decode (a
// part's builders are freed by the flush thread while the next part is built); for encode,
// what the open row groups' page sinks grow through, per encode lane.
inline void RetainDecodeBlocks(int64_t bytes) { DecodePool()->set_retain_bytes(bytes); }
inline void RetainEncodeBlocks(int64_t bytes) { EncodePool()->set_retain_bytes(bytes); }

}  // namespace weir::ingest
