#include "records/variant_shredding.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include <arrow/builder.h>

#include "base/byte_order.h"
#include "records/variant_columns.h"

namespace weir::records {
namespace {

// The shredded type an encoded value fits, if any.
std::optional<ShredType> TypeOf(std::string_view value) {
  const auto header = static_cast<unsigned char>(value[0]);
  if ((header & 3) == 1) return ShredType::kString;
  if ((header & 3) != 0) return std::nullopt;
  switch (header >> 2) {
    case 1:
    case 2:
      return ShredType::kBoolean;
    case 3:
    case 4:
    case 5:
    case 6:
      return ShredType::kInt64;
    case 7:
      return ShredType::kDouble;
    case 16:
      return ShredType::kString;
    default:
      return std::nullopt;
  }
}

int64_t IntOf(std::string_view value) {
  const int width = std::array<int, 4>{1, 2, 4, 8}[(static_cast<unsigned char>(value[0]) >> 2) - 3];
  const uint64_t raw = GetLittleEndian(value, 1, width);
  const int shift = 64 - 8 * width;
  return static_cast<int64_t>(raw << shift) >> shift;  // sign-extended
}

std::string_view StringOf(std::string_view value) {
  const auto header = static_cast<unsigned char>(value[0]);
  if ((header & 3) == 1) return value.substr(1, header >> 2);
  return value.substr(5, GetLittleEndian(value, 1, 4));
}

std::string ResidualObject(const std::vector<const VariantField*>& fields) {
  uint32_t max_id = 0;
  uint64_t total = 0;
  for (const auto* f : fields) max_id = std::max(max_id, f->id), total += f->value.size();
  const bool large = fields.size() > 0xFF;
  const int id_size = VariantFieldBytes(max_id);
  const int offset_size = VariantFieldBytes(total);
  std::string out;
  const auto header =
      static_cast<uint8_t>((large ? 1 : 0) << 4 | (id_size - 1) << 2 | (offset_size - 1));
  out.push_back(static_cast<char>(header << 2 | 2));
  PutLittleEndian(out, fields.size(), large ? 4 : 1);
  for (const auto* f : fields) PutLittleEndian(out, f->id, id_size);
  uint64_t offset = 0;
  for (const auto* f : fields) PutLittleEndian(out, offset, offset_size), offset += f->value.size();
  PutLittleEndian(out, offset, offset_size);
  for (const auto* f : fields) out.append(f->value);
  return out;
}

std::shared_ptr<arrow::DataType> TypedType(ShredType type) {
  switch (type) {
    case ShredType::kInt64:
      return arrow::int64();
    case ShredType::kDouble:
      return arrow::float64();
    case ShredType::kString:
      return arrow::utf8();
    case ShredType::kBoolean:
      return arrow::boolean();
  }
  return arrow::utf8();
}

Status AppendTyped(arrow::ArrayBuilder& builder, ShredType type, std::string_view value) {
  switch (type) {
    case ShredType::kInt64:
      return static_cast<arrow::Int64Builder&>(builder).Append(IntOf(value));
    case ShredType::kDouble: {
      double d = 0;
      std::memcpy(&d, value.data() + 1, sizeof d);
      return static_cast<arrow::DoubleBuilder&>(builder).Append(d);
    }
    case ShredType::kString:
      return static_cast<arrow::StringBuilder&>(builder).Append(StringOf(value));
    case ShredType::kBoolean:
      return static_cast<arrow::BooleanBuilder&>(builder).Append(
          (static_cast<unsigned char>(value[0]) >> 2) == 1);
  }
  return Status::OK();
}

}  // namespace

std::optional<std::vector<VariantField>> ObjectFields(std::string_view metadata,
                                                      std::string_view value) {
  if (value.empty() || (static_cast<unsigned char>(value[0]) & 3) != 2) return std::nullopt;
  const auto meta_header = static_cast<unsigned char>(metadata[0]);
  const int meta_size = ((meta_header >> 6) & 3) + 1;
  const uint64_t dictionary = GetLittleEndian(metadata, 1, meta_size);
  const size_t strings = 1 + meta_size * (dictionary + 2);
  const auto header = static_cast<unsigned char>(value[0]) >> 2;
  const int offset_size = (header & 3) + 1;
  const int id_size = ((header >> 2) & 3) + 1;
  const int count_size = ((header >> 4) & 1) ? 4 : 1;
  const uint64_t n = GetLittleEndian(value, 1, count_size);
  const size_t ids = 1 + count_size;
  const size_t offsets = ids + n * id_size;
  const size_t values = offsets + (n + 1) * offset_size;
  std::vector<VariantField> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    const auto id = static_cast<uint32_t>(GetLittleEndian(value, ids + i * id_size, id_size));
    const uint64_t key_start = GetLittleEndian(metadata, 1 + meta_size * (id + 1), meta_size);
    const uint64_t key_end = GetLittleEndian(metadata, 1 + meta_size * (id + 2), meta_size);
    // weir's encoder writes values in field order, so each ends where the next begins.
    const uint64_t start = GetLittleEndian(value, offsets + i * offset_size, offset_size);
    const uint64_t end = GetLittleEndian(value, offsets + (i + 1) * offset_size, offset_size);
    out.push_back({metadata.substr(strings + key_start, key_end - key_start),
                   value.substr(values + start, end - start), id});
  }
  return out;
}

