// What a lake table is made of, format-neutrally: column types, partition transforms, sort keys
// and the spec a catalog opens or creates a table from. DuckLake and Iceberg map these onto
// their own metadata; a format refuses (at startup, through Catalog::CheckSpec) what it cannot
// represent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace weir::lake {

// Column types weir writes (the JSON kinds, the per-flush commit timestamp and typed columns'
// uuid: 16 bytes, written as Parquet's UUID logical type), and the narrower numeric types a
// table made by another writer may hold (kInteger: 32-bit, kFloat: 32-bit), which weir
// promotes before writing wider values into them.
// kOther is a live column of a type weir does not write: weir leaves it null in its files.
enum class ColumnType {
  kBoolean,
  kInteger,
  kBigint,
  kFloat,
  kDouble,
  kVarchar,
  kTimestampTz,
  kUuid,
  kVariant,  // a Parquet Variant (records/variant_columns.h); DuckLake `variant`
  kOther
};

std::string_view ToString(ColumnType type);

// The type `from` can be promoted to so that it holds values of `to` without loss (int→bigint,
// float→double), or nullopt when no promotion is possible (or none is needed).
std::optional<ColumnType> PromotionFor(ColumnType from, ColumnType to);

struct Column {
  int64_t id = 0;  // the table's column id (field id), written as the Parquet field id
  std::string name;
  ColumnType type = ColumnType::kVarchar;
};

// A column to add: its name and type (the table assigns the id).
using NewColumn = std::pair<std::string, ColumnType>;

// A partition transform. Identity, year, month, day and hour exist in every format; bucket[N]
// and truncate[W] are Iceberg's (DuckLake refuses them at startup).
enum class TransformKind { kIdentity, kYear, kMonth, kDay, kHour, kBucket, kTruncate };

struct Transform {
  TransformKind kind = TransformKind::kIdentity;
  int32_t parameter = 0;  // N of bucket[N], W of truncate[W]; 0 otherwise
  bool operator==(const Transform&) const = default;
  bool IsTime() const;  // year, month, day or hour
};

// The one parser of transform text (the configuration, DuckLake's catalog rows and Iceberg
// metadata all come here): "identity", "year", "month", "day", "hour", "bucket[N]",
// "truncate[W]" with 1 ≤ N, W ≤ 2^31-1; blanks around the name and the number are ignored.
// The message names the text; callers add the setting it came from.
Result<Transform> ParseTransform(std::string_view text);
// As ParseTransform, but a name that is none of those is nullopt rather than an error, for a
// format that keeps other engines' transforms (Iceberg's void, zorder, ...). A known name with
// a bad parameter ("bucket[0]") is still an error.
Result<std::optional<Transform>> ParseKnownTransform(std::string_view text);
std::string ToString(const Transform& transform);

// One partition key: a transform of a column.
struct PartitionKey {
  std::string column;
  Transform transform;
  bool operator==(const PartitionKey&) const = default;
};

// "team_id" for identity, else "month(_inserted_at)", "bucket[16](user_id)".
std::string ToString(const PartitionKey& key);
// "(k1, k2)".
std::string ToString(const std::vector<PartitionKey>& keys);

// One sort key of the files' rows (Iceberg's sort order; DuckLake refuses them).
struct SortKey {
  std::string column;
  bool descending = false;
  bool nulls_first = true;
  bool operator==(const SortKey&) const = default;
};

// What a catalog opens or creates a table from.
struct TableSpec {
  std::string schema;  // DuckLake schema, Iceberg namespace
  std::string table;
  // The columns a created table starts with (weir adds `_inserted_at`); ignored when the table
  // exists.
  std::vector<NewColumn> columns;
  // The layout asked for; a live table laid out differently is refused (see Catalog::OpenTable).
  std::vector<PartitionKey> partitioning;
  std::vector<SortKey> sort_keys;
  // Iceberg: an upsert's deletes as deletion vectors (upsert.iceberg_deletes:
  // deletion_vectors). A created table is format version 3; an older existing one is refused.
  bool deletion_vectors = false;
};

}  // namespace weir::lake
