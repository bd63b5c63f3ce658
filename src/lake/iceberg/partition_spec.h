// Partition specs and sort orders (Appendix C JSON), the partition tuple type a spec gives a
// schema, and the partition paths Iceberg writes ("ts_day=2026-12-01/id_bucket=3").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "lake/iceberg/transform.h"
#include "lake/iceberg/types.h"
#include "lake/iceberg/value.h"

namespace weir::lake::iceberg {

// Partition field ids start here (the reference implementation's convention).
inline constexpr int kFirstPartitionFieldId = 1000;

struct PartitionField {
  int source_id = 0;
  int field_id = 0;
  std::string name;
  Transform transform;
  bool operator==(const PartitionField&) const = default;
};

struct PartitionSpec {
  int spec_id = 0;
  std::vector<PartitionField> fields;

  static Result<PartitionSpec> FromJson(const nlohmann::json& json);
  nlohmann::json ToJson() const;
  // Only the fields array, as manifests store it in their "partition-spec" metadata.
  nlohmann::json FieldsJson() const;

  bool is_unpartitioned() const { return fields.empty(); }
  // Same fields (source ids, transforms, names; field ids aside), as the spec defines
  // equivalence: writers reuse an equivalent spec instead of adding one.
  bool EquivalentTo(const PartitionSpec& other) const;
};

// The partition tuple's fields for `schema` (ids = partition field ids, types = result types).
// Refuses a source column that is missing or a transform that cannot apply to it.
Result<std::vector<NestedField>> PartitionType(const PartitionSpec& spec, const Schema& schema);

// "name=value/..." with each name and value escaped as Iceberg's reference implementation
// does; `values` are the partition tuple (one per spec field).
Result<std::string> PartitionPath(const PartitionSpec& spec, const Schema& schema,
                                  const std::vector<Value>& values);

// The partition tuple of one row: `row_values[i]` is the value of the source column of spec
// field i.
Result<std::vector<Value>> PartitionTuple(const PartitionSpec& spec, const Schema& schema,
                                          const std::vector<Value>& source_values);

enum class SortDirection { kAsc, kDesc };
enum class NullOrder { kNullsFirst, kNullsLast };

struct SortField {
  int source_id = 0;
  Transform transform;
  SortDirection direction = SortDirection::kAsc;
  NullOrder null_order = NullOrder::kNullsFirst;
  bool operator==(const SortField&) const = default;
};

struct SortOrder {
  int order_id = 0;  // 0 is the unsorted order
  std::vector<SortField> fields;

  static Result<SortOrder> FromJson(const nlohmann::json& json);
  nlohmann::json ToJson() const;
};

}  // namespace weir::lake::iceberg
