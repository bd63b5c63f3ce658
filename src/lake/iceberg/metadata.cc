#include "lake/iceberg/metadata.h"

#include <algorithm>
#include <charconv>

#include "base/text.h"
#include "lake/iceberg/json_fields.h"

namespace weir::lake::iceberg {
namespace {

constexpr std::string_view kWhere = "table metadata";

template <typename T, typename Parse>
Status ParseList(const nlohmann::json& json, const char* key, std::vector<T>& out, Parse parse,
                 bool required) {
  const auto it = json.find(key);
  if (it == json.end() || it->is_null()) {
    return required ? Status::Invalid(kWhere, ": missing \"", key, "\"") : Status::OK();
  }
  if (!it->is_array()) return Status::Invalid(kWhere, ": \"", key, "\" must be a list");
  for (const auto& element : *it) {
    auto parsed = parse(element);
    if (!parsed.ok()) return WithContext(parsed.status(), std::string(kWhere) + ", " + key);
    out.push_back(std::move(parsed).ValueUnsafe());
  }
  return Status::OK();
}

Result<std::map<std::string, std::string>> StringMap(const nlohmann::json& json,
                                                     std::string_view where) {
  std::map<std::string, std::string> out;
  if (json.is_null()) return out;
  if (!json.is_object()) return Status::Invalid(where, " must be an object of strings");
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (!it->is_string()) {
      return Status::Invalid(where, ": the value of \"", it.key(), "\" must be a string");
    }
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

}  // namespace

Result<Snapshot> SnapshotFromJson(const nlohmann::json& json) {
  constexpr std::string_view kSnap = "snapshot";
  if (!json.is_object()) return Status::Invalid("a snapshot must be an object");
  Snapshot s;
  WEIR_ASSIGN_OR_RAISE(s.snapshot_id, GetLong(json, "snapshot-id", kSnap));
  WEIR_ASSIGN_OR_RAISE(s.parent_snapshot_id, GetOptionalLong(json, "parent-snapshot-id", kSnap));
  // Snapshots made before a table was upgraded from format 1 have no sequence number: 0.
  WEIR_ASSIGN_OR_RAISE(const auto sequence, GetOptionalLong(json, "sequence-number", kSnap));
  s.sequence_number = sequence.value_or(0);
  WEIR_ASSIGN_OR_RAISE(s.timestamp_ms, GetLong(json, "timestamp-ms", kSnap));
  // Format 1 snapshots may list manifests inline ("manifests", kept in extra) instead.
  WEIR_ASSIGN_OR_RAISE(const auto list, GetOptionalString(json, "manifest-list", kSnap));
  s.manifest_list = list.value_or("");
  if (const auto summary = json.find("summary"); summary != json.end()) {
    WEIR_ASSIGN_OR_RAISE(s.summary, StringMap(*summary, "snapshot summary"));
  }
  WEIR_ASSIGN_OR_RAISE(const auto schema_id, GetOptionalLong(json, "schema-id", kSnap));
  if (schema_id) s.schema_id = static_cast<int>(*schema_id);
  WEIR_ASSIGN_OR_RAISE(s.first_row_id, GetOptionalLong(json, "first-row-id", kSnap));
  WEIR_ASSIGN_OR_RAISE(s.added_rows, GetOptionalLong(json, "added-rows", kSnap));
  s.extra =
      WithoutKeys(json, {"snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms",
                         "manifest-list", "summary", "schema-id", "first-row-id", "added-rows"});
  return s;
}

nlohmann::json SnapshotToJson(const Snapshot& s) {
  nlohmann::json json = {{"snapshot-id", s.snapshot_id},
                         {"sequence-number", s.sequence_number},
                         {"timestamp-ms", s.timestamp_ms},
                         {"summary", s.summary}};
  if (!s.manifest_list.empty()) json["manifest-list"] = s.manifest_list;
  if (s.parent_snapshot_id) json["parent-snapshot-id"] = *s.parent_snapshot_id;
  if (s.schema_id) json["schema-id"] = *s.schema_id;
  if (s.first_row_id) json["first-row-id"] = *s.first_row_id;
  if (s.added_rows) json["added-rows"] = *s.added_rows;
  for (auto it = s.extra.begin(); it != s.extra.end(); ++it) json[it.key()] = it.value();
  return json;
}

const std::string* Snapshot::SummaryValue(const std::string& key) const {
  const auto it = summary.find(key);
  return it == summary.end() ? nullptr : &it->second;
}

int FormatVersionFor(const Schema& schema) {
  for (const NestedField& field : schema.fields()) {
    if (field.type.id == TypeId::kVariant) return 3;
  }
  return 2;
}

Result<TableMetadata> TableMetadata::Create(const NewTable& table) {
  if (table.location.empty()) return Status::Invalid("a new table needs a location");
  if (table.format_version < kMinFormatVersion || table.format_version > kMaxFormatVersion) {
    return Status::Invalid("weir writes Iceberg format versions ", kMinFormatVersion, " and ",
                           kMaxFormatVersion, ", not ", table.format_version);
  }
  if (table.format_version < FormatVersionFor(table.schema)) {
    return Status::Invalid("a variant column needs Iceberg format version 3");
  }
  if (table.table_uuid.size() != 36) {
    return Status::Invalid("table uuid \"", table.table_uuid, "\" is not a UUID");
  }
  TableMetadata m;
  m.format_version_ = table.format_version;
  m.table_uuid_ = table.table_uuid;
  m.location_ = table.location;
  while (m.location_.size() > 1 && m.location_.back() == '/') m.location_.pop_back();
  m.last_updated_ms_ = table.now_ms;
  Schema schema = table.schema;
  schema.set_schema_id(0);
  m.last_column_id_ = schema.HighestFieldId();
  PartitionSpec spec;
  int field_id = kFirstPartitionFieldId;
  for (PartitionField field : table.partition_fields) {
    field.field_id = field_id++;
    spec.fields.push_back(std::move(field));
  }
  WEIR_RETURN_NOT_OK(PartitionType(spec, schema).status());
  m.last_partition_id_ = field_id - 1;
  m.schemas_.push_back(std::move(schema));
  m.specs_.push_back(std::move(spec));
  m.sort_orders_.push_back(SortOrder{});
  m.properties_ = table.properties;
  return m;
}

Status TableMetadata::DeclareSortOrder(std::vector<SortField> fields) {
  if (fields.empty()) return Status::OK();
  for (const SortField& field : fields) {
    if (current_schema().FindField(field.source_id) == nullptr) {
      return Status::Invalid("sort field source id ", field.source_id, " is not in the schema");
    }
  }
  sort_orders_.push_back(SortOrder{1, std::move(fields)});
  default_sort_order_id_ = 1;
  return Status::OK();
}

SortOrder TableMetadata::default_sort_order() const {
  for (const SortOrder& order : sort_orders_) {
    if (order.order_id == default_sort_order_id_) return order;
  }
  return SortOrder{};
}

Result<TableMetadata> TableMetadata::Parse(std::string_view text) {
  WEIR_ASSIGN_OR_RAISE(const nlohmann::json json, ParseJson(text, kWhere));
  return FromJson(json);
}

Result<TableMetadata> TableMetadata::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Status::Invalid(kWhere, " must be a JSON object");
  TableMetadata m;
  WEIR_ASSIGN_OR_RAISE(m.format_version_, GetInt(json, "format-version", kWhere));
  if (m.format_version_ < kMinFormatVersion || m.format_version_ > kMaxFormatVersion) {
    return Status::NotImplemented("table metadata has format-version ", m.format_version_,
                                  "; weir reads and writes format versions 2 and 3");
  }
  if (m.format_version_ >= 3) {
    WEIR_ASSIGN_OR_RAISE(m.next_row_id_, GetLong(json, "next-row-id", kWhere));
  }
  WEIR_ASSIGN_OR_RAISE(m.table_uuid_, GetString(json, "table-uuid", kWhere));
  WEIR_ASSIGN_OR_RAISE(m.location_, GetString(json, "location", kWhere));
  WEIR_ASSIGN_OR_RAISE(m.last_sequence_number_, GetLong(json, "last-sequence-number", kWhere));
  WEIR_ASSIGN_OR_RAISE(m.last_updated_ms_, GetLong(json, "last-updated-ms", kWhere));
  WEIR_ASSIGN_OR_RAISE(m.last_column_id_, GetInt(json, "last-column-id", kWhere));
  WEIR_RETURN_NOT_OK(ParseList(json, "schemas", m.schemas_, Schema::FromJson, true));
  WEIR_ASSIGN_OR_RAISE(m.current_schema_id_, GetInt(json, "current-schema-id", kWhere));
  WEIR_RETURN_NOT_OK(ParseList(json, "partition-specs", m.specs_, PartitionSpec::FromJson, true));
  WEIR_ASSIGN_OR_RAISE(m.default_spec_id_, GetInt(json, "default-spec-id", kWhere));
  WEIR_ASSIGN_OR_RAISE(m.last_partition_id_, GetInt(json, "last-partition-id", kWhere));
  if (const auto p = json.find("properties"); p != json.end()) {
    WEIR_ASSIGN_OR_RAISE(m.properties_, StringMap(*p, "table properties"));
  }
  WEIR_RETURN_NOT_OK(ParseList(json, "snapshots", m.snapshots_, SnapshotFromJson, false));
  WEIR_RETURN_NOT_OK(ParseList(
      json, "snapshot-log", m.snapshot_log_,
      [](const nlohmann::json& e) -> Result<SnapshotLogEntry> {
        SnapshotLogEntry entry;
        WEIR_ASSIGN_OR_RAISE(entry.timestamp_ms, GetLong(e, "timestamp-ms", "snapshot-log"));
        WEIR_ASSIGN_OR_RAISE(entry.snapshot_id, GetLong(e, "snapshot-id", "snapshot-log"));
        return entry;
      },
      false));
  WEIR_RETURN_NOT_OK(ParseList(
      json, "metadata-log", m.metadata_log_,
      [](const nlohmann::json& e) -> Result<MetadataLogEntry> {
        MetadataLogEntry entry;
        WEIR_ASSIGN_OR_RAISE(entry.timestamp_ms, GetLong(e, "timestamp-ms", "metadata-log"));
        WEIR_ASSIGN_OR_RAISE(entry.metadata_file, GetString(e, "metadata-file", "metadata-log"));
        return entry;
      },
      false));
  WEIR_RETURN_NOT_OK(ParseList(json, "sort-orders", m.sort_orders_, SortOrder::FromJson, true));
  WEIR_ASSIGN_OR_RAISE(m.default_sort_order_id_, GetInt(json, "default-sort-order-id", kWhere));
  if (const auto refs = json.find("refs"); refs != json.end() && !refs->is_null()) {
    if (!refs->is_object()) return Status::Invalid(kWhere, ": \"refs\" must be an object");
    for (auto it = refs->begin(); it != refs->end(); ++it) {
      SnapshotRef ref;
      WEIR_ASSIGN_OR_RAISE(ref.snapshot_id, GetLong(*it, "snapshot-id", "snapshot ref"));
      WEIR_ASSIGN_OR_RAISE(ref.type, GetString(*it, "type", "snapshot ref"));
      ref.extra = WithoutKeys(*it, {"snapshot-id", "type"});
      m.refs_[it.key()] = std::move(ref);
    }
  }
  // Older writers leave refs out: main is then current-snapshot-id (-1 or null: none).
  WEIR_ASSIGN_OR_RAISE(const auto current, GetOptionalLong(json, "current-snapshot-id", kWhere));
  if (current && *current != -1 && m.refs_.count(kMainBranch) == 0) {
    m.refs_[kMainBranch] = SnapshotRef{*current, "branch", nlohmann::json::object()};
  }
  if (m.SchemaById(m.current_schema_id_) == nullptr) {
    return Status::Invalid(kWhere, ": current-schema-id ", m.current_schema_id_,
                           " is not among the schemas");
  }
  if (m.SpecById(m.default_spec_id_) == nullptr) {
    return Status::Invalid(kWhere, ": default-spec-id ", m.default_spec_id_,
                           " is not among the partition specs");
  }
  m.extra_ = WithoutKeys(json, {"format-version",
                                "table-uuid",
                                "location",
                                "last-sequence-number",
                                "last-updated-ms",
                                "last-column-id",
                                "schemas",
                                "current-schema-id",
                                "partition-specs",
                                "default-spec-id",
                                "last-partition-id",
                                "properties",
                                "current-snapshot-id",
                                "snapshots",
                                "snapshot-log",
                                "metadata-log",
                                "sort-orders",
                                "default-sort-order-id",
                                "refs",
                                "schema",
                                "partition-spec",
                                "next-row-id"});
  return m;
}

nlohmann::json TableMetadata::ToJson() const {
  nlohmann::json json = extra_;
  json["format-version"] = format_version_;
  if (format_version_ >= 3) json["next-row-id"] = next_row_id_;
  json["table-uuid"] = table_uuid_;
  json["location"] = location_;
  json["last-sequence-number"] = last_sequence_number_;
  json["last-updated-ms"] = last_updated_ms_;
  json["last-column-id"] = last_column_id_;
  json["current-schema-id"] = current_schema_id_;
  nlohmann::json schemas = nlohmann::json::array();
  for (const Schema& schema : schemas_) schemas.push_back(schema.ToJson());
  json["schemas"] = schemas;
  json["default-spec-id"] = default_spec_id_;
  nlohmann::json specs = nlohmann::json::array();
  for (const PartitionSpec& spec : specs_) specs.push_back(spec.ToJson());
  json["partition-specs"] = specs;
  json["last-partition-id"] = last_partition_id_;
  json["default-sort-order-id"] = default_sort_order_id_;
  nlohmann::json orders = nlohmann::json::array();
  for (const SortOrder& order : sort_orders_) orders.push_back(order.ToJson());
  json["sort-orders"] = orders;
  json["properties"] = properties_;
  json["current-snapshot-id"] = current_snapshot_id().value_or(-1);
  nlohmann::json refs = nlohmann::json::object();
  for (const auto& [name, ref] : refs_) {
    nlohmann::json r = ref.extra;
    r["snapshot-id"] = ref.snapshot_id;
    r["type"] = ref.type;
    refs[name] = r;
  }
  json["refs"] = refs;
  nlohmann::json snapshots = nlohmann::json::array();
  for (const Snapshot& s : snapshots_) snapshots.push_back(SnapshotToJson(s));
  json["snapshots"] = snapshots;
  nlohmann::json slog = nlohmann::json::array();
  for (const auto& e : snapshot_log_) {
    slog.push_back({{"timestamp-ms", e.timestamp_ms}, {"snapshot-id", e.snapshot_id}});
  }
  json["snapshot-log"] = slog;
  nlohmann::json mlog = nlohmann::json::array();
  for (const auto& e : metadata_log_) {
    mlog.push_back({{"timestamp-ms", e.timestamp_ms}, {"metadata-file", e.metadata_file}});
  }
  json["metadata-log"] = mlog;
  return json;
}

std::string TableMetadata::ToJsonText() const { return ToJson().dump(); }

std::optional<int64_t> TableMetadata::current_snapshot_id() const {
  const auto main = refs_.find(kMainBranch);
  if (main == refs_.end()) return std::nullopt;
  return main->second.snapshot_id;
}

const Schema& TableMetadata::current_schema() const { return *SchemaById(current_schema_id_); }

const PartitionSpec& TableMetadata::default_spec() const { return *SpecById(default_spec_id_); }

const Schema* TableMetadata::SchemaById(int id) const {
  for (const Schema& schema : schemas_) {
    if (schema.schema_id() == id) return &schema;
  }
  return nullptr;
}

const PartitionSpec* TableMetadata::SpecById(int id) const {
  for (const PartitionSpec& spec : specs_) {
    if (spec.spec_id == id) return &spec;
  }
  return nullptr;
}

const Snapshot* TableMetadata::SnapshotById(int64_t id) const {
  for (const Snapshot& s : snapshots_) {
    if (s.snapshot_id == id) return &s;
  }
  return nullptr;
}

const Snapshot* TableMetadata::RefSnapshot(const std::string& ref) const {
  const auto it = refs_.find(ref);
  return it == refs_.end() ? nullptr : SnapshotById(it->second.snapshot_id);
}

std::vector<const Snapshot*> TableMetadata::Ancestry(const std::string& ref) const {
  std::vector<const Snapshot*> out;
  const Snapshot* s = RefSnapshot(ref);
  while (s != nullptr && out.size() <= snapshots_.size()) {  // bounded even if ids loop
    out.push_back(s);
    s = s->parent_snapshot_id ? SnapshotById(*s->parent_snapshot_id) : nullptr;
  }
  return out;
}

Result<int64_t> TableMetadata::IntProperty(const std::string& name, int64_t fallback) const {
  const auto it = properties_.find(name);
  if (it == properties_.end()) return fallback;
  int64_t value = 0;
  const std::string_view text = TrimSpace(it->second);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::Invalid("table property ", name, ": \"", it->second, "\" is not an integer");
  }
  return value;
}

