// The spec's binary single-value serialization (Appendix D), used for lower/upper bounds in
// manifests and partition field summaries in manifest lists.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "lake/iceberg/types.h"
#include "lake/iceberg/value.h"

namespace weir::lake::iceberg {

// Serializes a non-null primitive value of `type`.
Result<std::string> ToBinary(const Value& value, const Type& type);

// Reads a value of `type` back from its serialization.
Result<Value> FromBinary(std::string_view bytes, const Type& type);

}  // namespace weir::lake::iceberg
