#include "lake/iceberg/iceberg_table.h"

#include <chrono>
#include <map>

#include <arrow/array.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/uuid_arrow.h"
#include "lake/iceberg/parquet_metrics.h"
#include "lake/iceberg/snapshot_builder.h"
#include "lake/iceberg/snapshot_ledger.h"

namespace weir::lake::iceberg {
namespace {

lake::CommitResult Outcome(CommitStatus status, std::string reason, int64_t snapshot_id = -1) {
  lake::CommitResult out;
  out.status = status;
  out.reason = std::move(reason);
  out.snapshot_id = snapshot_id;
  return out;
}

// The value of row `row` of `array` as a value of the Iceberg type `type` (null when the
// array is absent, the row is null, or the kinds do not meet).
Value SourceValue(const arrow::Array* array, int64_t row, const Type& type) {
  if (array == nullptr || array->IsNull(row)) return Value();
  int64_t integer = 0;
  double real = 0;
  bool is_integer = false, is_real = false;
  switch (array->type_id()) {
    case arrow::Type::BOOL:
      if (type.id != TypeId::kBoolean) return Value();
      return Value(static_cast<const arrow::BooleanArray*>(array)->Value(row));
    case arrow::Type::STRING:
      if (type.id != TypeId::kString) return Value();
      return Value(std::string(static_cast<const arrow::StringArray*>(array)->GetView(row)));
    case arrow::Type::INT32:
      integer = static_cast<const arrow::Int32Array*>(array)->Value(row), is_integer = true;
      break;
    case arrow::Type::INT64:
      integer = static_cast<const arrow::Int64Array*>(array)->Value(row), is_integer = true;
      break;
    case arrow::Type::FLOAT:
      real = static_cast<const arrow::FloatArray*>(array)->Value(row), is_real = true;
      break;
    case arrow::Type::DOUBLE:
      real = static_cast<const arrow::DoubleArray*>(array)->Value(row), is_real = true;
      break;
    case arrow::Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampArray&>(*array);
      const auto unit = static_cast<const arrow::TimestampType&>(*array->type()).unit();
      int64_t v = ts.Value(row);
      if (unit == arrow::TimeUnit::SECOND) v *= 1'000'000;
      if (unit == arrow::TimeUnit::MILLI) v *= 1'000;
      if (unit == arrow::TimeUnit::NANO) v /= 1'000;
      if (type.id != TypeId::kTimestampTz && type.id != TypeId::kTimestamp) return Value();
      return Value(v);
    }
    default:
      if (IsUuidArrowType(*array->type()) && type.id == TypeId::kUuid) {
        return Value(UuidAt(*array, row).bytes);
      }
      return Value();
  }
  switch (type.id) {
    case TypeId::kInt:
      return is_integer ? Value(static_cast<int32_t>(integer)) : Value();
    case TypeId::kLong:
      return is_integer ? Value(integer) : Value();
    case TypeId::kFloat:
      return is_real ? Value(static_cast<float>(real)) : Value();
    case TypeId::kDouble:
      return is_real ? Value(real) : Value();
    default:
      return Value();
  }
}

}  // namespace

PartitionValue ValueText(const Value& value) {
  if (IsNull(value)) return std::nullopt;
  if (const auto* b = std::get_if<bool>(&value)) return std::string(*b ? "true" : "false");
  if (const auto* i = std::get_if<int32_t>(&value)) return std::to_string(*i);
  if (const auto* l = std::get_if<int64_t>(&value)) return std::to_string(*l);
  if (const auto* f = std::get_if<float>(&value)) return fmt::format("{}", *f);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* u = std::get_if<UuidBytes>(&value)) return Uuid{*u}.ToString();
  return std::nullopt;
}

