// Shredding of a flush's VARIANT companion (parquet-format VariantShredding.md): the top-level
// keys common to the flush's objects become typed sub-columns (`typed_value.<key>.typed_value`,
// int64, double, string or boolean), so readers can skip the binary for them; every value that
// does not fit its key's type (an integer beyond INT64, a decimal, a null, a string in an int64
// key) goes to that key's `value` instead, so no value can poison a typed column; keys that
// are not shredded stay in the row's residual `value` object.
//
// Threading: pure functions.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/array.h>

#include "base/status.h"
#include "records/variant_encoding.h"

namespace weir::records {

enum class ShredType { kInt64, kDouble, kString, kBoolean };

struct ShreddedKey {
  std::string name;
  ShredType type = ShredType::kString;
};

struct ShredOptions {
  double min_share = 0.5;  // a key is common when at least this share of objects has it
  size_t max_keys = 64;    // at most this many keys (the most common) per flush
};

// The keys to shred for these rows (nullopt: a null companion), in name order.
std::vector<ShreddedKey> ChooseShreddedKeys(const std::vector<std::optional<VariantBytes>>& rows,
                                            const ShredOptions& options);

// The companion column: unshredded (Arrow's variant extension) when `keys` is empty, else the
// shredded struct<metadata, value, typed_value> that the Parquet writer annotates VARIANT.
Result<std::shared_ptr<arrow::Array>> BuildVariantColumn(
    const std::vector<std::optional<VariantBytes>>& rows, const std::vector<ShreddedKey>& keys);

// One field of an encoded Variant object: its key and its encoded value.
struct VariantField {
  std::string_view key;
  std::string_view value;
  uint32_t id = 0;
};

// The fields of `value` when it is an object (else nullopt), in field-id (key) order.
std::optional<std::vector<VariantField>> ObjectFields(std::string_view metadata,
                                                      std::string_view value);

}  // namespace weir::records
