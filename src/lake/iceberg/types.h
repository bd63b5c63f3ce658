// Iceberg types and schemas (table spec v2, Appendix C): field ids, JSON both ways.
//
// A Type is a value: primitives carry their parameters (decimal precision/scale, fixed length),
// nested types their fields. Schemas read from other engines keep what weir does not model
// (field docs, defaults) so rewriting metadata loses nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace weir::lake::iceberg {

enum class TypeId {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kString,
  kUuid,
  kFixed,
  kBinary,
  kStruct,
  kList,
  kMap,
  kVariant,  // v3: semi-structured, neither primitive nor nested (a Parquet Variant group)
  kUnknown,  // a type this reader does not model (geometry, timestamp_ns, ...)
};

struct NestedField;

struct Type {
  TypeId id = TypeId::kUnknown;
  int precision = 0;  // decimal
  int scale = 0;      // decimal
  int length = 0;     // fixed
  // struct: its fields; list: the element (one field); map: key then value (two fields).
  std::vector<NestedField> fields;
  std::string unknown_name;  // the JSON text of a type weir does not model

  static Type Primitive(TypeId type_id) {
    Type type;
    type.id = type_id;
    return type;
  }
  static Type Decimal(int precision, int scale);
  static Type Fixed(int length);

  bool is_primitive() const;  // false for nested types and for variant
  bool operator==(const Type& other) const;
};

struct NestedField {
  int id = 0;
  std::string name;
  bool required = false;
  Type type;
  nlohmann::json extra = nlohmann::json::object();  // doc, initial-default, write-default, ...

  bool operator==(const NestedField& other) const;
};

// The spec's text of a primitive type ("long", "decimal(9,2)", "fixed[16]").
std::string ToString(const Type& type);
// Parses a primitive type's text (whitespace inside parameters allowed).
Result<Type> ParsePrimitiveType(std::string_view text);

Result<Type> TypeFromJson(const nlohmann::json& json);
nlohmann::json TypeToJson(const Type& type);

class Schema {
 public:
  Schema() = default;
  Schema(int schema_id, std::vector<NestedField> fields);

  static Result<Schema> FromJson(const nlohmann::json& json);
  nlohmann::json ToJson() const;

  int schema_id() const { return schema_id_; }
  void set_schema_id(int id) { schema_id_ = id; }
  const std::vector<NestedField>& fields() const { return fields_; }
  std::vector<NestedField>& mutable_fields() { return fields_; }
  const std::vector<int>& identifier_field_ids() const { return identifier_field_ids_; }

  // The field with this id anywhere in the schema (nested too), or nullptr.
  const NestedField* FindField(int id) const;
  // The top-level field with this name, compared ASCII case-insensitively, or nullptr.
  const NestedField* FindTopLevel(std::string_view name) const;
  // The highest field id in the schema (nested included); 0 when empty.
  int HighestFieldId() const;

  // Same fields (ids, names, types, requiredness) and identifier ids; the schema id aside.
  bool SameStructure(const Schema& other) const;

 private:
  int schema_id_ = 0;
  std::vector<NestedField> fields_;
  std::vector<int> identifier_field_ids_;
  nlohmann::json extra_ = nlohmann::json::object();
};

// Whether a column of type `from` may become `to` (int→long, float→double, decimal(P,S)→
// decimal(P',S) with P' ≥ P, or no change).
bool CanPromote(const Type& from, const Type& to);

}  // namespace weir::lake::iceberg
