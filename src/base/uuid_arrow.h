// uuid columns in Arrow: Arrow's canonical uuid extension type (`arrow.uuid`, the 16
// big-endian bytes in a fixed_size_binary(16)). Parquet writes it as FIXED_LEN_BYTE_ARRAY(16)
// with the UUID logical type, which DuckDB reads as UUID and Iceberg readers bind as uuid;
// the bare fixed_size_binary(16) would land as a blob.
#pragma once

#include <cstdint>
#include <memory>

#include <arrow/array.h>
#include <arrow/type.h>

#include "base/status.h"
#include "base/uuid.h"

namespace weir {

// arrow.uuid.
std::shared_ptr<arrow::DataType> UuidArrowType();
bool IsUuidArrowType(const arrow::DataType& type);

// Row `i` of an arrow.uuid array (or of its fixed_size_binary(16) storage); not null.
Uuid UuidAt(const arrow::Array& array, int64_t i);

// The arrow.uuid array over `storage`, a fixed_size_binary(16) array.
Result<std::shared_ptr<arrow::Array>> UuidArrayOf(std::shared_ptr<arrow::Array> storage);

// `array` as arrow.uuid: each utf8 value parsed with Uuid::TryParse; a value that does not
// parse, and every value of an array that is not utf8, becomes null and is added to `nulled`
// (nulls stay null, uncounted).
Result<std::shared_ptr<arrow::Array>> ParseUuidArray(const arrow::Array& array, int64_t* nulled);

}  // namespace weir
