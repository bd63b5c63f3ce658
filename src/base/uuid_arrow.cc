#include "base/uuid_arrow.h"

#include <cstring>

#include <arrow/builder.h>
#include <arrow/extension/uuid.h>
#include <arrow/extension_type.h>

namespace weir {

std::shared_ptr<arrow::DataType> UuidArrowType() { return arrow::extension::uuid(); }

bool IsUuidArrowType(const arrow::DataType& type) {
  return type.id() == arrow::Type::EXTENSION &&
         static_cast<const arrow::ExtensionType&>(type).extension_name() == "arrow.uuid";
}

Uuid UuidAt(const arrow::Array& array, int64_t i) {
  const arrow::Array& storage = array.type_id() == arrow::Type::EXTENSION
                                    ? *static_cast<const arrow::ExtensionArray&>(array).storage()
                                    : array;
  Uuid uuid;
  std::memcpy(uuid.bytes.data(),
              static_cast<const arrow::FixedSizeBinaryArray&>(storage).GetValue(i),
              uuid.bytes.size());
  return uuid;
}

Result<std::shared_ptr<arrow::Array>> UuidArrayOf(std::shared_ptr<arrow::Array> storage) {
  if (!storage->type()->Equals(*arrow::fixed_size_binary(16))) {
    return Status::Invalid("a uuid array is stored as fixed_size_binary(16), not ",
                           storage->type()->ToString());
  }
  return arrow::ExtensionType::WrapArray(UuidArrowType(), std::move(storage));
}

Result<std::shared_ptr<arrow::Array>> ParseUuidArray(const arrow::Array& array, int64_t* nulled) {
  arrow::FixedSizeBinaryBuilder builder(arrow::fixed_size_binary(16));
  WEIR_RETURN_NOT_OK(builder.Reserve(array.length()));
  const bool text = array.type_id() == arrow::Type::STRING;
  for (int64_t i = 0; i < array.length(); ++i) {
    if (array.IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    const auto uuid = text
                          ? Uuid::TryParse(static_cast<const arrow::StringArray&>(array).GetView(i))
                          : std::nullopt;
    if (uuid) {
      builder.UnsafeAppend(uuid->bytes.data());
    } else {
      ++*nulled;
      builder.UnsafeAppendNull();
    }
  }
  std::shared_ptr<arrow::Array> storage;
  WEIR_RETURN_NOT_OK(builder.Finish(&storage));
  return UuidArrayOf(std::move(storage));
}

}  // namespace weir