namespace {

Result<Value> ValueOfText(const PartitionValue& text, const Type& type) {
  if (!text) return Value();
  try {
    switch (type.id) {
      case TypeId::kBoolean:
        return Value(*text == "true");
      case TypeId::kInt:
      case TypeId::kDate:
        return Value(static_cast<int32_t>(std::stol(*text)));
      case TypeId::kLong:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        return Value(static_cast<int64_t>(std::stoll(*text)));
      case TypeId::kFloat:
        return Value(std::stof(*text));
      case TypeId::kDouble:
        return Value(std::stod(*text));
      case TypeId::kString:
        return Value(*text);
      case TypeId::kUuid:
        if (const auto uuid = Uuid::TryParse(*text)) return Value(uuid->bytes);
        break;
      default:
        break;
    }
  } catch (const std::exception&) {
  }
  return Status::Invalid("partition value \"", *text, "\" is not a ", ToString(type));
}

}  // namespace

Type IcebergTypeOf(ColumnType type) {
  switch (type) {
    case ColumnType::kBoolean:
      return Type::Primitive(TypeId::kBoolean);
    case ColumnType::kInteger:
      return Type::Primitive(TypeId::kInt);
    case ColumnType::kBigint:
      return Type::Primitive(TypeId::kLong);
    case ColumnType::kFloat:
      return Type::Primitive(TypeId::kFloat);
    case ColumnType::kDouble:
      return Type::Primitive(TypeId::kDouble);
    case ColumnType::kTimestampTz:
      return Type::Primitive(TypeId::kTimestampTz);
    case ColumnType::kUuid:
      return Type::Primitive(TypeId::kUuid);
    case ColumnType::kVariant:
      return Type::Primitive(TypeId::kVariant);
    default:
      return Type::Primitive(TypeId::kString);
  }
}

ColumnType ColumnTypeOf(const Type& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return ColumnType::kBoolean;
    case TypeId::kInt:
      return ColumnType::kInteger;
    case TypeId::kLong:
      return ColumnType::kBigint;
    case TypeId::kFloat:
      return ColumnType::kFloat;
    case TypeId::kDouble:
      return ColumnType::kDouble;
    case TypeId::kString:
      return ColumnType::kVarchar;
    case TypeId::kTimestampTz:
      return ColumnType::kTimestampTz;
    case TypeId::kUuid:
      return ColumnType::kUuid;
    case TypeId::kVariant:
      return ColumnType::kVariant;
    default:
      return ColumnType::kOther;
  }
}

std::optional<lake::Transform> LakeTransformOf(const Transform& transform) {
  using K = TransformKind;
  switch (transform.kind) {
    case K::kIdentity:
      return lake::Transform{lake::TransformKind::kIdentity, 0};
    case K::kYear:
      return lake::Transform{lake::TransformKind::kYear, 0};
    case K::kMonth:
      return lake::Transform{lake::TransformKind::kMonth, 0};
    case K::kDay:
      return lake::Transform{lake::TransformKind::kDay, 0};
    case K::kHour:
      return lake::Transform{lake::TransformKind::kHour, 0};
    case K::kBucket:
      return lake::Transform{lake::TransformKind::kBucket,
                             static_cast<int32_t>(transform.parameter)};
    case K::kTruncate:
      return lake::Transform{lake::TransformKind::kTruncate,
                             static_cast<int32_t>(transform.parameter)};
    default:
      return std::nullopt;
  }
}

IcebergTable::IcebergTable(std::unique_ptr<MetadataStore> store, TableIo io, TableIdent ident,
                           CurrentMetadata current)
    : store_(std::move(store)),
      io_(std::move(io)),
      ident_(std::move(ident)),
      name_(ident_.ToString()),
      random_(std::random_device{}()),
      uuids_(Clock::System(), std::random_device{}()) {
  Adopt(std::move(current));
}

void IcebergTable::Adopt(CurrentMetadata current) {
  current_ = std::move(current);
  const TableMetadata& m = current_.metadata;
  columns_.clear();
  for (const NestedField& field : m.current_schema().fields()) {
    columns_.push_back(Column{field.id, field.name, ColumnTypeOf(field.type)});
  }
  partitioning_.clear();
  for (const PartitionField& field : m.default_spec().fields) {
    const NestedField* source = m.current_schema().FindField(field.source_id);
    const auto transform = LakeTransformOf(field.transform);
    partitioning_.push_back(
        PartitionKey{source ? source->name : "#" + std::to_string(field.source_id),
                     transform.value_or(lake::Transform{})});
  }
  std::string location = m.location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  data_uri_ = location + "/data/";
  auto path = io_.PathOf(data_uri_);
  data_directory_ = path.ok() ? *path : data_uri_;
  if (!data_directory_.empty() && data_directory_.back() != '/') data_directory_ += '/';
}

