// Iceberg's per-file metrics from a Parquet footer: column sizes, value, null and NaN counts,
// and lower/upper bounds (Appendix D bytes), keyed by the Iceberg field ids the Parquet schema
// carries as field ids (weir's writer sets them: files::WithFieldIds).
#pragma once

#include <memory>
#include <string>

#include <arrow/filesystem/filesystem.h>
#include <parquet/metadata.h>

#include "base/status.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/types.h"

namespace weir::lake::iceberg {

struct MetricsOptions {
  // Iceberg's default metrics mode, truncate(16): string and binary bounds keep 16 code
  // points (bytes); the upper bound is rounded up so it still bounds the column.
  int truncate_length = 16;
  // When the writer knows no float or double value is NaN (JSON has no NaN), NaN counts are
  // recorded as 0; otherwise they are left out (unknown), as Parquet's statistics lack them.
  bool values_never_nan = false;
};

// Fills the metrics of `file` (record count, column sizes, counts, bounds, split offsets) from
// a Parquet footer. A leaf column without a field id, or whose id the schema lacks, is an
// error: readers would not be able to map it.
Status AddParquetMetrics(const parquet::FileMetaData& footer, const Schema& schema,
                         const MetricsOptions& options, DataFile& file);

// Reads the footer of a Parquet file.
Result<std::shared_ptr<parquet::FileMetaData>> ReadParquetFooter(arrow::fs::FileSystem& fs,
                                                                 const std::string& path);

// The smallest string of at most `length` code points that is ≥ every string with the prefix
// of `value` (Iceberg's truncated upper bound); nullopt when no such string exists.
std::optional<std::string> TruncateUpperString(const std::string& value, int length);
std::optional<std::string> TruncateUpperBinary(const std::string& value, int length);

}  // namespace weir::lake::iceberg
