#include "lake/iceberg/partition_spec.h"

#include "lake/iceberg/json_fields.h"

namespace weir::lake::iceberg {

Result<PartitionSpec> PartitionSpec::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Status::Invalid("a partition spec must be a JSON object");
  PartitionSpec spec;
  WEIR_ASSIGN_OR_RAISE(spec.spec_id, GetInt(json, "spec-id", "partition spec"));
  const auto fields = json.find("fields");
  if (fields == json.end() || !fields->is_array()) {
    return Status::Invalid("partition spec ", spec.spec_id, ": \"fields\" must be a list");
  }
  for (const auto& field_json : *fields) {
    constexpr std::string_view kWhere = "partition field";
    PartitionField field;
    if (!field_json.is_object()) return Status::Invalid("a partition field must be an object");
    if (field_json.contains("source-ids") && !field_json.contains("source-id")) {
      return Status::NotImplemented("partition field ", field_json.dump(),
                                    ": multi-argument transforms are not supported");
    }
    WEIR_ASSIGN_OR_RAISE(field.source_id, GetInt(field_json, "source-id", kWhere));
    WEIR_ASSIGN_OR_RAISE(field.field_id, GetInt(field_json, "field-id", kWhere));
    WEIR_ASSIGN_OR_RAISE(field.name, GetString(field_json, "name", kWhere));
    WEIR_ASSIGN_OR_RAISE(const std::string transform, GetString(field_json, "transform", kWhere));
    WEIR_ASSIGN_OR_RAISE(field.transform, Transform::ParseFromMetadata(transform));
    spec.fields.push_back(std::move(field));
  }
  return spec;
}

nlohmann::json PartitionSpec::FieldsJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const PartitionField& field : fields) {
    out.push_back({{"name", field.name},
                   {"transform", field.transform.ToString()},
                   {"source-id", field.source_id},
                   {"field-id", field.field_id}});
  }
  return out;
}

nlohmann::json PartitionSpec::ToJson() const {
  return {{"spec-id", spec_id}, {"fields", FieldsJson()}};
}

bool PartitionSpec::EquivalentTo(const PartitionSpec& other) const {
  if (fields.size() != other.fields.size()) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].source_id != other.fields[i].source_id ||
        !(fields[i].transform == other.fields[i].transform) ||
        fields[i].name != other.fields[i].name) {
      return false;
    }
  }
  return true;
}

Result<std::vector<NestedField>> PartitionType(const PartitionSpec& spec, const Schema& schema) {
  std::vector<NestedField> out;
  for (const PartitionField& field : spec.fields) {
    const NestedField* source = schema.FindField(field.source_id);
    if (source == nullptr) {
      return Status::Invalid("partition field ", field.name, ": source column id ", field.source_id,
                             " is not in schema ", schema.schema_id());
    }
    auto type = field.transform.ResultType(source->type);
    if (!type.ok()) {
      return Status::Invalid("partition field ", field.name, " (", field.transform.ToString(),
                             " of ", source->name, "): ", type.status().message());
    }
    out.push_back(NestedField{field.field_id, field.name, false, *type});
  }
  return out;
}

Result<std::vector<Value>> PartitionTuple(const PartitionSpec& spec, const Schema& schema,
                                          const std::vector<Value>& source_values) {
  if (source_values.size() != spec.fields.size()) {
    return Status::Invalid("got ", source_values.size(), " source values for ", spec.fields.size(),
                           " partition fields");
  }
  std::vector<Value> tuple;
  for (size_t i = 0; i < spec.fields.size(); ++i) {
    const PartitionField& field = spec.fields[i];
    const NestedField* source = schema.FindField(field.source_id);
    if (source == nullptr) {
      return Status::Invalid("partition field ", field.name, ": no source column ",
                             field.source_id);
    }
    WEIR_ASSIGN_OR_RAISE(Value value, field.transform.Apply(source->type, source_values[i]));
    tuple.push_back(std::move(value));
  }
  return tuple;
}

Result<std::string> PartitionPath(const PartitionSpec& spec, const Schema& schema,
                                  const std::vector<Value>& values) {
  WEIR_ASSIGN_OR_RAISE(const std::vector<NestedField> type, PartitionType(spec, schema));
  if (values.size() != type.size()) {
    return Status::Invalid("got ", values.size(), " partition values for ", type.size(),
                           " partition fields");
  }
  std::string path;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) path += '/';
    path += EscapePathComponent(spec.fields[i].name) + "=" +
            EscapePathComponent(
                PartitionHumanString(spec.fields[i].transform, type[i].type, values[i]));
  }
  return path;
}

Result<SortOrder> SortOrder::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Status::Invalid("a sort order must be a JSON object");
  SortOrder order;
  WEIR_ASSIGN_OR_RAISE(order.order_id, GetInt(json, "order-id", "sort order"));
  const auto fields = json.find("fields");
  if (fields == json.end() || !fields->is_array()) {
    return Status::Invalid("sort order ", order.order_id, ": \"fields\" must be a list");
  }
  for (const auto& field_json : *fields) {
    constexpr std::string_view kWhere = "sort field";
    SortField field;
    if (!field_json.is_object()) return Status::Invalid("a sort field must be an object");
    WEIR_ASSIGN_OR_RAISE(field.source_id, GetInt(field_json, "source-id", kWhere));
    WEIR_ASSIGN_OR_RAISE(const std::string transform, GetString(field_json, "transform", kWhere));
    WEIR_ASSIGN_OR_RAISE(field.transform, Transform::ParseFromMetadata(transform));
    WEIR_ASSIGN_OR_RAISE(const std::string direction, GetString(field_json, "direction", kWhere));
    WEIR_ASSIGN_OR_RAISE(const std::string nulls, GetString(field_json, "null-order", kWhere));
    if (direction != "asc" && direction != "desc") {
      return Status::Invalid("sort field: direction must be asc or desc, got ", direction);
    }
    if (nulls != "nulls-first" && nulls != "nulls-last") {
      return Status::Invalid("sort field: null-order must be nulls-first or nulls-last, got ",
                             nulls);
    }
    field.direction = direction == "asc" ? SortDirection::kAsc : SortDirection::kDesc;
    field.null_order = nulls == "nulls-first" ? NullOrder::kNullsFirst : NullOrder::kNullsLast;
    order.fields.push_back(std::move(field));
  }
  return order;
}

nlohmann::json SortOrder::ToJson() const {
  nlohmann::json fields_json = nlohmann::json::array();
  for (const SortField& field : fields) {
    fields_json.push_back(
        {{"transform", field.transform.ToString()},
         {"source-id", field.source_id},
         {"direction", field.direction == SortDirection::kAsc ? "asc" : "desc"},
         {"null-order",
          field.null_order == NullOrder::kNullsFirst ? "nulls-first" : "nulls-last"}});
  }
  return {{"order-id", order_id}, {"fields", fields_json}};
}

}  // namespace weir::lake::iceberg
