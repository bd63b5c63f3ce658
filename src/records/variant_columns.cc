#include "records/variant_columns.h"

#include <set>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/extension/parquet_variant.h>

#include "base/text.h"
#include "records/variant_encoding.h"

namespace weir::records {
namespace {

constexpr std::string_view kSuffix = "_variant";

Status Refuse(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "records", "invalid_variant_columns",
                         std::move(message));
}

bool IsIdentifier(std::string_view text) {
  if (text.empty() || (text[0] >= '0' && text[0] <= '9')) return false;
  for (const char c : text) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

std::shared_ptr<arrow::DataType> Storage() {
  return arrow::struct_({arrow::field("metadata", arrow::binary(), /*nullable=*/false),
                         arrow::field("value", arrow::binary(), /*nullable=*/false)});
}

// The companion of one source column.
Result<std::shared_ptr<arrow::Array>> Companion(const arrow::Array& source,
                                                VariantOutcome* outcome) {
  std::shared_ptr<arrow::Array> text;
  if (source.type_id() == arrow::Type::STRING) {
    text = arrow::MakeArray(source.data());
  } else {
    // Numbers and booleans are JSON as their text (a column of one kind).
    WEIR_ASSIGN_OR_RAISE(text, arrow::compute::Cast(source, arrow::utf8()));
  }
  const auto& strings = static_cast<const arrow::StringArray&>(*text);
  arrow::BinaryBuilder metadata, value;
  arrow::TypedBufferBuilder<bool> validity;
  WEIR_RETURN_NOT_OK(metadata.Reserve(strings.length()));
  WEIR_RETURN_NOT_OK(value.Reserve(strings.length()));
  WEIR_RETURN_NOT_OK(validity.Reserve(strings.length()));
  VariantEncoder encoder;
  VariantBytes bytes;
  int64_t nulls = 0;
  for (int64_t i = 0; i < strings.length(); ++i) {
    const bool ok = !strings.IsNull(i) && encoder.Encode(strings.GetView(i), &bytes).ok();
    if (!strings.IsNull(i) && !ok) ++outcome->malformed;
    if (ok) {
      ++outcome->encoded;
      WEIR_RETURN_NOT_OK(metadata.Append(bytes.metadata));
      WEIR_RETURN_NOT_OK(value.Append(bytes.value));
    } else {
      ++nulls;
      WEIR_RETURN_NOT_OK(metadata.Append(EmptyVariantMetadata()));
      WEIR_RETURN_NOT_OK(value.Append(std::string_view("\0", 1)));  // a Variant null
    }
    validity.UnsafeAppend(ok);
  }
  std::shared_ptr<arrow::Array> metadata_array, value_array;
  WEIR_RETURN_NOT_OK(metadata.Finish(&metadata_array));
  WEIR_RETURN_NOT_OK(value.Finish(&value_array));
  WEIR_ASSIGN_OR_RAISE(auto null_bitmap, validity.Finish());
  auto storage = std::make_shared<arrow::StructArray>(
      Storage(), strings.length(), arrow::ArrayVector{metadata_array, value_array},
      nulls > 0 ? null_bitmap : nullptr, nulls);
  return arrow::ExtensionType::WrapArray(VariantType(), storage);
}

}  // namespace

std::shared_ptr<arrow::DataType> VariantType() {
  static const std::shared_ptr<arrow::DataType> type = arrow::extension::variant(Storage());
  return type;
}

bool IsVariantType(const arrow::DataType& type) {
  return type.id() == arrow::Type::EXTENSION &&
         static_cast<const arrow::ExtensionType&>(type).extension_name() == "arrow.parquet.variant";
}

Result<std::vector<std::string>> ParseVariantColumns(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& item : items) {
    const std::string lower = ToLower(item);
    if (!IsIdentifier(item)) {
      return Refuse("\"" + item + "\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (lower.size() >= kSuffix.size() && lower.ends_with(kSuffix)) {
      return Refuse("\"" + item +
                    "\" ends in _variant: list the source column, its companion is "
                    "<column>_variant");
    }
    if (!seen.insert(lower).second) return Refuse("column \"" + item + "\" is listed twice");
    out.push_back(item);
  }
  return out;
}

Result<VariantColumns> VariantColumns::Make(std::vector<std::string> sources) {
  WEIR_ASSIGN_OR_RAISE(auto checked, ParseVariantColumns(sources));
  VariantColumns columns;
  columns.sources_ = std::move(checked);
  return columns;
}

Result<std::shared_ptr<arrow::RecordBatch>> VariantColumns::Apply(
    std::shared_ptr<arrow::RecordBatch> batch, VariantOutcome* outcome) const {
  std::set<std::string> sources, companions;
  for (const auto& source : sources_) {
    sources.insert(ToLower(source));
    companions.insert(ToLower(source) + std::string(kSuffix));
  }
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  std::set<std::string> done;  // a source spelled twice in the batch gets one companion
  for (int c = 0; c < batch->num_columns(); ++c) {
    const auto& field = batch->schema()->field(c);
    const std::string lower = ToLower(field->name());
    if (companions.count(lower) != 0) {
      outcome->collisions_dropped += batch->column(c)->length() - batch->column(c)->null_count();
      continue;
    }
    fields.push_back(field);
    columns.push_back(batch->column(c));
    if (sources.count(lower) == 0 || !done.insert(lower).second) continue;
    WEIR_ASSIGN_OR_RAISE(auto companion, Companion(*batch->column(c), outcome));
    fields.push_back(arrow::field(field->name() + std::string(kSuffix), VariantType()));
    columns.push_back(std::move(companion));
  }
  return arrow::RecordBatch::Make(arrow::schema(std::move(fields), batch->schema()->metadata()),
                                  batch->num_rows(), std::move(columns));
}

}  // namespace weir::records
