// DuckLake's text forms: column statistics, partition values and partition directory names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <arrow/array.h>

#include "base/status.h"
#include "lake/table.h"
#include "lake/table_spec.h"

namespace weir::lake::ducklake {

// The catalog text of a Parquet statistic (as files::ColumnStats gives it) for a column type:
// booleans as 0/1, timestamps as "YYYY-MM-DD HH:MM:SS[.ffffff]+00", the rest unchanged (uuids
// are already their canonical text, as DuckDB records them).
std::optional<std::string> StatText(ColumnType type, const std::optional<std::string>& parquet);

// UTC text of a timestamp in microseconds since the epoch, the way DuckDB prints TIMESTAMPTZ.
std::string TimestampText(int64_t micros);

// The partition value of a timestamp under a transform, with DuckLake's semantics: year is the
// calendar year, month 1-12, day the day of the month, hour 0-23 (UTC).
std::string TimestampPartitionValue(TransformKind transform, int64_t micros);

// Orders two catalog statistics of a column type: negative, zero or positive.
int CompareStat(ColumnType type, const std::string& a, const std::string& b);

// The partition value of row `i` of `array` under `key`'s transform, as DuckLake writes it:
// time transforms of timestamps (TimestampPartitionValue), identity as the value's text
// (timestamps as TimestampText, uuids as their canonical text); nullopt for null. Time transforms
// of other types are Invalid.
Result<PartitionValue> PartitionValueText(const arrow::Array& array, int64_t i,
                                          const PartitionKey& key);

// Hive-style directory component ("year=2024", "team_id=a%20b", "k=__HIVE_DEFAULT_PARTITION__").
std::string PartitionDirectory(const PartitionKey& key, const std::optional<std::string>& value);

}  // namespace weir::lake::ducklake
