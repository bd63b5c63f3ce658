#include "lake/iceberg/manifest_avro.h"

#include <cmath>
#include <cstdio>

namespace weir::lake::iceberg {
namespace {

using Json = nlohmann::json;

Json Required(const char* name, Json type, int id) {
  return {{"name", name}, {"type", std::move(type)}, {"field-id", id}};
}

Json Optional(const char* name, Json type, int id) {
  return {{"name", name},
          {"type", Json::array({"null", std::move(type)})},
          {"default", nullptr},
          {"field-id", id}};
}

// map<int, V> as the spec's array of key-value records with logical type "map".
Json IntMap(int key_id, int value_id, const char* value_type) {
  const std::string name = "k" + std::to_string(key_id) + "_v" + std::to_string(value_id);
  return {{"type", "array"},
          {"logicalType", "map"},
          {"items",
           {{"type", "record"},
            {"name", name},
            {"fields", Json::array({Required("key", "int", key_id),
                                    Required("value", value_type, value_id)})}}}};
}

Json List(const char* element_type, int element_id) {
  return {{"type", "array"}, {"items", element_type}, {"element-id", element_id}};
}

std::string SignExtend(const std::string& minimal, size_t size) {
  const char fill = (!minimal.empty() && (static_cast<uint8_t>(minimal[0]) & 0x80)) ? '\xff' : '\0';
  return std::string(size - std::min(size, minimal.size()), fill) + minimal;
}

}  // namespace

std::string AvroCompatibleName(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (letter || (digit && i > 0)) {
      out += c;
    } else if (digit) {
      out += '_';
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "_x%X", static_cast<uint8_t>(c));
      out += hex;
    }
  }
  return out.empty() ? "_" : out;
}

int DecimalFixedSize(int precision) {
  return static_cast<int>(
      std::ceil((std::log(std::pow(10.0, precision) - 1) / std::log(2.0) + 1) / 8));
}