std::vector<ShreddedKey> ChooseShreddedKeys(const std::vector<std::optional<VariantBytes>>& rows,
                                            const ShredOptions& options) {
  struct Seen {
    size_t rows = 0;
    std::map<ShredType, size_t> types;
  };
  std::map<std::string, Seen, std::less<>> seen;
  size_t objects = 0;
  for (const auto& row : rows) {
    if (!row) continue;
    const auto fields = ObjectFields(row->metadata, row->value);
    if (!fields) continue;
    ++objects;
    for (const auto& field : *fields) {
      auto it = seen.find(field.key);
      if (it == seen.end()) it = seen.emplace(std::string(field.key), Seen{}).first;
      ++it->second.rows;
      if (const auto type = TypeOf(field.value)) ++it->second.types[*type];
    }
  }
  std::vector<std::pair<size_t, ShreddedKey>> common;
  for (const auto& [name, s] : seen) {
    if (s.types.empty() || static_cast<double>(s.rows) < options.min_share * objects) continue;
    const auto best = std::max_element(s.types.begin(), s.types.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; });
    common.push_back({s.rows, ShreddedKey{name, best->first}});
  }
  std::stable_sort(common.begin(), common.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (common.size() > options.max_keys) common.resize(options.max_keys);
  std::vector<ShreddedKey> keys;
  for (auto& [n, key] : common) keys.push_back(std::move(key));
  std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return keys;
}

