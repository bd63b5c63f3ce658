#include "lake/iceberg/types.h"

#include <algorithm>
#include <charconv>

#include "base/text.h"
#include "lake/iceberg/json_fields.h"

namespace weir::lake::iceberg {
namespace {

struct NamedType {
  std::string_view name;
  TypeId id;
};

constexpr NamedType kPrimitives[] = {
    {"boolean", TypeId::kBoolean},
    {"int", TypeId::kInt},
    {"long", TypeId::kLong},
    {"float", TypeId::kFloat},
    {"double", TypeId::kDouble},
    {"date", TypeId::kDate},
    {"time", TypeId::kTime},
    {"timestamp", TypeId::kTimestamp},
    {"timestamptz", TypeId::kTimestampTz},
    {"string", TypeId::kString},
    {"uuid", TypeId::kUuid},
    {"binary", TypeId::kBinary},
    {"variant", TypeId::kVariant},
};

// Parses "<prefix><open>a[,b]<close>" with optional spaces, e.g. "decimal( 9, 2 )".
bool ParseParameters(std::string_view text, std::string_view prefix, char open, char close,
                     std::vector<int>& out) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text = TrimSpace(text.substr(prefix.size()));
  if (text.size() < 2 || text.front() != open || text.back() != close) return false;
  text = text.substr(1, text.size() - 2);
  while (true) {
    const auto comma = text.find(',');
    const std::string_view part = TrimSpace(text.substr(0, comma));
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return false;
    out.push_back(value);
    if (comma == std::string_view::npos) return true;
    text = text.substr(comma + 1);
  }
}

Result<NestedField> FieldFromJson(const nlohmann::json& json, std::string_view where) {
  if (!json.is_object()) return Status::Invalid(where, ": a field must be an object");
  NestedField field;
  WEIR_ASSIGN_OR_RAISE(field.id, GetInt(json, "id", where));
  WEIR_ASSIGN_OR_RAISE(field.name, GetString(json, "name", where));
  WEIR_ASSIGN_OR_RAISE(field.required, GetBool(json, "required", where));
  const auto type = json.find("type");
  if (type == json.end()) return Status::Invalid(where, ": field ", field.name, " has no type");
  WEIR_ASSIGN_OR_RAISE(field.type, TypeFromJson(*type));
  field.extra = WithoutKeys(json, {"id", "name", "required", "type"});
  return field;
}

nlohmann::json FieldToJson(const NestedField& field) {
  nlohmann::json json = {{"id", field.id},
                         {"name", field.name},
                         {"required", field.required},
                         {"type", TypeToJson(field.type)}};
  for (auto it = field.extra.begin(); it != field.extra.end(); ++it) json[it.key()] = it.value();
  return json;
}

Result<NestedField> ChildFromJson(const nlohmann::json& json, const char* id_key,
                                  const char* type_key, const char* required_key, std::string name,
                                  bool always_required) {
  NestedField child;
  child.name = std::move(name);
  WEIR_ASSIGN_OR_RAISE(child.id, GetInt(json, id_key, "list/map type"));
  if (always_required) {
    child.required = true;
  } else {
    WEIR_ASSIGN_OR_RAISE(child.required, GetBool(json, required_key, "list/map type"));
  }
  const auto type = json.find(type_key);
  if (type == json.end()) return Status::Invalid("list/map type: missing \"", type_key, "\"");
  WEIR_ASSIGN_OR_RAISE(child.type, TypeFromJson(*type));
  return child;
}

const NestedField* FindIn(const std::vector<NestedField>& fields, int id) {
  for (const NestedField& field : fields) {
    if (field.id == id) return &field;
    if (const NestedField* found = FindIn(field.type.fields, id)) return found;
  }
  return nullptr;
}

int HighestIn(const std::vector<NestedField>& fields) {
  int highest = 0;
  for (const NestedField& field : fields) {
    highest = std::max({highest, field.id, HighestIn(field.type.fields)});
  }
  return highest;
}

}  // namespace

