// The field-name policy: which JSON keys may become column names, under which name, and how
// names resolve to columns. One policy for every destination (DuckLake today, Iceberg next),
// applied identically when a table is created, when columns are added and when rows are
// appended, so no key of any record can make a catalog refuse a schema change.
//
// Resolution is case-insensitive (ASCII), the way the destinations' readers resolve names:
// DuckDB and DuckLake compare identifiers case-insensitively (a table cannot hold both `Seq`
// and `seq`), and Iceberg readers such as Spark (spark.sql.caseSensitive=false by default),
// Trino (lower-cases every name) and DuckDB's iceberg extension resolve case-insensitively, so
// an Iceberg table with both spellings could not be read by them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace weir::decode {

// The reserved per-flush commit timestamp column.
inline constexpr std::string_view kInsertedAtColumn = "_inserted_at";

// Why a key is not accepted as a column name (also the counter label).
enum class FieldNameProblem { kInvalidCharacters, kTooLong, kReserved };

std::string_view ToString(FieldNameProblem problem);

// The policy's verdict on one key.
struct FieldNameCheck {
  std::optional<FieldNameProblem> problem;  // set: the key is dropped and counted
  bool renamed = false;                     // the key is written as RenamedFieldName(key)
};

// Keys must match [A-Za-z_][A-Za-z0-9_]* and be at most `max_length` bytes. Dropped as
// reserved, in any case: weir's `_inserted_at` and every `_ducklake_internal*` name (DuckLake's
// own columns). Renamed, in any case: `row_id`, `begin_snapshot` and `end_snapshot`, which
// DuckLake refuses as column names while data inlining is on (its default); they are written
// as RenamedFieldName(key), which must also fit `max_length`.
FieldNameCheck CheckFieldName(std::string_view name, size_t max_length);

// The column name of a renamed key: the key with "_" appended (`row_id` → `row_id_`).
std::string RenamedFieldName(std::string_view name);

// The form under which destinations resolve a name: ASCII lower case. Two names with the same
// folded form are the same column.
std::string FoldName(std::string_view name);

// True when `a` and `b` resolve to the same column.
bool SameColumnName(std::string_view a, std::string_view b);

}  // namespace weir::decode
