// DuckDB's own rendering, for types PostgreSQL has no counterpart of (STRUCT, MAP, UNION,
// BIGNUM, ...): the value is rebuilt from the vector (one allocation per value; these types are
// rare) and cast to VARCHAR by DuckDB.
#include "serve/values/values_internal.h"

namespace weir::serve::values_internal {
namespace {

// BIGNUM storage: a 3-byte header (top bit set when positive; the size in bytes below it), then
// the magnitude big-endian; a negative number has every byte inverted.
duckdb_value BignumValue(std::string_view storage) {
  if (storage.size() < 3) return nullptr;
  const bool negative = (static_cast<uint8_t>(storage[0]) & 0x80) == 0;
  std::string magnitude(storage.substr(3));
  if (negative) {
    for (char& c : magnitude) c = static_cast<char>(~static_cast<uint8_t>(c));
  }
  duckdb_bignum bignum{reinterpret_cast<uint8_t*>(magnitude.data()), magnitude.size(), negative};
  return duckdb_create_bignum(bignum);
}

duckdb_value ValueAt(duckdb_vector vector, duckdb_logical_type type, idx_t row);

// A LIST/ARRAY/MAP value from `count` child rows starting at `offset`.
duckdb_value NestedValueAt(duckdb_vector vector, duckdb_logical_type type, idx_t row) {
  const duckdb_type id = duckdb_get_type_id(type);
  const void* data = duckdb_vector_get_data(vector);
  idx_t offset = 0;
  idx_t count = 0;
  if (id == DUCKDB_TYPE_ARRAY) {
    count = duckdb_array_type_array_size(type);
    offset = row * count;
  } else {
    offset = At<duckdb_list_entry>(data, row).offset;
    count = At<duckdb_list_entry>(data, row).length;
  }
  std::vector<OwnedValue> owned;
  std::vector<duckdb_value> raw;
  auto collect = [&](duckdb_vector child, duckdb_logical_type child_type) -> bool {
    for (idx_t i = 0; i < count; ++i) {
      owned.emplace_back(ValueAt(child, child_type, offset + i));
      if (!owned.back()) return false;
      raw.push_back(owned.back().get());
    }
    return true;
  };
  if (id == DUCKDB_TYPE_MAP) {
    duckdb_vector entries = duckdb_list_vector_get_child(vector);
    lake::DuckDbLogicalType key_type(duckdb_map_type_key_type(type));
    lake::DuckDbLogicalType value_type(duckdb_map_type_value_type(type));
    if (!collect(duckdb_struct_vector_get_child(entries, 0), key_type.get()) ||
        !collect(duckdb_struct_vector_get_child(entries, 1), value_type.get())) {
      return nullptr;
    }
    duckdb_value none = nullptr;
    return count == 0 ? duckdb_create_map_value(type, &none, &none, 0)
                      : duckdb_create_map_value(type, raw.data(), raw.data() + count, count);
  }
  const bool is_list = id == DUCKDB_TYPE_LIST;
  lake::DuckDbLogicalType child_type(is_list ? duckdb_list_type_child_type(type)
                                             : duckdb_array_type_child_type(type));
  duckdb_vector child =
      is_list ? duckdb_list_vector_get_child(vector) : duckdb_array_vector_get_child(vector);
  if (!collect(child, child_type.get())) return nullptr;
  return is_list ? CreateList(child_type.get(), raw)
                 : duckdb_create_array_value(child_type.get(), raw.data(), count);
}

duckdb_value ValueAt(duckdb_vector vector, duckdb_logical_type type, idx_t row) {
  const uint64_t* validity = duckdb_vector_get_validity(vector);
  if (validity != nullptr && ((validity[row >> 6] >> (row & 63)) & 1) == 0) {
    return duckdb_create_null_value();
  }
  const void* data = duckdb_vector_get_data(vector);
  switch (duckdb_get_type_id(type)) {
    case DUCKDB_TYPE_BOOLEAN:
      return duckdb_create_bool(At<bool>(data, row));
    case DUCKDB_TYPE_TINYINT:
      return duckdb_create_int8(At<int8_t>(data, row));
    case DUCKDB_TYPE_SMALLINT:
      return duckdb_create_int16(At<int16_t>(data, row));
    case DUCKDB_TYPE_INTEGER:
      return duckdb_create_int32(At<int32_t>(data, row));
    case DUCKDB_TYPE_BIGINT:
      return duckdb_create_int64(At<int64_t>(data, row));
    case DUCKDB_TYPE_UTINYINT:
      return duckdb_create_uint8(At<uint8_t>(data, row));
    case DUCKDB_TYPE_USMALLINT:
      return duckdb_create_uint16(At<uint16_t>(data, row));
    case DUCKDB_TYPE_UINTEGER:
      return duckdb_create_uint32(At<uint32_t>(data, row));
    case DUCKDB_TYPE_UBIGINT:
      return duckdb_create_uint64(At<uint64_t>(data, row));
    case DUCKDB_TYPE_HUGEINT:
      return duckdb_create_hugeint(At<duckdb_hugeint>(data, row));
    case DUCKDB_TYPE_UHUGEINT:
      return duckdb_create_uhugeint(At<duckdb_uhugeint>(data, row));
    case DUCKDB_TYPE_FLOAT:
      return duckdb_create_float(At<float>(data, row));
    case DUCKDB_TYPE_DOUBLE:
      return duckdb_create_double(At<double>(data, row));
    case DUCKDB_TYPE_DATE:
      return duckdb_create_date(At<duckdb_date>(data, row));
    case DUCKDB_TYPE_TIME:
      return duckdb_create_time(At<duckdb_time>(data, row));
    case DUCKDB_TYPE_TIME_NS:
      return duckdb_create_time_ns(At<duckdb_time_ns>(data, row));
    case DUCKDB_TYPE_TIME_TZ:
      return duckdb_create_time_tz_value(At<duckdb_time_tz>(data, row));
    case DUCKDB_TYPE_TIMESTAMP:
      return duckdb_create_timestamp(At<duckdb_timestamp>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return duckdb_create_timestamp_tz(At<duckdb_timestamp>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_S:
      return duckdb_create_timestamp_s(At<duckdb_timestamp_s>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_MS:
      return duckdb_create_timestamp_ms(At<duckdb_timestamp_ms>(data, row));
    case DUCKDB_TYPE_TIMESTAMP_NS:
      return duckdb_create_timestamp_ns(At<duckdb_timestamp_ns>(data, row));
    case DUCKDB_TYPE_INTERVAL:
      return duckdb_create_interval(At<duckdb_interval>(data, row));
    case DUCKDB_TYPE_VARCHAR: {
      const std::string_view text = StringAt(data, row);
      return duckdb_create_varchar_length(text.data(), text.size());
    }
    case DUCKDB_TYPE_BLOB: {
      const std::string_view bytes = StringAt(data, row);
      return duckdb_create_blob(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    case DUCKDB_TYPE_BIT: {
      std::string bits(StringAt(data, row));
      return duckdb_create_bit({reinterpret_cast<uint8_t*>(bits.data()), bits.size()});
    }
    case DUCKDB_TYPE_BIGNUM:
      return BignumValue(StringAt(data, row));
    case DUCKDB_TYPE_UUID: {
      const auto& stored = At<duckdb_hugeint>(data, row);
      return duckdb_create_uuid(
          {stored.lower, static_cast<uint64_t>(stored.upper) ^ (uint64_t{1} << 63)});
    }
    case DUCKDB_TYPE_DECIMAL: {
      duckdb_decimal decimal{duckdb_decimal_width(type), duckdb_decimal_scale(type), {0, 0}};
      int64_t small = 0;
      switch (duckdb_decimal_internal_type(type)) {
        case DUCKDB_TYPE_SMALLINT:
          small = At<int16_t>(data, row);
          break;
        case DUCKDB_TYPE_INTEGER:
          small = At<int32_t>(data, row);
          break;
        case DUCKDB_TYPE_BIGINT:
          small = At<int64_t>(data, row);
          break;
        default:
          decimal.value = At<duckdb_hugeint>(data, row);
          return duckdb_create_decimal(decimal);
      }
      decimal.value = {static_cast<uint64_t>(small), small < 0 ? -1 : 0};
      return duckdb_create_decimal(decimal);
    }
    case DUCKDB_TYPE_ENUM: {
      uint64_t index = 0;
      switch (duckdb_enum_internal_type(type)) {
        case DUCKDB_TYPE_UTINYINT:
          index = At<uint8_t>(data, row);
          break;
        case DUCKDB_TYPE_USMALLINT:
          index = At<uint16_t>(data, row);
          break;
        default:
          index = At<uint32_t>(data, row);
          break;
      }
      return duckdb_create_enum_value(type, index);
    }
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_ARRAY:
    case DUCKDB_TYPE_MAP:
      return NestedValueAt(vector, type, row);
    case DUCKDB_TYPE_STRUCT: {
      const idx_t count = duckdb_struct_type_child_count(type);
      std::vector<OwnedValue> owned;
      std::vector<duckdb_value> raw;
      for (idx_t i = 0; i < count; ++i) {
        lake::DuckDbLogicalType child_type(duckdb_struct_type_child_type(type, i));
        owned.emplace_back(
            ValueAt(duckdb_struct_vector_get_child(vector, i), child_type.get(), row));
        if (!owned.back()) return nullptr;
        raw.push_back(owned.back().get());
      }
      return duckdb_create_struct_value(type, raw.data());
    }
    case DUCKDB_TYPE_UNION: {
      // A union's vector is a struct: the tag, then one child per member.
      const uint8_t tag =
          At<uint8_t>(duckdb_vector_get_data(duckdb_struct_vector_get_child(vector, 0)), row);
      lake::DuckDbLogicalType member_type(duckdb_union_type_member_type(type, tag));
      OwnedValue member(
          ValueAt(duckdb_struct_vector_get_child(vector, idx_t{tag} + 1), member_type.get(), row));
      if (!member) return nullptr;
      return duckdb_create_union_value(type, tag, member.get());
    }
    default:
      return nullptr;
  }
}

}  // namespace

void AppendRendered(const Node& node, idx_t row, Sink& out) {
  if (node.owned_type == nullptr) return;
  OwnedValue value(ValueAt(node.vector, node.owned_type.get(), row));
  if (!value) return;
  lake::DuckDbString text(duckdb_get_varchar(value.get()));
  out += text.view();
}

}  // namespace weir::serve::values_internal
