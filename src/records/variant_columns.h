// VARIANT companions (issue 14; millpond's MILLPOND_VARIANT_COLUMNS): each listed JSON-text
// column of a flush's batch is also written as `<column>_variant`, its values in the Parquet
// Variant encoding (records/variant_encoding.h), an Arrow `arrow.parquet.variant` extension
// column that the Parquet writer stamps VARIANT(1) and the lakes declare as `variant`. The keys
// common to a flush's objects are shredded into typed sub-columns (records/variant_shredding.h).
//
// Millpond's rules: the source column is kept as it is; a value that is not valid JSON nulls
// only the companion (counted); a payload field named `<column>_variant` in any case is
// dropped from the batch (counted) so that no record can write into a companion; a listed
// column absent from the batch gets no companion. A companion's column must be `variant` in
// the table: a live column of another type receives nulls (the writer's live-type rule).
//
// Threading: immutable after Make; Apply may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "base/status.h"
#include "records/variant_shredding.h"

namespace weir::records {

// The companion's Arrow type: struct<metadata: binary not null, value: binary not null> under
// Arrow's Parquet variant extension (unshredded).
std::shared_ptr<arrow::DataType> VariantType();
// The extension (unshredded) or the shredded struct<metadata, value, typed_value>, which Arrow's
// variant extension does not accept yet and the Parquet writer annotates VARIANT itself.
bool IsVariantType(const arrow::DataType& type);
bool IsShreddedVariantType(const arrow::DataType& type);

// Checks the listed names (millpond's rules): identifiers ([A-Za-z_][A-Za-z0-9_]*), not
// ending in `_variant` (in any case: list the source, not the companion), none twice (in any
// case). The error names the item.
Result<std::vector<std::string>> ParseVariantColumns(const std::vector<std::string>& items);

// What one batch's companions did.
struct VariantOutcome {
  int64_t encoded = 0;             // companion values written
  int64_t malformed = 0;           // source values that are not JSON: companion null
  int64_t collisions_dropped = 0;  // payload fields named like a companion, dropped
  int64_t shredded_keys = 0;       // typed sub-columns written
};

class VariantColumns {
 public:
  // `shred.max_keys` 0: companions are not shredded.
  static Result<VariantColumns> Make(std::vector<std::string> sources, ShredOptions shred = {});

  bool empty() const { return sources_.empty(); }
  const std::vector<std::string>& sources() const { return sources_; }

  // The batch without payload fields named `<source>_variant` and with a companion after each
  // present source (matched case-insensitively, as the lakes resolve names).
  Result<std::shared_ptr<arrow::RecordBatch>> Apply(std::shared_ptr<arrow::RecordBatch> batch,
                                                    VariantOutcome* outcome) const;

 private:
  std::vector<std::string> sources_;
  ShredOptions shred_;
};

}  // namespace weir::records
