// The Arrow memory pools of the ingest stages, so that what each holds is visible
// (weir_arrow_pool_bytes{stage}): decode (the record builders and the sealed parts queued for
// the flush threads) and encode (the Parquet writers: open row groups, pages, the casts and
// partition splits of the part being written). Both forward to Arrow's default pool.
//
// Threading: thread-safe (Arrow pools are); the pools live for the whole process (never
// destroyed, so no buffer can outlive its pool).
#pragma once

#include <arrow/memory_pool.h>

namespace weir::ingest {

inline arrow::MemoryPool* DecodePool() {
  static auto* pool = new arrow::ProxyMemoryPool(arrow::default_memory_pool());
  return pool;
}

inline arrow::MemoryPool* EncodePool() {
  static auto* pool = new arrow::ProxyMemoryPool(arrow::default_memory_pool());
  return pool;
}

}  // namespace weir::ingest
