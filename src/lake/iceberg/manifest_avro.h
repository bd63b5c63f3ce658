// The Avro side of manifests: the spec's schemas, and Iceberg values and manifest list
// entries to and from Avro (internal to manifest.cc and its tests).
#pragma once

#include <nlohmann/json.hpp>

#include "lake/iceberg/avro_file.h"
#include "lake/iceberg/manifest.h"

namespace weir::lake::iceberg {

// The Avro type of an Iceberg primitive (logical types and `adjust-to-utc` as the spec's
// Appendix A says); `field_id` names fixed types uniquely.
nlohmann::json AvroTypeOf(const Type& type, int field_id);
// `name` made a valid Avro name the way Iceberg's Java implementation does (an invalid character
// becomes "_x" and its hex code, a leading digit gets a "_").
std::string AvroCompatibleName(const std::string& name);
// The bytes a decimal of `precision` digits occupies as Avro fixed.
int DecimalFixedSize(int precision);

// An optional value: union branch 0 (null) or 1 (the value in its Avro type).
Status EncodeOptionalValue(AvroEncoder& e, const Value& value, const Type& type);
Result<Value> DecodeValue(avro_value_t& value, const Type& type);

void EncodeManifestFile(AvroEncoder& e, const ManifestFile& m, int format_version);
Result<ManifestFile> DecodeManifestFile(avro_value_t& record);

}  // namespace weir::lake::iceberg