Result<bool> TableMetadata::BoolProperty(const std::string& name, bool fallback) const {
  const auto it = properties_.find(name);
  if (it == properties_.end()) return fallback;
  const std::string value = ToLower(TrimSpace(it->second));
  if (value == "true") return true;
  if (value == "false") return false;
  return Status::Invalid("table property ", name, ": \"", it->second, "\" is not true or false");
}

Result<int> TableMetadata::AddSchema(Schema schema, int64_t now_ms) {
  for (const Schema& existing : schemas_) {
    if (existing.SameStructure(schema)) return existing.schema_id();
  }
  int id = 0;
  for (const Schema& existing : schemas_) id = std::max(id, existing.schema_id() + 1);
  schema.set_schema_id(id);
  last_column_id_ = std::max(last_column_id_, schema.HighestFieldId());
  schemas_.push_back(std::move(schema));
  last_updated_ms_ = now_ms;
  return id;
}

Status TableMetadata::SetCurrentSchema(int schema_id, int64_t now_ms) {
  if (SchemaById(schema_id) == nullptr) {
    return Status::Invalid("schema ", schema_id, " is not in the table");
  }
  current_schema_id_ = schema_id;
  last_updated_ms_ = now_ms;
  return Status::OK();
}

Status TableMetadata::AddSnapshot(Snapshot snapshot, const std::string& branch, int64_t now_ms) {
  if (SnapshotById(snapshot.snapshot_id) != nullptr) {
    return Status::Invalid("snapshot id ", snapshot.snapshot_id, " is already in the table");
  }
  const auto ref = refs_.find(branch);
  const std::optional<int64_t> head =
      ref == refs_.end() ? std::nullopt : std::optional<int64_t>(ref->second.snapshot_id);
  if (ref != refs_.end() && ref->second.type != "branch") {
    return Status::Invalid("ref ", branch, " is a ", ref->second.type, ", not a branch");
  }
  if (snapshot.parent_snapshot_id != head) {
    return Status::Invalid("the new snapshot's parent ", snapshot.parent_snapshot_id.value_or(-1),
                           " is not the head ", head.value_or(-1), " of branch ", branch);
  }
  if (snapshot.sequence_number != last_sequence_number_ + 1) {
    return Status::Invalid("the new snapshot's sequence number ", snapshot.sequence_number,
                           " is not last-sequence-number + 1 = ", last_sequence_number_ + 1);
  }
  if (!snapshot.summary.count("operation")) {
    return Status::Invalid("a snapshot summary needs an operation");
  }
  if (format_version_ >= 3) {
    if (!snapshot.first_row_id || !snapshot.added_rows) {
      return Status::Invalid("a snapshot of a format 3 table needs first-row-id and added-rows");
    }
    if (*snapshot.first_row_id < next_row_id_ || *snapshot.added_rows < 0) {
      return Status::Invalid("the new snapshot's first-row-id ", *snapshot.first_row_id,
                             " is below the table's next-row-id ", next_row_id_);
    }
    next_row_id_ = *snapshot.first_row_id + *snapshot.added_rows;
  }
  last_sequence_number_ = snapshot.sequence_number;
  last_updated_ms_ = now_ms;
  if (ref == refs_.end()) {
    refs_[branch] = SnapshotRef{snapshot.snapshot_id, "branch", nlohmann::json::object()};
  } else {
    ref->second.snapshot_id = snapshot.snapshot_id;
  }
  if (branch == kMainBranch) snapshot_log_.push_back({now_ms, snapshot.snapshot_id});
  snapshots_.push_back(std::move(snapshot));
  return Status::OK();
}

