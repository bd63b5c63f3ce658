// Process-wide resources of every Parquet writer (files::ParquetFileWriter): the Arrow memory
// pool it allocates from (its open row group's pages) and whether a row group's columns are
// encoded and compressed in parallel on Arrow's CPU thread pool. Set once at startup by the
// command that owns the process (weir ingest: the encode pool of ingest/memory_pools.h and
// encode_threads); unset: Arrow's default pool, columns on the caller's thread.
//
// Threading: set before any writer is created; read by writers on any thread.
#pragma once

#include <arrow/memory_pool.h>

namespace weir::files {

struct WriterDefaults {
  arrow::MemoryPool* pool = nullptr;  // null: arrow::default_memory_pool()
  bool parallel_columns = false;
};

void SetWriterDefaults(WriterDefaults defaults);
WriterDefaults GetWriterDefaults();

}  // namespace weir::files