Result<bool> IcebergTable::Reload() {
  current_is_own_commit_ = false;
  WEIR_ASSIGN_OR_RAISE(auto loaded, store_->Load(ident_));
  if (!loaded) return false;
  Adopt(std::move(*loaded));
  return true;
}

Status IcebergTable::CheckPartitioning(const std::vector<PartitionKey>& wanted) const {
  if (partitioning_ == wanted) return Status::OK();
  return ClassifiedError(
      ErrorClass::kFatal, "iceberg", "layout_mismatch",
      fmt::format("table {} is partitioned by {} but the configuration asks for {}; point the "
                  "dataset at a new table or change the partitioning setting to match",
                  name_, ToString(partitioning_), ToString(wanted)));
}

Result<EvolveResult> IcebergTable::Evolve(const SchemaChange& change) {
  if (change.add.empty() && change.promote.empty()) return EvolveResult{};
  for (int attempt = 0; attempt < 50; ++attempt) {
    WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
    if (!exists) return EvolveResult{EvolveStatus::kTableChanged, "table " + name_ + " is gone"};
    const TableMetadata& base = current_.metadata;
    const Schema& schema = base.current_schema();
    std::map<int, Type> promotions;
    for (const auto& [name, type] : change.promote) {
      const NestedField* field = schema.FindTopLevel(name);
      if (field == nullptr) {
        return EvolveResult{EvolveStatus::kTableChanged,
                            "column \"" + name + "\" of " + name_ + " is gone"};
      }
      const Type target = IcebergTypeOf(type);
      if (field->type == target) continue;
      if (!CanPromote(field->type, target)) {
        return EvolveResult{EvolveStatus::kRefused,
                            fmt::format("Iceberg cannot promote {}.{} from {} to {}", name_, name,
                                        iceberg::ToString(field->type), iceberg::ToString(target))};
      }
      promotions[field->id] = target;
    }
    std::vector<iceberg::NewColumn> additions;
    for (const auto& [name, type] : change.add) {
      if (schema.FindTopLevel(name) == nullptr) additions.push_back({name, IcebergTypeOf(type)});
    }
    if (additions.empty() && promotions.empty()) return EvolveResult{};
    int last_column_id = base.last_column_id();
    auto evolved = EvolveSchema(schema, additions, promotions, last_column_id);
    if (!evolved.ok()) {
      return EvolveResult{EvolveStatus::kRefused, fmt::format("changing the schema of {}: {}",
                                                              name_, evolved.status().message())};
    }
    TableMetadata next = base;
    const int64_t now = NowUnixMillis();
    MetadataChange schema_change;
    // A variant column needs format 3: the table is upgraded in the same commit (the spec's
    // upgrade: next-row-id starts at 0, older snapshots keep no row ids).
    const int needed = FormatVersionFor(*evolved);
    if (needed > base.format_version()) {
      spdlog::warn(
          "table {}: upgrading from Iceberg format version {} to {} for its variant "
          "column(s); readers of the table must read format version {}",
          name_, base.format_version(), needed, needed);
      WEIR_RETURN_NOT_OK(next.UpgradeFormatVersion(needed, now));
      schema_change.upgrade_format = true;
    }
    WEIR_ASSIGN_OR_RAISE(const int schema_id, next.AddSchema(std::move(*evolved), now));
    WEIR_RETURN_NOT_OK(next.SetCurrentSchema(schema_id, now));
    schema_change.schema_id = schema_id;
    std::vector<std::string> written;
    WEIR_ASSIGN_OR_RAISE(const StoreCommit committed,
                         store_->Commit(ident_, current_, next, schema_change, written));
    if (committed.outcome == CommitOutcome::kConflict) {
      for (const auto& uri : written) {
        if (auto path = io_.PathOf(uri); path.ok()) (void)io_.fs->DeleteFile(*path);
      }
    }
    // Committed, lost a race, or unknown: the next reload shows which.
  }
  return Status::IOError("changing the schema of ", name_, ": 50 races lost in a row");
}

