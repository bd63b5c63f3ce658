#include "ingest/upsert_rows.h"

#include <cctype>
#include <optional>
#include <unordered_map>

#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>

#include "base/text.h"
#include "decode/field_names.h"
#include "lake/row_keys.h"

namespace weir::ingest {
namespace {

// The members of a JSON object's text, without its braces; nullopt when it is not an object.
std::optional<std::string_view> Members(std::string_view json) {
  json = TrimSpace(json);
  if (json.size() < 2 || json.front() != '{' || json.back() != '}') return std::nullopt;
  return TrimSpace(json.substr(1, json.size() - 2));
}

int FindField(const arrow::Schema& schema, const std::string& name) {
  const std::string folded = decode::FoldName(name);
  for (int f = 0; f < schema.num_fields(); ++f) {
    if (decode::FoldName(schema.field(f)->name()) == folded) return f;
  }
  return -1;
}

Result<std::vector<std::shared_ptr<arrow::Array>>> KeyArrays(const arrow::RecordBatch& batch,
                                                             const std::vector<std::string>& key) {
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (const auto& column : key) {
    const int f = FindField(*batch.schema(), column);
    if (f >= 0) {
      arrays.push_back(batch.column(f));
    } else {
      WEIR_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(arrow::null(), batch.num_rows()));
      arrays.push_back(nulls);
    }
  }
  return arrays;
}

}  // namespace

Status WithKeyFields(std::string_view key, std::string_view value, std::string& out) {
  const auto key_members = Members(key);
  if (!key_members) {
    return ClassifiedError(ErrorClass::kBadData, "ingest", "upsert_key_not_object",
                           "the message key is not a JSON object (upsert.key_from kafka_key)");
  }
  const auto value_members = Members(value);
  if (!value_members) {
    return ClassifiedError(ErrorClass::kBadData, "decode", "not_an_object",
                           "the record is not a JSON object");
  }
  out.clear();
  out.reserve(key_members->size() + value_members->size() + 3);
  out += '{';
  out += *key_members;
  if (!key_members->empty() && !value_members->empty()) out += ',';
  out += *value_members;
  out += '}';
  return Status::OK();
}

Result<std::shared_ptr<arrow::RecordBatch>> WithTombstoneColumn(
    std::shared_ptr<arrow::RecordBatch> batch, const std::vector<bool>& tombstones) {
  if (static_cast<int64_t>(tombstones.size()) != batch->num_rows()) {
    return Status::Invalid("upsert flush of ", batch->num_rows(), " rows has ", tombstones.size(),
                           " tombstone flags");
  }
  arrow::BooleanBuilder builder;
  WEIR_RETURN_NOT_OK(builder.Reserve(batch->num_rows()));
  for (const bool t : tombstones) builder.UnsafeAppend(t);
  std::shared_ptr<arrow::Array> column;
  WEIR_RETURN_NOT_OK(builder.Finish(&column));
  return batch->AddColumn(batch->num_columns(), arrow::field(kTombstoneColumn, arrow::boolean()),
                          column);
}

Result<LastRows> LastRowPerKey(const std::shared_ptr<arrow::RecordBatch>& batch,
                               const std::vector<std::string>& key) {
  LastRows out;
  std::shared_ptr<arrow::RecordBatch> rows = batch;
  std::shared_ptr<arrow::BooleanArray> flags;
  if (const int t = rows->schema()->GetFieldIndex(kTombstoneColumn); t >= 0) {
    flags = std::static_pointer_cast<arrow::BooleanArray>(rows->column(t));
    WEIR_ASSIGN_OR_RAISE(rows, rows->RemoveColumn(t));
  }
  WEIR_ASSIGN_OR_RAISE(const auto arrays, KeyArrays(*rows, key));
  WEIR_ASSIGN_OR_RAISE(const auto keys, lake::EncodeRowKeys(arrays));
  std::unordered_map<std::string_view, int64_t> last;
  last.reserve(keys.size());
  for (size_t r = 0; r < keys.size(); ++r) last[keys[r]] = static_cast<int64_t>(r);
  std::vector<int64_t> kept;
  kept.reserve(last.size());
  for (size_t r = 0; r < keys.size(); ++r) {
    if (last[keys[r]] == static_cast<int64_t>(r)) kept.push_back(static_cast<int64_t>(r));
  }
  out.superseded = rows->num_rows() - static_cast<int64_t>(kept.size());
  for (const int64_t r : kept) {
    out.tombstones.push_back(flags != nullptr && flags->IsValid(r) && flags->Value(r));
  }
  if (out.superseded == 0) {
    out.rows = rows;
    return out;
  }
  arrow::Int64Builder indices;
  WEIR_RETURN_NOT_OK(indices.AppendValues(kept));
  WEIR_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
  WEIR_ASSIGN_OR_RAISE(auto taken,
                       arrow::compute::Take(arrow::Datum(rows), arrow::Datum(index_array)));
  out.rows = taken.record_batch();
  return out;
}

Result<std::shared_ptr<lake::KeyDeletes>> KeysOf(const arrow::RecordBatch& rows,
                                                 const std::vector<std::string>& key) {
  auto deletes = std::make_shared<lake::KeyDeletes>();
  deletes->columns = key;
  WEIR_ASSIGN_OR_RAISE(const auto arrays, KeyArrays(rows, key));
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (size_t k = 0; k < key.size(); ++k) fields.push_back(arrow::field(key[k], arrays[k]->type()));
  deletes->keys = arrow::RecordBatch::Make(arrow::schema(fields), rows.num_rows(), arrays);
  return deletes;
}

}  // namespace weir::ingest
