#include "decode/column_builder.h"

#include <algorithm>
#include <string>

#include "base/number_text.h"

namespace weir::decode {

ColumnBuilder::ColumnBuilder(arrow::MemoryPool* pool)
    : pool_(pool), builder_(std::make_unique<arrow::NullBuilder>(pool)) {}

Status ColumnBuilder::Append(const DecodedValue& value, int64_t row) {
  const ColumnKind joined = Join(kind_, value.kind);
  if (joined != kind_) WEIR_RETURN_NOT_OK(Promote(joined));
  const int64_t gap = row - builder_->length();
  if (gap > 0) WEIR_RETURN_NOT_OK(builder_->AppendNulls(gap));
  return AppendValue(value);
}

Status ColumnBuilder::AppendValue(const DecodedValue& value) {
  if (value.kind == ColumnKind::kNull) return builder_->AppendNull();
  switch (kind_) {
    case ColumnKind::kBoolean:
      return static_cast<arrow::BooleanBuilder&>(*builder_).Append(value.boolean);
    case ColumnKind::kInt64:
      return static_cast<arrow::Int64Builder&>(*builder_).Append(value.int64);
    case ColumnKind::kDouble:
      return static_cast<arrow::DoubleBuilder&>(*builder_).Append(
          value.kind == ColumnKind::kInt64 ? static_cast<double>(value.int64) : value.real);
    case ColumnKind::kVarchar:
      return static_cast<arrow::StringBuilder&>(*builder_).Append(value.text);
    case ColumnKind::kNull:
      break;
  }
  return Status::Invalid("internal: value of kind ", ToString(value.kind), " for a column of kind ",
                         ToString(kind_));
}

Status ColumnBuilder::Promote(ColumnKind to) {
  std::shared_ptr<arrow::Array> old;
  WEIR_RETURN_NOT_OK(builder_->Finish(&old));
  std::unique_ptr<arrow::ArrayBuilder> builder;
  WEIR_RETURN_NOT_OK(arrow::MakeBuilder(pool_, ArrowType(to), &builder));
  // Reserve what the last batch reached (and an eighth more), so that the column does not grow
  // and copy its way there from nothing.
  WEIR_RETURN_NOT_OK(builder->Reserve(std::max(old->length(), hint_rows_ + hint_rows_ / 8)));
  if (to == ColumnKind::kVarchar && hint_data_bytes_ > 0) {
    WEIR_RETURN_NOT_OK(static_cast<arrow::StringBuilder&>(*builder).ReserveData(
        hint_data_bytes_ + hint_data_bytes_ / 8));
  }
  for (int64_t i = 0; i < old->length(); ++i) {
    if (old->IsNull(i)) {
      WEIR_RETURN_NOT_OK(builder->AppendNull());
      continue;
    }
    std::string text;
    double real = 0;
    switch (kind_) {
      case ColumnKind::kBoolean:
        text = static_cast<const arrow::BooleanArray&>(*old).Value(i) ? "true" : "false";
        break;
      case ColumnKind::kInt64: {
        const int64_t v = static_cast<const arrow::Int64Array&>(*old).Value(i);
        text = std::to_string(v);
        real = static_cast<double>(v);
        break;
      }
      case ColumnKind::kDouble:
        real = static_cast<const arrow::DoubleArray&>(*old).Value(i);
        text = ShortestText(real);
        break;
      case ColumnKind::kNull:
      case ColumnKind::kVarchar:
        return Status::Invalid("internal: cannot promote a ", ToString(kind_),
                               " column with values");
    }
    if (to == ColumnKind::kDouble) {
      WEIR_RETURN_NOT_OK(static_cast<arrow::DoubleBuilder&>(*builder).Append(real));
    } else {
      WEIR_RETURN_NOT_OK(static_cast<arrow::StringBuilder&>(*builder).Append(text));
    }
  }
  builder_ = std::move(builder);
  kind_ = to;
  return Status::OK();
}

int64_t ColumnBuilder::buffered_bytes() const {
  int64_t bytes = builder_->length() * 9;  // values and validity, roughly
  if (kind_ == ColumnKind::kVarchar) {
    bytes += static_cast<const arrow::StringBuilder&>(*builder_).value_data_length();
  }
  return bytes;
}

Result<std::shared_ptr<arrow::Array>> ColumnBuilder::Finish(int64_t rows) {
  if (kind_ == ColumnKind::kNull) WEIR_RETURN_NOT_OK(Promote(ColumnKind::kVarchar));
  const int64_t gap = rows - builder_->length();
  if (gap > 0) WEIR_RETURN_NOT_OK(builder_->AppendNulls(gap));
  int64_t data_bytes = 0;
  if (kind_ == ColumnKind::kVarchar) {
    data_bytes = static_cast<const arrow::StringBuilder&>(*builder_).value_data_length();
  }
  std::shared_ptr<arrow::Array> array;
  WEIR_RETURN_NOT_OK(builder_->Finish(&array));
  SetCapacityHint(rows, data_bytes);
  builder_ = std::make_unique<arrow::NullBuilder>(pool_);
  kind_ = ColumnKind::kNull;
  return array;
}

}  // namespace weir::decode