Result<std::vector<PartitionGroup>> IcebergTable::Partition(const arrow::RecordBatch& rows) const {
  const TableMetadata& m = current_.metadata;
  const PartitionSpec& spec = m.default_spec();
  const Schema& schema = m.current_schema();
  if (spec.is_unpartitioned()) {
    PartitionGroup all;
    all.rows.resize(rows.num_rows());
    for (int64_t i = 0; i < rows.num_rows(); ++i) all.rows[i] = i;
    return std::vector<PartitionGroup>{std::move(all)};
  }
  std::vector<std::shared_ptr<arrow::Array>> sources;
  std::vector<const NestedField*> fields;
  for (const PartitionField& field : spec.fields) {
    const NestedField* source = schema.FindField(field.source_id);
    if (source == nullptr) {
      return Status::Invalid("partition field ", field.name, " of ", name_,
                             " has no source column");
    }
    fields.push_back(source);
    sources.push_back(rows.GetColumnByName(source->name));  // absent: null in every row
  }
  std::map<std::vector<PartitionValue>, std::vector<int64_t>> groups;
  std::vector<Value> values(fields.size());
  for (int64_t row = 0; row < rows.num_rows(); ++row) {
    for (size_t k = 0; k < fields.size(); ++k) {
      values[k] = SourceValue(sources[k].get(), row, fields[k]->type);
    }
    WEIR_ASSIGN_OR_RAISE(const std::vector<Value> tuple, PartitionTuple(spec, schema, values));
    std::vector<PartitionValue> key;
    key.reserve(tuple.size());
    for (const Value& v : tuple) key.push_back(ValueText(v));
    groups[std::move(key)].push_back(row);
  }
  std::vector<PartitionGroup> out;
  out.reserve(groups.size());
  for (auto& [key, indices] : groups) out.push_back({key, std::move(indices)});
  return out;
}

Result<std::vector<Value>> IcebergTable::PartitionTupleOf(
    const std::vector<PartitionValue>& values) const {
  const TableMetadata& m = current_.metadata;
  WEIR_ASSIGN_OR_RAISE(const auto type, PartitionType(m.default_spec(), m.current_schema()));
  if (values.size() != type.size()) {
    return Status::Invalid(name_, " has ", type.size(), " partition fields, the file ",
                           values.size());
  }
  std::vector<Value> tuple;
  for (size_t i = 0; i < type.size(); ++i) {
    WEIR_ASSIGN_OR_RAISE(Value v, ValueOfText(values[i], type[i].type));
    tuple.push_back(std::move(v));
  }
  return tuple;
}

std::string IcebergTable::NewFilePath(const std::vector<PartitionValue>& partition_values) {
  std::string prefix;
  auto tuple = PartitionTupleOf(partition_values);
  if (tuple.ok() && !tuple->empty()) {
    const TableMetadata& m = current_.metadata;
    auto path = PartitionPath(m.default_spec(), m.current_schema(), *tuple);
    if (path.ok() && !path->empty()) prefix = *path + "/";
  }
  return prefix + uuids_.Next().ToString() + ".parquet";
}

Result<std::map<int32_t, int64_t>> IcebergTable::ReadLedger(const std::string& topic) {
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return Status::IOError("table ", name_, " is gone");
  WEIR_ASSIGN_OR_RAISE(const auto newest, NewestWeirCommit(current_.metadata));
  if (!newest) return std::map<int32_t, int64_t>();
  const auto found = newest->ledger.find(topic);
  if (found == newest->ledger.end()) return std::map<int32_t, int64_t>();
  return found->second;
}