Result<std::vector<std::string>> TableMetadata::RecordPreviousMetadata(std::string metadata_file,
                                                                       int64_t timestamp_ms) {
  WEIR_ASSIGN_OR_RAISE(const int64_t keep,
                       IntProperty("write.metadata.previous-versions-max", 100));
  metadata_log_.push_back({timestamp_ms, std::move(metadata_file)});
  std::vector<std::string> dropped;
  const auto excess = static_cast<int64_t>(metadata_log_.size()) - std::max<int64_t>(keep, 1);
  if (excess > 0) {
    for (auto it = metadata_log_.begin(); it != metadata_log_.begin() + excess; ++it) {
      dropped.push_back(std::move(it->metadata_file));
    }
    metadata_log_.erase(metadata_log_.begin(), metadata_log_.begin() + excess);
  }
  return dropped;
}

Status TableMetadata::RemoveSnapshots(const std::set<int64_t>& ids, int64_t now_ms) {
  for (const auto& [name, ref] : refs_) {
    if (ids.contains(ref.snapshot_id)) {
      return Status::Invalid("snapshot ", ref.snapshot_id, " is the head of ", ref.type, " ", name,
                             " and cannot be removed");
    }
  }
  std::erase_if(snapshots_, [&](const Snapshot& s) { return ids.contains(s.snapshot_id); });
  std::erase_if(snapshot_log_,
                [&](const SnapshotLogEntry& e) { return ids.contains(e.snapshot_id); });
  last_updated_ms_ = now_ms;
  return Status::OK();
}