Json AvroTypeOf(const Type& type, int field_id) {
  switch (type.id) {
    case TypeId::kBoolean:
      return "boolean";
    case TypeId::kInt:
      return "int";
    case TypeId::kLong:
      return "long";
    case TypeId::kFloat:
      return "float";
    case TypeId::kDouble:
      return "double";
    case TypeId::kDate:
      return {{"type", "int"}, {"logicalType", "date"}};
    case TypeId::kTime:
      return {{"type", "long"}, {"logicalType", "time-micros"}};
    case TypeId::kTimestamp:
      return {{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", false}};
    case TypeId::kTimestampTz:
      return {{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", true}};
    case TypeId::kString:
      return "string";
    case TypeId::kUuid:
      return {{"type", "fixed"},
              {"name", "uuid_fixed_" + std::to_string(field_id)},
              {"size", 16},
              {"logicalType", "uuid"}};
    case TypeId::kFixed:
      return {
          {"type", "fixed"}, {"name", "fixed_" + std::to_string(field_id)}, {"size", type.length}};
    case TypeId::kDecimal:
      return {{"type", "fixed"},
              {"name", "decimal_" + std::to_string(field_id)},
              {"size", DecimalFixedSize(type.precision)},
              {"logicalType", "decimal"},
              {"precision", type.precision},
              {"scale", type.scale}};
    default:
      return "bytes";
  }
}

Json ManifestEntryAvroSchema(const std::vector<NestedField>& partition_type, int format_version) {
  Json partition_fields = Json::array();
  for (const NestedField& field : partition_type) {
    partition_fields.push_back({{"name", AvroCompatibleName(field.name)},
                                {"type", Json::array({"null", AvroTypeOf(field.type, field.id)})},
                                {"default", nullptr},
                                {"field-id", field.id}});
  }
  Json file_fields = Json::array({
      Required("content", "int", 134),
      Required("file_path", "string", 100),
      Required("file_format", "string", 101),
      Required("partition", {{"type", "record"}, {"name", "r102"}, {"fields", partition_fields}},
               102),
      Required("record_count", "long", 103),
      Required("file_size_in_bytes", "long", 104),
      Optional("column_sizes", IntMap(117, 118, "long"), 108),
      Optional("value_counts", IntMap(119, 120, "long"), 109),
      Optional("null_value_counts", IntMap(121, 122, "long"), 110),
      Optional("nan_value_counts", IntMap(138, 139, "long"), 137),
      Optional("lower_bounds", IntMap(126, 127, "bytes"), 125),
      Optional("upper_bounds", IntMap(129, 130, "bytes"), 128),
      Optional("key_metadata", "bytes", 131),
      Optional("split_offsets", List("long", 133), 132),
      Optional("equality_ids", List("int", 136), 135),
      Optional("sort_order_id", "int", 140),
  });
  if (format_version >= 3) file_fields.push_back(Optional("first_row_id", "long", 142));
  file_fields.push_back(Optional("referenced_data_file", "string", 143));
  if (format_version >= 3) {
    file_fields.push_back(Optional("content_offset", "long", 144));
    file_fields.push_back(Optional("content_size_in_bytes", "long", 145));
  }
  const Json data_file = {{"type", "record"}, {"name", "r2"}, {"fields", file_fields}};
  return {{"type", "record"},
          {"name", "manifest_entry"},
          {"fields", Json::array({Required("status", "int", 0), Optional("snapshot_id", "long", 1),
                                  Optional("sequence_number", "long", 3),
                                  Optional("file_sequence_number", "long", 4),
                                  Required("data_file", data_file, 2)})}};
}

Json ManifestListAvroSchema(int format_version) {
  const Json field_summary = {{"type", "record"},
                              {"name", "r508"},
                              {"fields", Json::array({Required("contains_null", "boolean", 509),
                                                      Optional("contains_nan", "boolean", 518),
                                                      Optional("lower_bound", "bytes", 510),
                                                      Optional("upper_bound", "bytes", 511)})}};
  Json fields = Json::array(
      {Required("manifest_path", "string", 500), Required("manifest_length", "long", 501),
       Required("partition_spec_id", "int", 502), Required("content", "int", 517),
       Required("sequence_number", "long", 515), Required("min_sequence_number", "long", 516),
       Required("added_snapshot_id", "long", 503), Required("added_files_count", "int", 504),
       Required("existing_files_count", "int", 505), Required("deleted_files_count", "int", 506),
       Required("added_rows_count", "long", 512), Required("existing_rows_count", "long", 513),
       Required("deleted_rows_count", "long", 514),
       Optional("partitions", {{"type", "array"}, {"items", field_summary}, {"element-id", 508}},
                507),
       Optional("key_metadata", "bytes", 519)});
  if (format_version >= 3) fields.push_back(Optional("first_row_id", "long", 520));
  return {{"type", "record"}, {"name", "manifest_file"}, {"fields", fields}};
}

Status EncodeOptionalValue(AvroEncoder& e, const Value& value, const Type& type) {
  if (IsNull(value)) {
    e.Branch(0);
    return Status::OK();
  }
  if (!Matches(value, type)) {
    return Status::Invalid("partition value does not match its type ", ToString(type));
  }
  e.Branch(1);
  switch (type.id) {
    case TypeId::kBoolean:
      e.Boolean(std::get<bool>(value));
      break;
    case TypeId::kInt:
    case TypeId::kDate:
      e.Int(std::get<int32_t>(value));
      break;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      e.Long(std::get<int64_t>(value));
      break;
    case TypeId::kFloat:
      e.Float(std::get<float>(value));
      break;
    case TypeId::kDouble:
      e.Double(std::get<double>(value));
      break;
    case TypeId::kString:
    case TypeId::kBinary:
      e.Bytes(std::get<std::string>(value));
      break;
    case TypeId::kFixed:
      e.Fixed(std::get<std::string>(value));
      break;
    case TypeId::kUuid: {
      const UuidBytes& u = std::get<UuidBytes>(value);
      e.Fixed(std::string_view(reinterpret_cast<const char*>(u.data()), u.size()));
      break;
    }
    case TypeId::kDecimal:
      e.Fixed(SignExtend(MinimalBigEndian(std::get<DecimalValue>(value).unscaled),
                         static_cast<size_t>(DecimalFixedSize(type.precision))));
      break;
    default:
      return Status::Invalid("type ", ToString(type), " cannot be a partition value");
  }
  return Status::OK();
}

Result<Value> DecodeValue(avro_value_t& raw, const Type& type) {
  avro_value_t v;
  WEIR_ASSIGN_OR_RAISE(const bool present, Unwrap(raw, v));
  if (!present) return Value();
  switch (type.id) {
    case TypeId::kBoolean: {
      WEIR_ASSIGN_OR_RAISE(const bool b, ReadBool(v));
      return Value(b);
    }
    case TypeId::kInt:
    case TypeId::kDate: {
      WEIR_ASSIGN_OR_RAISE(const int32_t i, ReadInt(v));
      return Value(i);
    }
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      WEIR_ASSIGN_OR_RAISE(const int64_t l, ReadLong(v));
      return Value(l);
    }
    case TypeId::kFloat: {
      WEIR_ASSIGN_OR_RAISE(const double d, ReadDouble(v));
      return Value(static_cast<float>(d));
    }
    case TypeId::kDouble: {
      WEIR_ASSIGN_OR_RAISE(const double d, ReadDouble(v));
      return Value(d);
    }
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed: {
      WEIR_ASSIGN_OR_RAISE(std::string s, ReadBytes(v));
      return Value(std::move(s));
    }
    case TypeId::kUuid: {
      WEIR_ASSIGN_OR_RAISE(const std::string s, ReadBytes(v));
      if (s.size() != 16) return Status::Invalid("a uuid partition value must be 16 bytes");
      UuidBytes u;
      std::copy(s.begin(), s.end(), u.begin());
      return Value(u);
    }
    case TypeId::kDecimal: {
      WEIR_ASSIGN_OR_RAISE(const std::string s, ReadBytes(v));
      if (s.empty() || s.size() > 16) return Status::Invalid("bad decimal partition value");
      auto u = static_cast<UInt128>((static_cast<uint8_t>(s[0]) & 0x80) ? -1 : 0);
      for (const char c : s) u = (u << 8) | static_cast<uint8_t>(c);
      return Value(DecimalValue{static_cast<Int128>(u)});
    }
    default:
      return Status::Invalid("type ", ToString(type), " cannot be a partition value");
  }
}

void EncodeManifestFile(AvroEncoder& e, const ManifestFile& m, int format_version) {
  e.String(m.manifest_path);
  e.Long(m.manifest_length);
  e.Int(m.partition_spec_id);
  e.Int(static_cast<int32_t>(m.content));
  e.Long(m.sequence_number);
  e.Long(m.min_sequence_number);
  e.Long(m.added_snapshot_id);
  e.Int(m.added_files_count);
  e.Int(m.existing_files_count);
  e.Int(m.deleted_files_count);
  e.Long(m.added_rows_count);
  e.Long(m.existing_rows_count);
  e.Long(m.deleted_rows_count);
  e.Branch(1);
  e.BlockStart(static_cast<int64_t>(m.partitions.size()));
  for (const FieldSummary& s : m.partitions) {
    e.Boolean(s.contains_null);
    if (s.contains_nan) {
      e.Branch(1);
      e.Boolean(*s.contains_nan);
    } else {
      e.Branch(0);
    }
    for (const auto* bound : {&s.lower_bound, &s.upper_bound}) {
      if (*bound) {
        e.Branch(1);
        e.Bytes(**bound);
      } else {
        e.Branch(0);
      }
    }
  }
  e.BlockEnd();
  if (m.key_metadata) {
    e.Branch(1);
    e.Bytes(*m.key_metadata);
  } else {
    e.Branch(0);
  }
  if (format_version >= 3) {
    if (m.first_row_id) {
      e.Branch(1);
      e.Long(*m.first_row_id);
    } else {
      e.Branch(0);
    }
  }
}

Result<ManifestFile> DecodeManifestFile(avro_value_t& record) {
  ManifestFile m;
  avro_value_t v;
  WEIR_ASSIGN_OR_RAISE(v, Field(record, "manifest_path"));
  WEIR_ASSIGN_OR_RAISE(m.manifest_path, ReadBytes(v));
  WEIR_ASSIGN_OR_RAISE(v, Field(record, "manifest_length"));
  WEIR_ASSIGN_OR_RAISE(m.manifest_length, ReadLong(v));
  WEIR_ASSIGN_OR_RAISE(v, Field(record, "partition_spec_id"));
  WEIR_ASSIGN_OR_RAISE(m.partition_spec_id, ReadInt(v));
  WEIR_ASSIGN_OR_RAISE(bool present, OptionalField(record, "content", v));
  if (present) {
    WEIR_ASSIGN_OR_RAISE(const int32_t content, ReadInt(v));
    m.content = content == 1 ? ManifestContent::kDeletes : ManifestContent::kData;
  }
  WEIR_ASSIGN_OR_RAISE(present, OptionalField(record, "sequence_number", v));
  if (present) {
    WEIR_ASSIGN_OR_RAISE(m.sequence_number, ReadLong(v));
  }
  WEIR_ASSIGN_OR_RAISE(present, OptionalField(record, "min_sequence_number", v));
  if (present) {
    WEIR_ASSIGN_OR_RAISE(m.min_sequence_number, ReadLong(v));
  }
  WEIR_ASSIGN_OR_RAISE(v, Field(record, "added_snapshot_id"));
  WEIR_ASSIGN_OR_RAISE(m.added_snapshot_id, ReadLong(v));
  // Java's v1 lists call the counts added_data_files_count etc.; both names are accepted.
  const auto count = [&](const char* v2_name, const char* v1_name, auto& out) -> Status {
    avro_value_t c;
    WEIR_ASSIGN_OR_RAISE(bool has, OptionalField(record, v2_name, c));
    if (!has) {
      WEIR_ASSIGN_OR_RAISE(has, OptionalField(record, v1_name, c));
    }
    if (!has) return Status::OK();
    WEIR_ASSIGN_OR_RAISE(const int64_t n, ReadLong(c));
    out = static_cast<std::remove_reference_t<decltype(out)>>(n);
    return Status::OK();
  };
  WEIR_RETURN_NOT_OK(count("added_files_count", "added_data_files_count", m.added_files_count));
  WEIR_RETURN_NOT_OK(
      count("existing_files_count", "existing_data_files_count", m.existing_files_count));
  WEIR_RETURN_NOT_OK(
      count("deleted_files_count", "deleted_data_files_count", m.deleted_files_count));
  WEIR_RETURN_NOT_OK(count("added_rows_count", "added_rows_count", m.added_rows_count));
  WEIR_RETURN_NOT_OK(count("existing_rows_count", "existing_rows_count", m.existing_rows_count));
  WEIR_RETURN_NOT_OK(count("deleted_rows_count", "deleted_rows_count", m.deleted_rows_count));
  avro_value_t partitions;
  WEIR_ASSIGN_OR_RAISE(present, OptionalField(record, "partitions", partitions));
  if (present) {
    size_t n = 0;
    avro_value_get_size(&partitions, &n);
    for (size_t i = 0; i < n; ++i) {
      avro_value_t s;
      avro_value_get_by_index(&partitions, i, &s, nullptr);
      FieldSummary summary;
      WEIR_ASSIGN_OR_RAISE(v, Field(s, "contains_null"));
      WEIR_ASSIGN_OR_RAISE(summary.contains_null, ReadBool(v));
      WEIR_ASSIGN_OR_RAISE(bool has, OptionalField(s, "contains_nan", v));
      if (has) {
        WEIR_ASSIGN_OR_RAISE(summary.contains_nan, ReadBool(v));
      }
      WEIR_ASSIGN_OR_RAISE(has, OptionalField(s, "lower_bound", v));
      if (has) {
        WEIR_ASSIGN_OR_RAISE(summary.lower_bound, ReadBytes(v));
      }
      WEIR_ASSIGN_OR_RAISE(has, OptionalField(s, "upper_bound", v));
      if (has) {
        WEIR_ASSIGN_OR_RAISE(summary.upper_bound, ReadBytes(v));
      }
      m.partitions.push_back(std::move(summary));
    }
  }
  WEIR_ASSIGN_OR_RAISE(present, OptionalField(record, "key_metadata", v));
  if (present) {
    WEIR_ASSIGN_OR_RAISE(m.key_metadata, ReadBytes(v));
  }
  WEIR_ASSIGN_OR_RAISE(present, OptionalField(record, "first_row_id", v));
  if (present) {
    WEIR_ASSIGN_OR_RAISE(m.first_row_id, ReadLong(v));
  }
  return m;
}

}  // namespace weir::lake::iceberg