Type Type::Decimal(int precision, int scale) {
  Type type = Primitive(TypeId::kDecimal);
  type.precision = precision;
  type.scale = scale;
  return type;
}

Type Type::Fixed(int length) {
  Type type = Primitive(TypeId::kFixed);
  type.length = length;
  return type;
}

bool Type::is_primitive() const {
  return id != TypeId::kStruct && id != TypeId::kList && id != TypeId::kMap &&
         id != TypeId::kVariant;
}

bool Type::operator==(const Type& other) const {
  return id == other.id && precision == other.precision && scale == other.scale &&
         length == other.length && fields == other.fields && unknown_name == other.unknown_name;
}

bool NestedField::operator==(const NestedField& other) const {
  return id == other.id && name == other.name && required == other.required && type == other.type;
}

std::string ToString(const Type& type) {
  for (const NamedType& named : kPrimitives) {
    if (named.id == type.id) return std::string(named.name);
  }
  switch (type.id) {
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
    case TypeId::kFixed:
      return "fixed[" + std::to_string(type.length) + "]";
    case TypeId::kStruct:
      return "struct";
    case TypeId::kList:
      return "list";
    case TypeId::kMap:
      return "map";
    default:
      return type.unknown_name.empty() ? "unknown" : type.unknown_name;
  }
}

Result<Type> ParsePrimitiveType(std::string_view text) {
  text = TrimSpace(text);
  for (const NamedType& named : kPrimitives) {
    if (named.name == text) return Type::Primitive(named.id);
  }
  std::vector<int> params;
  if (ParseParameters(text, "decimal", '(', ')', params)) {
    if (params.size() != 2 || params[0] < 1 || params[0] > 38 || params[1] < 0 ||
        params[1] > params[0]) {
      return Status::Invalid("decimal type \"", text, "\": precision must be 1..38 and scale ",
                             "0..precision");
    }
    return Type::Decimal(params[0], params[1]);
  }
  params.clear();
  if (ParseParameters(text, "fixed", '[', ']', params)) {
    if (params.size() != 1 || params[0] < 1) {
      return Status::Invalid("fixed type \"", text, "\": the length must be positive");
    }
    return Type::Fixed(params[0]);
  }
  // Types of newer spec versions (geometry, timestamp_ns, unknown, ...) are kept as
  // text: weir never writes them, but metadata that holds them must round-trip.
  Type unknown = Type::Primitive(TypeId::kUnknown);
  unknown.unknown_name = std::string(text);
  return unknown;
}

Result<Type> TypeFromJson(const nlohmann::json& json) {
  if (json.is_string()) return ParsePrimitiveType(json.get<std::string>());
  if (!json.is_object()) return Status::Invalid("a type must be a string or an object");
  WEIR_ASSIGN_OR_RAISE(const std::string kind, GetString(json, "type", "nested type"));
  Type type;
  if (kind == "struct") {
    type.id = TypeId::kStruct;
    const auto fields = json.find("fields");
    if (fields == json.end() || !fields->is_array()) {
      return Status::Invalid("struct type: \"fields\" must be a list");
    }
    for (const auto& field : *fields) {
      WEIR_ASSIGN_OR_RAISE(NestedField parsed, FieldFromJson(field, "struct field"));
      type.fields.push_back(std::move(parsed));
    }
  } else if (kind == "list") {
    type.id = TypeId::kList;
    WEIR_ASSIGN_OR_RAISE(NestedField element,
                         ChildFromJson(json, "element-id", "element", "element-required", "element",
                                       /*always_required=*/false));
    type.fields.push_back(std::move(element));
  } else if (kind == "map") {
    type.id = TypeId::kMap;
    WEIR_ASSIGN_OR_RAISE(NestedField key, ChildFromJson(json, "key-id", "key", "", "key",
                                                        /*always_required=*/true));
    WEIR_ASSIGN_OR_RAISE(NestedField value,
                         ChildFromJson(json, "value-id", "value", "value-required", "value",
                                       /*always_required=*/false));
    type.fields.push_back(std::move(key));
    type.fields.push_back(std::move(value));
  } else {
    return Status::Invalid("unknown nested type \"", kind, "\"");
  }
  return type;
}

