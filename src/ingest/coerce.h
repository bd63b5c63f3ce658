// Values of a flush cast to the live column type of the table (the live type wins).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <arrow/array.h>

#include "base/status.h"
#include "lake/table.h"

namespace weir::ingest {

struct Coerced {
  std::shared_ptr<arrow::Array> array;
  int64_t nulled = 0;  // values that could not be represented in the live type
};

// The Arrow type weir writes for a column type.
std::shared_ptr<arrow::DataType> ArrowTypeOf(lake::ColumnType type);
// The column type of an inferred or typed Arrow type (int64, double, boolean, utf8,
// timestamp, arrow.uuid).
lake::ColumnType ColumnTypeOf(const arrow::DataType& type);

// The value at `i` as text, the way a VARCHAR column or a partition value holds it (numbers in
// their shortest round-tripping form, booleans as true/false); nullopt for null.
std::optional<std::string> ValueText(const arrow::Array& array, int64_t i);

// Casts `array` to `type`. Lossless conversions keep the value (int64 → double, any scalar →
// varchar, uuids → their canonical text in varchar, integral doubles and numeric text → bigint,
// numeric text → double, "true"/"false" → boolean, timestamp text (records/typed_text.h) →
// timestamptz, uuid text (base::Uuid::Parse) → uuid); a value that cannot be converted becomes
// null and is counted.
Result<Coerced> CoerceTo(const arrow::Array& array, lake::ColumnType type);

}  // namespace weir::ingest
