// The pre-write sort (millpond's MILLPOND_SORT_BY): each flush's rows ordered by the dataset's
// sort keys before they are split into files, so every file holds its rows in that order.
//
// Ascending or descending per key, left to right, stable (rows with equal keys keep their
// consume order), nulls last or first as the keys say (weir's configuration: ascending, nulls
// last, as pyarrow's sort). Keys resolve to columns as the field-name policy resolves names
// (ASCII case-insensitively). A uuid column (a fixed-size binary, or an extension type over
// one) sorts by its 16 bytes, which is the order of its canonical text.
//
// When a key names no column of the rows (no record of the flush carried it) the rows are left
// unsorted: reason `field_missing`; when a key's type has no sort (a nested type), reason
// `unsortable_type`. Both are counted per record by the caller, never an error: the flush still
// lands.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"
#include "lake/table_spec.h"

namespace weir::ingest {

struct RowSort {
  std::shared_ptr<arrow::RecordBatch> rows;  // sorted, or the input when skipped
  std::string skipped;                       // "", "field_missing" or "unsortable_type"
  std::vector<std::string> keys_at_fault;    // the missing or unsortable keys, in key order
};

// Sorts `rows` by `keys`; an empty key list returns the rows as they are.
Result<RowSort> SortRows(std::shared_ptr<arrow::RecordBatch> rows,
                         const std::vector<lake::SortKey>& keys);

}  // namespace weir::ingest
