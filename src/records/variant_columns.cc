#include "records/variant_columns.h"

#include <set>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/extension/parquet_variant.h>

#include "base/text.h"
#include "records/variant_encoding.h"
#include "records/variant_shredding.h"

namespace weir::records {
namespace {

constexpr std::string_view kSuffix = "_variant";

Status RefuseVariantColumns(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "records", "invalid_variant_columns",
                         std::move(message));
}

std::shared_ptr<arrow::DataType> Storage() {
  return arrow::struct_({arrow::field("metadata", arrow::binary(), /*nullable=*/false),
                         arrow::field("value", arrow::binary(), /*nullable=*/false)});
}

// The companion of one source column, shredded by the flush's common keys.
Result<std::shared_ptr<arrow::Array>> Companion(const arrow::Array& source,
                                                const ShredOptions& shred,
                                                VariantOutcome* outcome) {
  std::shared_ptr<arrow::Array> text;
  if (source.type_id() == arrow::Type::STRING) {
    text = arrow::MakeArray(source.data());
  } else {
    // Numbers and booleans are JSON as their text (a column of one kind).
    WEIR_ASSIGN_OR_RAISE(text, arrow::compute::Cast(source, arrow::utf8()));
  }
  const auto& strings = static_cast<const arrow::StringArray&>(*text);
  std::vector<std::optional<VariantBytes>> rows(static_cast<size_t>(strings.length()));
  VariantEncoder encoder;
  for (int64_t i = 0; i < strings.length(); ++i) {
    if (strings.IsNull(i)) continue;
    VariantBytes bytes;
    if (!encoder.Encode(strings.GetView(i), &bytes).ok()) {
      ++outcome->malformed;
      continue;
    }
    ++outcome->encoded;
    rows[static_cast<size_t>(i)] = std::move(bytes);
  }
  const auto keys =
      shred.max_keys > 0 ? ChooseShreddedKeys(rows, shred) : std::vector<ShreddedKey>{};
  outcome->shredded_keys += static_cast<int64_t>(keys.size());
  return BuildVariantColumn(rows, keys);
}

}  // namespace

std::shared_ptr<arrow::DataType> VariantType() {
  static const std::shared_ptr<arrow::DataType> type = arrow::extension::variant(Storage());
  return type;
}

bool IsVariantType(const arrow::DataType& type) {
  if (type.id() == arrow::Type::EXTENSION) {
    return static_cast<const arrow::ExtensionType&>(type).extension_name() ==
           "arrow.parquet.variant";
  }
  return IsShreddedVariantType(type);
}

bool IsShreddedVariantType(const arrow::DataType& type) {
  return type.id() == arrow::Type::STRUCT && type.num_fields() == 3 &&
         type.field(0)->name() == "metadata" && type.field(1)->name() == "value" &&
         type.field(2)->name() == "typed_value" &&
         type.field(0)->type()->id() == arrow::Type::BINARY;
}

Result<std::vector<std::string>> ParseVariantColumns(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& item : items) {
    const std::string lower = ToLower(item);
    if (!IsPlainIdentifier(item)) {
      return RefuseVariantColumns("\"" + item + "\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (lower.size() >= kSuffix.size() && lower.ends_with(kSuffix)) {
      return RefuseVariantColumns("\"" + item +
                                  "\" ends in _variant: list the source column, its companion is "
                                  "<column>_variant");
    }
    if (!seen.insert(lower).second)
      return RefuseVariantColumns("column \"" + item + "\" is listed twice");
    out.push_back(item);
  }
  return out;
}

Result<VariantColumns> VariantColumns::Make(std::vector<std::string> sources, ShredOptions shred) {
  WEIR_ASSIGN_OR_RAISE(auto checked, ParseVariantColumns(sources));
  VariantColumns columns;
  columns.sources_ = std::move(checked);
  columns.shred_ = shred;
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
    WEIR_ASSIGN_OR_RAISE(auto companion, Companion(*batch->column(c), shred_, outcome));
    fields.push_back(arrow::field(field->name() + std::string(kSuffix), companion->type()));
    columns.push_back(std::move(companion));
  }
  return arrow::RecordBatch::Make(arrow::schema(std::move(fields), batch->schema()->metadata()),
                                  batch->num_rows(), std::move(columns));
}

}  // namespace weir::records