Result<std::shared_ptr<arrow::Array>> BuildVariantColumn(
    const std::vector<std::optional<VariantBytes>>& rows, const std::vector<ShreddedKey>& keys) {
  const auto length = static_cast<int64_t>(rows.size());
  arrow::BinaryBuilder metadata, value;
  arrow::TypedBufferBuilder<bool> validity, typed_validity;
  std::vector<arrow::BinaryBuilder> key_values(keys.size());
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> key_typed;
  for (const auto& key : keys) {
    WEIR_ASSIGN_OR_RAISE(auto builder, arrow::MakeBuilder(TypedType(key.type)));
    key_typed.push_back(std::move(builder));
  }
  int64_t nulls = 0, typed_nulls = 0;
  std::vector<const VariantField*> by_key(keys.size());
  std::vector<const VariantField*> residual;
  for (const auto& row : rows) {
    const bool valid = row.has_value();
    WEIR_RETURN_NOT_OK(validity.Append(valid));
    nulls += valid ? 0 : 1;
    WEIR_RETURN_NOT_OK(
        metadata.Append(valid ? std::string_view(row->metadata) : EmptyVariantMetadata()));
    std::optional<std::vector<VariantField>> fields;
    if (valid && !keys.empty()) fields = ObjectFields(row->metadata, row->value);
    if (!fields) {
      // Unshredded: a null companion, a non-object value, or no common keys at all.
      if (!keys.empty() && !valid) {
        WEIR_RETURN_NOT_OK(value.AppendNull());
      } else {
        WEIR_RETURN_NOT_OK(
            value.Append(valid ? std::string_view(row->value) : std::string_view("\0", 1)));
      }
      if (!keys.empty()) {
        WEIR_RETURN_NOT_OK(typed_validity.Append(false));
        ++typed_nulls;
        for (size_t k = 0; k < keys.size(); ++k) {
          WEIR_RETURN_NOT_OK(key_values[k].AppendNull());
          WEIR_RETURN_NOT_OK(key_typed[k]->AppendNull());
        }
      }
      continue;
    }
    // Shredded object: each common key into its typed column when it fits, else its value.
    std::fill(by_key.begin(), by_key.end(), nullptr);
    residual.clear();
    size_t k = 0;
    for (const auto& field : *fields) {  // both in key order
      while (k < keys.size() && keys[k].name < field.key) ++k;
      if (k < keys.size() && keys[k].name == field.key) {
        by_key[k] = &field;
      } else {
        residual.push_back(&field);
      }
    }
    WEIR_RETURN_NOT_OK(typed_validity.Append(true));
    for (size_t i = 0; i < keys.size(); ++i) {
      const VariantField* field = by_key[i];
      if (field != nullptr && TypeOf(field->value) == keys[i].type) {
        WEIR_RETURN_NOT_OK(key_values[i].AppendNull());
        WEIR_RETURN_NOT_OK(AppendTyped(*key_typed[i], keys[i].type, field->value));
      } else {
        if (field != nullptr) {
          WEIR_RETURN_NOT_OK(key_values[i].Append(field->value));
        } else {
          WEIR_RETURN_NOT_OK(key_values[i].AppendNull());  // absent from this object
        }
        WEIR_RETURN_NOT_OK(key_typed[i]->AppendNull());
      }
    }
    if (residual.empty()) {
      WEIR_RETURN_NOT_OK(value.AppendNull());
    } else {
      WEIR_RETURN_NOT_OK(value.Append(ResidualObject(residual)));
    }
  }
  std::shared_ptr<arrow::Array> metadata_array, value_array;
  WEIR_RETURN_NOT_OK(metadata.Finish(&metadata_array));
  WEIR_RETURN_NOT_OK(value.Finish(&value_array));
  WEIR_ASSIGN_OR_RAISE(auto bitmap, validity.Finish());
  if (keys.empty()) {
    auto storage = std::make_shared<arrow::StructArray>(
        static_cast<const arrow::ExtensionType&>(*VariantType()).storage_type(), length,
        arrow::ArrayVector{metadata_array, value_array}, nulls > 0 ? bitmap : nullptr, nulls);
    return arrow::ExtensionType::WrapArray(VariantType(), storage);
  }
  arrow::FieldVector key_fields;
  arrow::ArrayVector key_arrays;
  for (size_t i = 0; i < keys.size(); ++i) {
    std::shared_ptr<arrow::Array> v, t;
    WEIR_RETURN_NOT_OK(key_values[i].Finish(&v));
    WEIR_RETURN_NOT_OK(key_typed[i]->Finish(&t));
    arrow::FieldVector parts = {arrow::field("value", arrow::binary()),
                                arrow::field("typed_value", t->type())};
    key_arrays.push_back(std::make_shared<arrow::StructArray>(arrow::struct_(parts), length,
                                                              arrow::ArrayVector{v, t}));
    key_fields.push_back(arrow::field(keys[i].name, arrow::struct_(parts), /*nullable=*/false));
  }
  WEIR_ASSIGN_OR_RAISE(auto typed_bitmap, typed_validity.Finish());
  auto typed =
      std::make_shared<arrow::StructArray>(arrow::struct_(key_fields), length, key_arrays,
                                           typed_nulls > 0 ? typed_bitmap : nullptr, typed_nulls);
  auto type = arrow::struct_({arrow::field("metadata", arrow::binary(), /*nullable=*/false),
                              arrow::field("value", arrow::binary()),
                              arrow::field("typed_value", typed->type())});
  return std::make_shared<arrow::StructArray>(
      type, length, arrow::ArrayVector{metadata_array, value_array, typed},
      nulls > 0 ? bitmap : nullptr, nulls);
}

}  // namespace weir::records
