// The bloom-filter sidecar of an uploaded WAL file (`wal.bloom_sidecar`, issue 13; the format
// is docs/WAL_BLOOM_SIDECAR.md): `wal-<uuid>.bloom` next to its data object
// `wal-<uuid>.parquet`, a small Parquet file with one row per (row group, listed column) whose
// data file chunk carries a split-block bloom filter, holding that filter's bytes as Parquet
// stores them (its Thrift header, then its bitset), and the data object's name and size in the
// file's key-value metadata, so that a reader probes a data file's row groups without opening
// it. Written by the uploader after its data object; never read by recovery or the committer
// (it can never be the only evidence of a commit); `weir maintain`'s orphan sweep keeps it
// while its data file is referenced.
//
// Threading: free functions, no shared state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/buffer.h>
#include <parquet/bloom_filter.h>

#include "base/status.h"

namespace weir::wal {

inline constexpr std::string_view kBloomSidecarFormat = "weir-bloom-sidecar/1";

struct BloomSidecarFilter {
  int32_t row_group = 0;
  int64_t row_group_rows = 0;
  std::string column;  // the data file's column path (dot-joined), as the file spells it
  std::string filter;  // the serialized split-block filter: Thrift BloomFilterHeader + bitset
};

struct BloomSidecar {
  std::string data_file;  // the data object's file name (`wal-<uuid>.parquet`), same directory
  int64_t data_file_size = 0;
  std::vector<std::string> columns;  // the dataset's bloom_filter_columns, as configured
  std::vector<BloomSidecarFilter> filters;
};

// `…/wal-<uuid>.parquet` → `…/wal-<uuid>.bloom`.
std::string BloomSidecarPath(std::string_view data_path);
// The data object a sidecar's path names (`…/wal-<uuid>.bloom` → `…/wal-<uuid>.parquet`);
// nullopt when `path` is not a sidecar's.
std::optional<std::string> BloomSidecarDataPath(std::string_view path);

// The filters of the local Parquet file `path` for `columns` (top-level names, matched in any
// case like files::MakeWriterProperties), read with Arrow's parquet::BloomFilterReader.
Result<BloomSidecar> ReadBloomSidecar(const std::string& path,
                                      const std::vector<std::string>& columns,
                                      std::string data_file, int64_t data_file_size);

Result<std::shared_ptr<arrow::Buffer>> EncodeBloomSidecar(const BloomSidecar& sidecar);
Result<BloomSidecar> DecodeBloomSidecar(std::shared_ptr<arrow::Buffer> bytes);

// The filter of one entry, to probe (`filter.FindHash(filter.Hash(value))`).
Result<parquet::BlockSplitBloomFilter> OpenBloomFilter(const BloomSidecarFilter& entry);

}  // namespace weir::wal
