// A dataset's mapping setting (column → JMESPath expression) compiled once at startup.
//
// Called by the settings' validation (so `weir check` refuses what `weir ingest` would) and by
// `weir ingest` to build the Mapping its pipeline shares. Columns are taken in name order.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "records/jmespath/mapping.h"

namespace weir::records {

// Every column name must be one the field-name policy accepts as is (decode/field_names.h:
// `[A-Za-z_][A-Za-z0-9_]*`, at most `max_name_length` bytes, not reserved and not renamed),
// no two may resolve to the same column (case-insensitively), and every expression must
// compile. A fatal error naming the column (and the expression) otherwise.
Result<std::shared_ptr<const jmespath::Mapping>> CompileDatasetMapping(
    const std::map<std::string, std::string>& columns, size_t max_name_length = 63);

}  // namespace weir::records
