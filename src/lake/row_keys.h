// The canonical bytes of a row's key: what an upsert compares keys by, in the pipeline (the
// last record per key of a flush) and in a format's delete planning (the live rows of a key).
//
// Equal values encode equally across integer widths (int8..uint64 as int64), float widths (as
// double, -0 as 0), string and binary kinds, timestamp units (as microseconds) and extension
// types (by their storage); a null is its own value. Pure functions, any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>

#include "base/status.h"

namespace weir::lake {

// One string per row of `columns` (equal lengths), the key columns in order.
Result<std::vector<std::string>> EncodeRowKeys(
    const std::vector<std::shared_ptr<arrow::Array>>& columns);

// `column` in its canonical Arrow type (int64, double, boolean, binary); what EncodeRowKeys
// encodes, and what a format compares with its column statistics.
Result<std::shared_ptr<arrow::Array>> CanonicalKeyColumn(
    const std::shared_ptr<arrow::Array>& column);

}  // namespace weir::lake