nlohmann::json TypeToJson(const Type& type) {
  switch (type.id) {
    case TypeId::kStruct: {
      nlohmann::json fields = nlohmann::json::array();
      for (const NestedField& field : type.fields) fields.push_back(FieldToJson(field));
      return {{"type", "struct"}, {"fields", fields}};
    }
    case TypeId::kList:
      return {{"type", "list"},
              {"element-id", type.fields[0].id},
              {"element", TypeToJson(type.fields[0].type)},
              {"element-required", type.fields[0].required}};
    case TypeId::kMap:
      return {{"type", "map"},
              {"key-id", type.fields[0].id},
              {"key", TypeToJson(type.fields[0].type)},
              {"value-id", type.fields[1].id},
              {"value", TypeToJson(type.fields[1].type)},
              {"value-required", type.fields[1].required}};
    default:
      return ToString(type);
  }
}

Schema::Schema(int schema_id, std::vector<NestedField> fields)
    : schema_id_(schema_id), fields_(std::move(fields)) {}

Result<Schema> Schema::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Status::Invalid("a schema must be a JSON object");
  Schema schema;
  WEIR_ASSIGN_OR_RAISE(const std::optional<int64_t> id,
                       GetOptionalLong(json, "schema-id", "schema"));
  schema.schema_id_ = static_cast<int>(id.value_or(0));
  WEIR_ASSIGN_OR_RAISE(Type root, TypeFromJson(json));
  if (root.id != TypeId::kStruct) return Status::Invalid("a schema must be a struct");
  schema.fields_ = std::move(root.fields);
  if (const auto ids = json.find("identifier-field-ids"); ids != json.end() && ids->is_array()) {
    for (const auto& id_json : *ids) {
      if (!id_json.is_number_integer()) {
        return Status::Invalid("schema: identifier-field-ids must hold integers");
      }
      schema.identifier_field_ids_.push_back(id_json.get<int>());
    }
  }
  schema.extra_ = WithoutKeys(json, {"type", "fields", "schema-id", "identifier-field-ids"});
  return schema;
}

nlohmann::json Schema::ToJson() const {
  nlohmann::json fields = nlohmann::json::array();
  for (const NestedField& field : fields_) fields.push_back(FieldToJson(field));
  nlohmann::json json = {{"type", "struct"}, {"schema-id", schema_id_}, {"fields", fields}};
  if (!identifier_field_ids_.empty()) json["identifier-field-ids"] = identifier_field_ids_;
  for (auto it = extra_.begin(); it != extra_.end(); ++it) json[it.key()] = it.value();
  return json;
}

const NestedField* Schema::FindField(int id) const { return FindIn(fields_, id); }

const NestedField* Schema::FindTopLevel(std::string_view name) const {
  const std::string lower = ToLower(name);
  for (const NestedField& field : fields_) {
    if (ToLower(field.name) == lower) return &field;
  }
  return nullptr;
}

int Schema::HighestFieldId() const { return HighestIn(fields_); }

bool Schema::SameStructure(const Schema& other) const {
  return fields_ == other.fields_ && identifier_field_ids_ == other.identifier_field_ids_;
}

bool CanPromote(const Type& from, const Type& to) {
  if (from == to) return true;
  if (from.id == TypeId::kInt && to.id == TypeId::kLong) return true;
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return true;
  return from.id == TypeId::kDecimal && to.id == TypeId::kDecimal && from.scale == to.scale &&
         to.precision >= from.precision;
}

}  // namespace weir::lake::iceberg