Result<iceberg::DataFile> IcebergTable::ManifestFileOf(const lake::DataFile& file) const {
  iceberg::DataFile out;
  out.file_path = data_uri_ + file.relative_path;
  WEIR_ASSIGN_OR_RAISE(out.partition, PartitionTupleOf(file.partition_values));
  out.file_size_in_bytes = file.info.size_bytes;
  WEIR_ASSIGN_OR_RAISE(const auto footer,
                       ReadParquetFooter(*io_.fs, data_directory_ + file.relative_path));
  WEIR_RETURN_NOT_OK(AddParquetMetrics(*footer, current_.metadata.current_schema(),
                                       MetricsOptions{16, true}, out));
  return out;
}

Result<lake::CommitResult> IcebergTable::Commit(const CommitRequest& request) {
  if (request.companion != nullptr) {
    // Snapshots are per table: the caller commits the rejects table on its own, first.
    return Status::Invalid("an Iceberg commit cannot carry a companion table's files");
  }
  const int spec_before = current_.metadata.default_spec_id();
  // Right after this handle's own commit, current_ is the catalog's answer to it: committing on
  // it saves reading the table back. Should the table have moved since, the catalog refuses
  // the attempt (requirements / compare-and-swap) and it is made again on a fresh read, as is
  // any verdict the checks give on the unread state (kFenced, kTableChanged).
  const bool reuse = current_is_own_commit_;
  current_is_own_commit_ = false;
  if (reuse) {
    WEIR_ASSIGN_OR_RAISE(auto attempt, TryCommit(request, spec_before, /*verified=*/false));
    if (attempt) return std::move(*attempt);
  }
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return Outcome(CommitStatus::kTableChanged, "table " + name_ + " is gone");
  WEIR_ASSIGN_OR_RAISE(auto attempt, TryCommit(request, spec_before, /*verified=*/true));
  return std::move(*attempt);
}

