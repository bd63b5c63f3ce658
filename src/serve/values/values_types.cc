// PostgreSQL's type table (the types weir sends and the ones it accepts from clients) and the
// mapping of a DuckDB type to its PostgreSQL type and encoding plan.
#include <fmt/format.h>

#include "serve/values/values.h"
#include "serve/values/values_internal.h"

namespace weir::serve {
namespace values_internal {
namespace {

constexpr PgBaseType kPgBool{16, 1000, 1, "boolean", "BOOLEAN"};
constexpr PgBaseType kPgInt2{21, 1005, 2, "smallint", "SMALLINT"};
constexpr PgBaseType kPgInt4{23, 1007, 4, "integer", "INTEGER"};
constexpr PgBaseType kPgInt8{20, 1016, 8, "bigint", "BIGINT"};
constexpr PgBaseType kPgFloat4{700, 1021, 4, "real", "FLOAT"};
constexpr PgBaseType kPgFloat8{701, 1022, 8, "double precision", "DOUBLE"};
// An unconstrained numeric keeps every digit; DuckDB's widest decimal is the closest fit.
constexpr PgBaseType kPgNumeric{1700, 1231, -1, "numeric", "DECIMAL(38,10)"};
constexpr PgBaseType kPgText{25, 1009, -1, "text", "VARCHAR"};
constexpr PgBaseType kPgBytea{17, 1001, -1, "bytea", "BLOB"};
constexpr PgBaseType kPgDate{1082, 1182, 4, "date", "DATE"};
constexpr PgBaseType kPgTime{1083, 1183, 8, "time without time zone", "TIME"};
constexpr PgBaseType kPgTimeTz{1266, 1270, 12, "time with time zone", "TIMETZ"};
constexpr PgBaseType kPgTimestamp{1114, 1115, 8, "timestamp without time zone", "TIMESTAMP"};
constexpr PgBaseType kPgTimestampTz{1184, 1185, 8, "timestamp with time zone", "TIMESTAMPTZ"};
constexpr PgBaseType kPgInterval{1186, 1187, 16, "interval", "INTERVAL"};
constexpr PgBaseType kPgUuid{2950, 2951, 16, "uuid", "UUID"};
constexpr PgBaseType kPgJson{114, 199, -1, "json", "JSON"};
// Accepted from clients only (never sent).
constexpr PgBaseType kPgVarchar{1043, 1015, -1, "character varying", "VARCHAR"};
constexpr PgBaseType kPgBpchar{1042, 1014, -1, "character", "VARCHAR"};
constexpr PgBaseType kPgName{19, 1003, 64, "name", "VARCHAR"};
constexpr PgBaseType kPgJsonb{3802, 3807, -1, "jsonb", "JSON"};
constexpr PgBaseType kPgOid{26, 1028, 4, "oid", "UINTEGER"};

constexpr const PgBaseType* kPgTypes[] = {
    &kPgBool,      &kPgInt2,        &kPgInt4,     &kPgInt8, &kPgFloat4, &kPgFloat8,
    &kPgNumeric,   &kPgText,        &kPgBytea,    &kPgDate, &kPgTime,   &kPgTimeTz,
    &kPgTimestamp, &kPgTimestampTz, &kPgInterval, &kPgUuid, &kPgJson,   &kPgVarchar,
    &kPgBpchar,    &kPgName,        &kPgJsonb,    &kPgOid,
};

PgType MakePgType(const PgBaseType& base, int32_t modifier = -1, std::string name = {}) {
  return {base.oid, base.size, modifier, name.empty() ? std::string(base.name) : std::move(name)};
}

bool IsJson(duckdb_logical_type type) {
  lake::DuckDbString alias(duckdb_logical_type_get_alias(type));
  return alias.view() == "JSON";
}

// An owned copy of `type` (the C API has no copy; a list type's child is one).
duckdb_logical_type CopyType(duckdb_logical_type type) {
  lake::DuckDbLogicalType list(duckdb_create_list_type(type));
  return duckdb_list_type_child_type(list.get());
}

void SetScalar(Node& node, Kind kind, const PgBaseType& base) {
  node.kind = kind;
  node.pg = MakePgType(base);
}

// The array type of element type `oid` (text[] for a type not in the table, which BuildNode
// never makes).
uint32_t ArrayOidOf(uint32_t oid) {
  const PgBaseType* base = FindPgType(oid);
  return base != nullptr ? base->array_oid : kPgText.array_oid;
}

}  // namespace

const PgBaseType* FindPgType(uint32_t oid) {
  for (const PgBaseType* type : kPgTypes) {
    if (type->oid == oid) return type;
  }
  return nullptr;
}

// The element type of array type `oid` (nullptr when `oid` is no array type of ours).
const PgBaseType* FindPgArrayElement(uint32_t oid) {
  for (const PgBaseType* type : kPgTypes) {
    if (type->array_oid == oid) return type;
  }
  return nullptr;
}

std::unique_ptr<Node> BuildNode(duckdb_logical_type type) {
  auto node = std::make_unique<Node>();
  const duckdb_type id = duckdb_get_type_id(type);
  switch (id) {
    case DUCKDB_TYPE_BOOLEAN:
      SetScalar(*node, Kind::kBool, kPgBool);
      break;
    case DUCKDB_TYPE_TINYINT:
      SetScalar(*node, Kind::kInt8, kPgInt2);
      break;
    case DUCKDB_TYPE_SMALLINT:
      SetScalar(*node, Kind::kInt16, kPgInt2);
      break;
    case DUCKDB_TYPE_UTINYINT:
      SetScalar(*node, Kind::kUInt8, kPgInt2);
      break;
    case DUCKDB_TYPE_INTEGER:
      SetScalar(*node, Kind::kInt32, kPgInt4);
      break;
    case DUCKDB_TYPE_USMALLINT:
      SetScalar(*node, Kind::kUInt16, kPgInt4);
      break;
    case DUCKDB_TYPE_BIGINT:
      SetScalar(*node, Kind::kInt64, kPgInt8);
      break;
    case DUCKDB_TYPE_UINTEGER:
      SetScalar(*node, Kind::kUInt32, kPgInt8);
      break;
    case DUCKDB_TYPE_UBIGINT:
      SetScalar(*node, Kind::kUInt64, kPgNumeric);
      break;
    case DUCKDB_TYPE_HUGEINT:
      SetScalar(*node, Kind::kHugeint, kPgNumeric);
      break;
    case DUCKDB_TYPE_UHUGEINT:
      SetScalar(*node, Kind::kUHugeint, kPgNumeric);
      break;
    case DUCKDB_TYPE_FLOAT:
      SetScalar(*node, Kind::kFloat, kPgFloat4);
      break;
    case DUCKDB_TYPE_DOUBLE:
      SetScalar(*node, Kind::kDouble, kPgFloat8);
      break;
    case DUCKDB_TYPE_DECIMAL: {
      const int width = duckdb_decimal_width(type);
      node->scale = duckdb_decimal_scale(type);
      switch (duckdb_decimal_internal_type(type)) {
        case DUCKDB_TYPE_SMALLINT:
          node->kind = Kind::kDecimal16;
          break;
        case DUCKDB_TYPE_INTEGER:
          node->kind = Kind::kDecimal32;
          break;
        case DUCKDB_TYPE_BIGINT:
          node->kind = Kind::kDecimal64;
          break;
        default:
          node->kind = Kind::kDecimal128;
          break;
      }
      node->pg = MakePgType(kPgNumeric, ((width << 16) | node->scale) + 4,
                            fmt::format("numeric({},{})", width, node->scale));
      break;
    }
    case DUCKDB_TYPE_VARCHAR:
      SetScalar(*node, Kind::kString, IsJson(type) ? kPgJson : kPgText);
      break;
    case DUCKDB_TYPE_BLOB:
    case DUCKDB_TYPE_GEOMETRY:  // its WKB, as PostgreSQL clients without PostGIS can read it
      SetScalar(*node, Kind::kBlob, kPgBytea);
      break;
    case DUCKDB_TYPE_DATE:
      SetScalar(*node, Kind::kDate, kPgDate);
      break;
    case DUCKDB_TYPE_TIME:
      SetScalar(*node, Kind::kTime, kPgTime);
      break;
    case DUCKDB_TYPE_TIME_NS:
      SetScalar(*node, Kind::kTimeNs, kPgTime);
      break;
    case DUCKDB_TYPE_TIME_TZ:
      SetScalar(*node, Kind::kTimeTz, kPgTimeTz);
      break;
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
      SetScalar(*node, Kind::kTimestamp, kPgTimestamp);
      node->unit = id == DUCKDB_TYPE_TIMESTAMP_S    ? TimeUnit::kSeconds
                   : id == DUCKDB_TYPE_TIMESTAMP_MS ? TimeUnit::kMillis
                   : id == DUCKDB_TYPE_TIMESTAMP_NS ? TimeUnit::kNanos
                                                    : TimeUnit::kMicros;
      break;
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      SetScalar(*node, Kind::kTimestampTz, kPgTimestampTz);
      break;
    case DUCKDB_TYPE_INTERVAL:
      SetScalar(*node, Kind::kInterval, kPgInterval);
      break;
    case DUCKDB_TYPE_UUID:
      SetScalar(*node, Kind::kUuid, kPgUuid);
      break;
    case DUCKDB_TYPE_ENUM: {
      switch (duckdb_enum_internal_type(type)) {
        case DUCKDB_TYPE_UTINYINT:
          SetScalar(*node, Kind::kEnum8, kPgText);
          break;
        case DUCKDB_TYPE_USMALLINT:
          SetScalar(*node, Kind::kEnum16, kPgText);
          break;
        default:
          SetScalar(*node, Kind::kEnum32, kPgText);
          break;
      }
      const uint32_t size = duckdb_enum_dictionary_size(type);
      node->dictionary.reserve(size);
      for (uint32_t i = 0; i < size; ++i) {
        lake::DuckDbString entry(duckdb_enum_dictionary_value(type, i));
        node->dictionary.emplace_back(entry.view());
      }
      break;
    }
    case DUCKDB_TYPE_BIT:
      SetScalar(*node, Kind::kBit, kPgText);
      break;
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_ARRAY: {
      const bool is_list = id == DUCKDB_TYPE_LIST;
      lake::DuckDbLogicalType child_type(is_list ? duckdb_list_type_child_type(type)
                                                 : duckdb_array_type_child_type(type));
      node->kind = is_list ? Kind::kList : Kind::kArray;
      if (!is_list) node->array_size = duckdb_array_type_array_size(type);
      node->child = BuildNode(child_type.get());
      const PgType& element = node->child->pg;
      if (node->child->IsArray()) {
        node->pg = element;  // PostgreSQL's arrays of arrays are one multi-dimensional type
      } else {
        node->pg = PgType{ArrayOidOf(element.oid), -1, element.modifier, element.name + "[]"};
      }
      break;
    }
    default:
      SetScalar(*node, Kind::kRendered, kPgText);
      node->owned_type.reset(CopyType(type));
      break;
  }
  return node;
}

}  // namespace values_internal

using values_internal::FindPgArrayElement;
using values_internal::FindPgType;
using values_internal::PgBaseType;

PgType PgTypeOf(duckdb_logical_type type) { return values_internal::BuildNode(type)->pg; }

std::string DuckDbTypeNameOf(uint32_t oid) {
  if (const PgBaseType* type = FindPgType(oid)) return type->duckdb_name;
  if (const PgBaseType* element = FindPgArrayElement(oid)) {
    return std::string(element->duckdb_name) + "[]";
  }
  return "";
}

bool NeedsVarcharCast(duckdb_logical_type type) {
  auto child_needs = [](duckdb_logical_type child) {
    lake::DuckDbLogicalType owned(child);
    return NeedsVarcharCast(owned.get());
  };
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_VARIANT:
      return true;
    case DUCKDB_TYPE_LIST:
      return child_needs(duckdb_list_type_child_type(type));
    case DUCKDB_TYPE_ARRAY:
      return child_needs(duckdb_array_type_child_type(type));
    case DUCKDB_TYPE_MAP:
      return child_needs(duckdb_map_type_key_type(type)) ||
             child_needs(duckdb_map_type_value_type(type));
    case DUCKDB_TYPE_STRUCT:
      for (idx_t i = 0; i < duckdb_struct_type_child_count(type); ++i) {
        if (child_needs(duckdb_struct_type_child_type(type, i))) return true;
      }
      return false;
    case DUCKDB_TYPE_UNION:
      for (idx_t i = 0; i < duckdb_union_type_member_count(type); ++i) {
        if (child_needs(duckdb_union_type_member_type(type, i))) return true;
      }
      return false;
    default:
      return false;
  }
}

}  // namespace weir::serve
