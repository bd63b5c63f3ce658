#include "lake/row_keys.h"

#include <cstring>

#include <arrow/compute/api.h>
#include <arrow/extension_type.h>

namespace weir::lake {

Result<std::shared_ptr<arrow::Array>> CanonicalKeyColumn(
    const std::shared_ptr<arrow::Array>& column) {
  std::shared_ptr<arrow::Array> values = column;
  if (values->type_id() == arrow::Type::EXTENSION) {
    values = std::static_pointer_cast<arrow::ExtensionArray>(values)->storage();
  }
  if (values->type_id() == arrow::Type::DICTIONARY) {
    const auto& dictionary = static_cast<const arrow::DictionaryType&>(*values->type());
    WEIR_ASSIGN_OR_RAISE(auto decoded, arrow::compute::Cast(*values, dictionary.value_type()));
    values = decoded;
  }
  const arrow::DataType& type = *values->type();
  std::shared_ptr<arrow::DataType> target;
  if (arrow::is_integer(type.id())) {
    target = arrow::int64();
  } else if (arrow::is_floating(type.id())) {
    target = arrow::float64();
  } else if (type.id() == arrow::Type::BOOL) {
    return values;
  } else if (type.id() == arrow::Type::TIMESTAMP) {
    const auto& ts = static_cast<const arrow::TimestampType&>(type);
    WEIR_ASSIGN_OR_RAISE(
        auto micros,
        arrow::compute::Cast(*values, arrow::timestamp(arrow::TimeUnit::MICRO, ts.timezone())));
    arrow::compute::CastOptions reinterpret = arrow::compute::CastOptions::Unsafe(arrow::int64());
    WEIR_ASSIGN_OR_RAISE(auto ints, arrow::compute::Cast(*micros, arrow::int64(), reinterpret));
    return ints;
  } else if (type.id() == arrow::Type::FIXED_SIZE_BINARY || arrow::is_binary_like(type.id()) ||
             arrow::is_large_binary_like(type.id())) {
    target = arrow::large_binary();
  } else {
    target = arrow::large_utf8();
  }
  if (type.Equals(*target)) return values;
  auto cast = arrow::compute::Cast(*values, target);
  if (!cast.ok() && target->id() == arrow::Type::LARGE_BINARY) {
    // Fixed-size binary (uuid) has no direct cast to large_binary in every Arrow: via binary.
    WEIR_ASSIGN_OR_RAISE(auto binary, arrow::compute::Cast(*values, arrow::binary()));
    cast = arrow::compute::Cast(*binary, target);
  }
  if (!cast.ok()) {
    return Status::Invalid("a key column of type ", type.ToString(),
                           " cannot be compared: ", cast.status().message());
  }
  auto result = *cast;
  if (result->type_id() == arrow::Type::LARGE_STRING) {
    WEIR_ASSIGN_OR_RAISE(result, arrow::compute::Cast(*result, arrow::large_binary()));
  }
  return result;
}

Result<std::vector<std::string>> EncodeRowKeys(
    const std::vector<std::shared_ptr<arrow::Array>>& columns) {
  const int64_t rows = columns.empty() ? 0 : columns.front()->length();
  std::vector<std::string> keys(static_cast<size_t>(rows));
  for (const auto& column : columns) {
    if (column->length() != rows) return Status::Invalid("key columns of unequal lengths");
    WEIR_ASSIGN_OR_RAISE(auto canonical, CanonicalKeyColumn(column));
    for (int64_t r = 0; r < rows; ++r) {
      std::string& key = keys[static_cast<size_t>(r)];
      if (canonical->IsNull(r)) {
        key.push_back('\0');
        continue;
      }
      key.push_back('\1');
      switch (canonical->type_id()) {
        case arrow::Type::INT64: {
          const int64_t v = static_cast<const arrow::Int64Array&>(*canonical).Value(r);
          key.append(reinterpret_cast<const char*>(&v), sizeof v);
          break;
        }
        case arrow::Type::DOUBLE: {
          double v = static_cast<const arrow::DoubleArray&>(*canonical).Value(r);
          if (v == 0) v = 0;  // -0 equals 0
          key.append(reinterpret_cast<const char*>(&v), sizeof v);
          break;
        }
        case arrow::Type::BOOL:
          key.push_back(static_cast<const arrow::BooleanArray&>(*canonical).Value(r) ? 't' : 'f');
          break;
        default: {
          const auto view = static_cast<const arrow::LargeBinaryArray&>(*canonical).GetView(r);
          const uint64_t size = view.size();
          key.append(reinterpret_cast<const char*>(&size), sizeof size);
          key.append(view.data(), view.size());
        }
      }
    }
  }
  return keys;
}

}  // namespace weir::lake