Result<std::optional<lake::CommitResult>> IcebergTable::TryCommit(const CommitRequest& request,
                                                                  int spec_before, bool verified) {
  using Answer = std::optional<lake::CommitResult>;
  const TableMetadata& base = current_.metadata;
  if (!request.writer.empty()) {
    // Found even in an unread state: snapshots are never un-committed.
    if (const Snapshot* landed = iceberg::FindCommit(base, request.writer)) {
      return Answer(Outcome(CommitStatus::kAlreadyCommitted, "", landed->snapshot_id));
    }
  }
  // The fence: every range starts where the ledger of the newest weir snapshot says.
  WEIR_ASSIGN_OR_RAISE(const auto newest, NewestWeirCommit(base));
  OffsetLedger ledger = newest ? newest->ledger : OffsetLedger{};
  lake::CommitResult fenced;
  for (const auto& range : request.offsets) {
    const auto topic = ledger.find(range.topic);
    if (topic == ledger.end()) continue;
    const auto next = topic->second.find(range.partition);
    if (next != topic->second.end() && next->second != range.start) {
      fenced.fenced_ranges.push_back(range);
    }
  }
  if (!fenced.fenced_ranges.empty()) {
    if (!verified) return Answer();
    fenced.status = CommitStatus::kFenced;
    return Answer(std::move(fenced));
  }
  if (base.default_spec_id() != spec_before) {
    if (!verified) return Answer();
    return Answer(
        Outcome(CommitStatus::kTableChanged, "the partition spec of " + name_ + " changed"));
  }
  for (const auto& file : request.files) {
    for (const auto& stats : file.info.columns) {
      if (base.current_schema().FindField(stats.field_id) == nullptr) {
        if (!verified) return Answer();
        return Answer(Outcome(CommitStatus::kTableChanged,
                              fmt::format("a file of {} refers to field id {} the table lacks",
                                          name_, stats.field_id)));
      }
    }
  }
  for (const auto& range : request.offsets) ledger[range.topic][range.partition] = range.end;

  AppendRequest append;
  for (const auto& file : request.files) {
    WEIR_ASSIGN_OR_RAISE(auto data_file, ManifestFileOf(file));
    append.files.push_back(std::move(data_file));
  }
  // An upsert's equality deletes, written for this attempt: deleted again unless it lands.
  std::vector<std::string> delete_paths;
  const auto remove_deletes = [&] {
    for (const auto& path : delete_paths) (void)io_.fs->DeleteFile(path);
  };
  const Snapshot* parent = base.RefSnapshot(kMainBranch);
  if (parent != nullptr && last_list_ && last_list_->first == parent->manifest_list) {
    append.parent_manifests = &last_list_->second;  // the list this handle wrote: not re-read
  }
  DvPlan dvs;
  if (request.key_deletes && deletion_vectors_) {
    std::vector<ManifestFile> read;
    if (parent != nullptr && !append.parent_manifests && !parent->manifest_list.empty()) {
      WEIR_ASSIGN_OR_RAISE(read, ReadManifestList(io_, parent->manifest_list));
    }
    auto planned = PlanDeletionVectors(*request.key_deletes,
                                       append.parent_manifests ? *append.parent_manifests : read,
                                       delete_paths);
    if (!planned.ok()) {
      remove_deletes();
      return planned.status();
    }
    dvs = std::move(*planned);
    append.delete_files = std::move(dvs.files);
    append.replaced_dvs = std::move(dvs.replaced);
  } else if (request.key_deletes) {
    auto written_deletes = WriteEqualityDeletes(*request.key_deletes, delete_paths);
    if (!written_deletes.ok()) {
      remove_deletes();
      return written_deletes.status();
    }
    append.delete_files = std::move(*written_deletes);
  }
  append.commit_id = request.writer;
  append.ledger = std::move(ledger);
  if (!request.message.empty()) append.extra_summary["weir.message"] = request.message;
  append.now_ms = NowUnixMillis();
  auto built = BuildAppend(io_, base, append, random_);
  if (!built.ok()) remove_deletes();
  WEIR_ASSIGN_OR_RAISE(PendingSnapshot pending, std::move(built));
  std::vector<std::string> written = pending.written;
  const auto remove_written = [&] {
    for (const auto& uri : written) {
      if (auto path = io_.PathOf(uri); path.ok()) (void)io_.fs->DeleteFile(*path);
    }
    remove_deletes();
  };
  auto committed =
      store_->Commit(ident_, current_, pending.metadata, {pending.snapshot, std::nullopt}, written);
  if (!committed.ok()) {
    remove_written();  // nothing was sent, or the catalog refused it: nothing landed
    // On an unread state a refusal may be the staleness's (the table was dropped and made
    // again; a REST server refusing a sequence number another branch has passed): read again.
    const auto kind = CatalogErrorKindOf(committed.status());
    if (!verified && (kind == CatalogErrorKind::kNotFound || kind == CatalogErrorKind::kRejected)) {
      return Answer();
    }
    return committed.status();
  }
  switch (committed->outcome) {
    case CommitOutcome::kConflict:
      remove_written();
      if (!verified) return Answer();
      return Answer(Outcome(CommitStatus::kConflict, committed->message.empty()
                                                         ? "the table moved during the commit"
                                                         : committed->message));
    case CommitOutcome::kUnknown:
      return Answer(Outcome(CommitStatus::kOutcomeUnknown, committed->message));
    case CommitOutcome::kCommitted:
      break;
  }
  const int64_t snapshot_id = pending.snapshot.snapshot_id;
  last_list_.emplace(pending.snapshot.manifest_list, std::move(pending.manifests));
  if (committed->current) {
    Adopt(std::move(*committed->current));
    current_is_own_commit_ = true;
  }
  lake::CommitResult done = Outcome(CommitStatus::kCommitted, "", snapshot_id);
  done.delete_files = static_cast<int64_t>(append.delete_files.size());
  if (deletion_vectors_) {
    done.rows_deleted = dvs.rows;
  } else {
    for (const auto& file : append.delete_files) done.keys_deleted += file.record_count;
  }
  return Answer(std::move(done));
}

Result<std::optional<int64_t>> IcebergTable::FindCommit(const CommitRequest& request) {
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists || request.writer.empty()) return std::optional<int64_t>();
  const Snapshot* landed = iceberg::FindCommit(current_.metadata, request.writer);
  if (landed == nullptr) return std::optional<int64_t>();
  return std::optional<int64_t>(landed->snapshot_id);
}

}  // namespace weir::lake::iceberg