Status TableMetadata::UpgradeFormatVersion(int version, int64_t now_ms) {
  if (version < format_version_) {
    return Status::Invalid("cannot downgrade table format version ", format_version_, " to ",
                           version);
  }
  if (version > kMaxFormatVersion) {
    return Status::NotImplemented("weir writes Iceberg format versions up to ", kMaxFormatVersion);
  }
  if (version == format_version_) return Status::OK();
  if (format_version_ < 3 && version >= 3) next_row_id_ = 0;
  format_version_ = version;
  last_updated_ms_ = now_ms;
  return Status::OK();
}

void TableMetadata::SetProperty(const std::string& name, std::string value, int64_t now_ms) {
  properties_[name] = std::move(value);
  last_updated_ms_ = now_ms;
}

int64_t TableMetadata::NewSnapshotId(std::mt19937_64& random) const {
  while (true) {
    const auto id = static_cast<int64_t>(random() >> 1);
    if (id != 0 && SnapshotById(id) == nullptr) return id;
  }
}

Result<Schema> EvolveSchema(const Schema& current, const std::vector<NewColumn>& additions,
                            const std::map<int, Type>& promotions, int& last_column_id) {
  Schema next = current;
  for (const auto& [id, to] : promotions) {
    auto& fields = next.mutable_fields();
    const auto field = std::find_if(fields.begin(), fields.end(),
                                    [id = id](const NestedField& f) { return f.id == id; });
    if (field == fields.end()) return Status::Invalid("no top-level column with id ", id);
    if (!CanPromote(field->type, to)) {
      return Status::Invalid("column ", field->name, " cannot change from ", ToString(field->type),
                             " to ", ToString(to));
    }
    field->type = to;
  }
  int next_id = last_column_id;
  for (const NewColumn& column : additions) {
    if (next.FindTopLevel(column.name) != nullptr) {
      return Status::Invalid("column ", column.name, " exists already");
    }
    const bool variant = column.type.id == TypeId::kVariant;
    if ((!column.type.is_primitive() && !variant) || column.type.id == TypeId::kUnknown) {
      return Status::Invalid("column ", column.name,
                             ": weir adds primitive or variant columns only");
    }
    next.mutable_fields().push_back(NestedField{++next_id, column.name, false, column.type, {}});
  }
  last_column_id = next_id;
  return next;
}

}  // namespace weir::lake::iceberg
