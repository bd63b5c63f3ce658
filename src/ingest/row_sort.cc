#include "ingest/row_sort.h"

#include <mutex>

#include <arrow/array.h>
#include <arrow/compute/api_vector.h>
#include <arrow/compute/initialize.h>
#include <arrow/datum.h>
#include <arrow/extension_type.h>

#include "base/check.h"
#include "decode/field_names.h"

namespace weir::ingest {
namespace {

// The array a sort kernel can order: an extension array's storage (a uuid's 16 bytes).
std::shared_ptr<arrow::Array> Sortable(const std::shared_ptr<arrow::Array>& array) {
  if (array->type_id() == arrow::Type::EXTENSION) {
    return static_cast<const arrow::ExtensionArray&>(*array).storage();
  }
  return array;
}

bool HasSort(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DECIMAL128:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<RowSort> SortRows(std::shared_ptr<arrow::RecordBatch> rows,
                         const std::vector<lake::SortKey>& keys) {
  RowSort out;
  out.rows = rows;
  if (keys.empty()) return out;
  static std::once_flag compute_ready;
  std::call_once(compute_ready, [] {
    // Registers libarrow_compute's kernels (sort_indices, take); fails only when broken.
    WEIR_CHECK(arrow::compute::Initialize().ok());
  });
  std::vector<std::shared_ptr<arrow::Array>> columns;
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<arrow::compute::SortKey> sort_keys;
  std::vector<std::string> missing, unsortable;
  for (const auto& key : keys) {
    const std::string folded = decode::FoldName(key.column);
    int found = -1;
    for (int c = 0; c < rows->num_columns(); ++c) {
      if (decode::FoldName(rows->schema()->field(c)->name()) == folded) found = c;
    }
    if (found < 0) {
      missing.push_back(key.column);
      continue;
    }
    auto array = Sortable(rows->column(found));
    if (!HasSort(*array->type())) {
      unsortable.push_back(key.column);
      continue;
    }
    const std::string name = "k" + std::to_string(columns.size());
    fields.push_back(arrow::field(name, array->type()));
    columns.push_back(std::move(array));
    sort_keys.emplace_back(name,
                           key.descending ? arrow::compute::SortOrder::Descending
                                          : arrow::compute::SortOrder::Ascending,
                           key.nulls_first ? arrow::compute::NullPlacement::AtStart
                                           : arrow::compute::NullPlacement::AtEnd);
  }
  if (!missing.empty()) {
    out.skipped = "field_missing";
    out.keys_at_fault = std::move(missing);
    return out;
  }
  if (!unsortable.empty()) {
    out.skipped = "unsortable_type";
    out.keys_at_fault = std::move(unsortable);
    return out;
  }
  if (rows->num_rows() < 2) return out;
  const auto key_rows = arrow::RecordBatch::Make(arrow::schema(fields), rows->num_rows(), columns);
  arrow::compute::SortOptions options(sort_keys);
  // sort_indices is a stable sort: rows with equal keys keep their order.
  WEIR_ASSIGN_OR_RAISE(auto indices, arrow::compute::SortIndices(arrow::Datum(key_rows), options));
  WEIR_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(arrow::Datum(rows), arrow::Datum(indices)));
  out.rows = taken.record_batch();
  return out;
}

}  // namespace weir::ingest
