#include "records/mapped_batch_builder.h"

#include <arrow/type.h>

#include "base/number_text.h"

namespace weir::records {
namespace {

using decode::ColumnKind;
using decode::DecodedValue;
using jmespath::Type;
using jmespath::Value;

// The decoded form of one result; `text` holds what must outlive the call (number literals,
// JSON text). Returns true when the value is an integer beyond int64 kept as a double.
bool Decode(const Value& value, std::string* text, DecodedValue* out) {
  *out = DecodedValue{};
  switch (value.type()) {
    case Type::kNull:
      return false;
    case Type::kBoolean:
      out->kind = ColumnKind::kBoolean;
      out->boolean = value.boolean();
      out->text = out->boolean ? "true" : "false";
      return false;
    case Type::kNumber:
      if (value.is_integer()) {
        out->kind = ColumnKind::kInt64;
        out->int64 = value.integer();
        *text = std::to_string(out->int64);
        out->text = *text;
        return false;
      }
      out->kind = ColumnKind::kDouble;
      out->real = value.number();
      *text = ShortestText(out->real);
      out->text = *text;
      return value.is_borrowed() && value.element().type() == simdjson::dom::element_type::UINT64;
    case Type::kString:
      out->kind = ColumnKind::kVarchar;
      out->text = value.string();  // borrowed from the document or the row: valid until Apply
      return false;
    case Type::kArray:
    case Type::kObject:
      out->kind = ColumnKind::kVarchar;
      text->clear();
      jmespath::AppendJson(value, text);
      out->text = *text;
      return false;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<MappedBatchBuilder>> MappedBatchBuilder::Make(
    std::shared_ptr<const jmespath::Mapping> mapping, decode::DecodeOptions options,
    arrow::MemoryPool* pool) {
  if (mapping == nullptr || mapping->size() == 0) {
    return Status::Invalid("a mapped batch needs a mapping with at least one column");
  }
  if (options.max_record_bytes == 0) return Status::Invalid("max_record_bytes must be > 0");
  return std::unique_ptr<MappedBatchBuilder>(
      new MappedBatchBuilder(std::move(mapping), options, pool));
}

MappedBatchBuilder::MappedBatchBuilder(std::shared_ptr<const jmespath::Mapping> mapping,
                                       decode::DecodeOptions options, arrow::MemoryPool* pool)
    : mapper_(std::move(mapping), options.max_record_bytes) {
  const size_t n = mapper_.mapping().size();
  for (size_t i = 0; i < n; ++i) columns_.push_back(std::make_unique<decode::ColumnBuilder>(pool));
  texts_.resize(n);
  values_.resize(n);
}

Status MappedBatchBuilder::Append(std::string_view json) {
  if (Status mapped = mapper_.Apply(json, &row_); !mapped.ok()) {
    if (const ErrorDetail* detail = GetErrorDetail(mapped)) ++stats_.rejected[detail->code()];
    return mapped;
  }
  int64_t lossy = 0;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (Decode(row_[i], &texts_[i], &values_[i])) ++lossy;
  }
  // Every value is decoded before any is appended: the row lands whole or not at all.
  for (size_t i = 0; i < columns_.size(); ++i) {
    WEIR_RETURN_NOT_OK(columns_[i]->Append(values_[i], rows_));
  }
  ++rows_;
  ++stats_.records;
  stats_.lossy_integers += lossy;
  return Status::OK();
}

int64_t MappedBatchBuilder::buffered_bytes() const {
  int64_t bytes = 0;
  for (const auto& column : columns_) bytes += column->buffered_bytes();
  return bytes;
}

Result<std::shared_ptr<arrow::RecordBatch>> MappedBatchBuilder::Finish() {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  const jmespath::Mapping& mapping = mapper_.mapping();
  for (size_t i = 0; i < columns_.size(); ++i) {
    WEIR_ASSIGN_OR_RAISE(auto array, columns_[i]->Finish(rows_));
    fields.push_back(arrow::field(mapping.column(i).column, array->type()));
    arrays.push_back(std::move(array));
  }
  auto batch = arrow::RecordBatch::Make(arrow::schema(std::move(fields)), rows_, std::move(arrays));
  rows_ = 0;
  return batch;
}

}  // namespace weir::records
