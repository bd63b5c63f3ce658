#include "lake/ducklake/ducklake_table.h"

#include <chrono>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/sql_quote.h"
#include "files/object_names.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/stats_text.h"

namespace weir::lake::ducklake {
namespace {

CommitResult Outcome(CommitStatus status, std::string reason) {
  CommitResult out;
  out.status = status;
  out.reason = std::move(reason);
  return out;
}

std::string JoinPath(std::string base, const std::string& rel, bool relative) {
  if (!relative) return rel;
  if (!base.empty() && base.back() != '/') base += '/';
  return base + rel;
}

std::string LedgerJson(const std::vector<OffsetRange>& offsets) {
  std::string out = "{\"weir_offsets\":[";
  for (size_t i = 0; i < offsets.size(); ++i) {
    const auto& r = offsets[i];
    out += fmt::format("{}{{\"topic\":\"{}\",\"partition\":{},\"start\":{},\"next\":{}}}",
                       i ? "," : "", r.topic, r.partition, r.start, r.end);
  }
  return out + "]}";
}

}  // namespace

DuckLakeTable::DuckLakeTable(DuckLakeCatalog* catalog, std::unique_ptr<CatalogDb> db)
    : catalog_(catalog), db_(std::move(db)), uuids_(Clock::System(), std::random_device{}()) {}

Result<std::unique_ptr<DuckLakeTable>> DuckLakeTable::Load(DuckLakeCatalog* catalog,
                                                           std::unique_ptr<CatalogDb> db,
                                                           const std::string& schema,
                                                           const std::string& table) {
  std::unique_ptr<DuckLakeTable> out(new DuckLakeTable(catalog, std::move(db)));
  out->schema_ = schema;
  out->table_ = table;
  out->qualified_name_ = schema + "." + table;
  WEIR_ASSIGN_OR_RAISE(const bool exists, out->Reload());
  if (!exists) return nullptr;
  return out;
}

Result<bool> DuckLakeTable::Reload() {
  WEIR_ASSIGN_OR_RAISE(auto schemas,
                       db_->Query("SELECT schema_id, path, path_is_relative FROM ducklake_schema "
                                  "WHERE schema_name = $1 AND end_snapshot IS NULL",
                                  {schema_}));
  if (schemas.empty()) return false;
  WEIR_ASSIGN_OR_RAISE(auto schema_id, ToInt(schemas[0][0], "schema_id"));
  WEIR_ASSIGN_OR_RAISE(
      auto tables,
      db_->Query("SELECT table_id, table_uuid, path, path_is_relative FROM ducklake_table "
                 "WHERE schema_id = $1 AND table_name = $2 AND end_snapshot IS NULL",
                 {schema_id, table_}));
  if (tables.empty()) return false;
  WEIR_ASSIGN_OR_RAISE(table_id_, ToInt(tables[0][0], "table_id"));
  table_uuid_ = tables[0][1].value_or("");

  const std::string schema_path =
      JoinPath(catalog_->store().uri(), schemas[0][1].value_or(""), ToBool(schemas[0][2]));
  data_uri_ = JoinPath(schema_path, tables[0][2].value_or(""), ToBool(tables[0][3]));
  own_directory_ = !tables[0][2].value_or("").empty();
  if (!data_uri_.empty() && data_uri_.back() != '/') data_uri_ += '/';
  WEIR_ASSIGN_OR_RAISE(data_directory_, catalog_->store().PathOfUri(data_uri_));

  WEIR_ASSIGN_OR_RAISE(
      auto columns,
      db_->Query("SELECT column_id, column_name, column_type FROM ducklake_column WHERE "
                 "table_id = $1 AND end_snapshot IS NULL AND parent_column IS NULL "
                 "ORDER BY column_order",
                 {table_id_}));
  columns_.clear();
  std::map<int64_t, std::string> names;
  for (const auto& row : columns) {
    Column column;
    WEIR_ASSIGN_OR_RAISE(column.id, ToInt(row[0], "column_id"));
    column.name = row[1].value_or("");
    column.type = FromDuckLakeType(row[2].value_or(""));
    names[column.id] = column.name;
    columns_.push_back(std::move(column));
  }

  partition_id_.reset();
  partitioning_.clear();
  WEIR_ASSIGN_OR_RAISE(auto infos,
                       db_->Query("SELECT partition_id FROM ducklake_partition_info WHERE "
                                  "table_id = $1 AND end_snapshot IS NULL",
                                  {table_id_}));
  if (!infos.empty()) {
    WEIR_ASSIGN_OR_RAISE(auto partition_id, ToInt(infos[0][0], "partition_id"));
    partition_id_ = partition_id;
    WEIR_ASSIGN_OR_RAISE(auto keys, db_->Query("SELECT column_id, transform FROM "
                                               "ducklake_partition_column WHERE partition_id = "
                                               "$1 AND table_id = $2 ORDER BY partition_key_index",
                                               {partition_id, table_id_}));
    for (const auto& row : keys) {
      WEIR_ASSIGN_OR_RAISE(auto column_id, ToInt(row[0], "partition column_id"));
      WEIR_ASSIGN_OR_RAISE(auto transform, ParseTransform(row[1].value_or("")));
      partitioning_.push_back(PartitionKey{names[column_id], transform});
    }
  }
  return true;
}

Status DuckLakeTable::CheckPartitioning(const std::vector<PartitionKey>& wanted) {
  if (partitioning_ == wanted) return Status::OK();
  const auto layout = [](const std::vector<PartitionKey>& keys) { return ToString(keys); };
  if (partitioning_.empty()) {
    // Created by a run that stopped before declaring the layout: declare it now, but only
    // while no data was written under another layout.
    WEIR_ASSIGN_OR_RAISE(auto files, db_->Query("SELECT count(*) FROM ducklake_data_file WHERE "
                                                "table_id = $1",
                                                {table_id_}));
    WEIR_ASSIGN_OR_RAISE(auto count, ToInt(files[0][0], "file count"));
    if (count == 0) {
      WEIR_RETURN_NOT_OK(
          catalog_->RunDdl({"ALTER TABLE weir_lake." + QuoteIdentifier(schema_) + "." +
                            QuoteIdentifier(table_) + " SET PARTITIONED BY " + layout(wanted)}));
      WEIR_ASSIGN_OR_RAISE(auto exists, Reload());
      if (exists && partitioning_ == wanted) return Status::OK();
    }
  }
  return ClassifiedError(
      ErrorClass::kFatal, "ducklake", "layout_mismatch",
      fmt::format("table {} is partitioned by {} but the configuration asks for {}; point the "
                  "dataset at a new table or change the partitioning setting to match",
                  qualified_name_, layout(partitioning_), layout(wanted)));
}

Result<EvolveResult> DuckLakeTable::Evolve(const SchemaChange& change) {
  if (change.add.empty() && change.promote.empty()) return EvolveResult{};
  std::vector<std::string> ddl;
  const std::string table = "weir_lake." + QuoteIdentifier(schema_) + "." + QuoteIdentifier(table_);
  for (const auto& [name, type] : change.promote) {
    const auto live = std::find_if(columns_.begin(), columns_.end(),
                                   [&](const Column& c) { return c.name == name; });
    if (live == columns_.end()) {
      return EvolveResult{EvolveStatus::kTableChanged,
                          "column \"" + name + "\" of " + qualified_name_ + " is gone"};
    }
    if (live->type == type) continue;
    if (PromotionFor(live->type, type) != type) {
      return EvolveResult{EvolveStatus::kRefused,
                          fmt::format("DuckLake cannot promote {}.{} from {} to {}",
                                      qualified_name_, name, ToString(live->type), ToString(type))};
    }
    ddl.push_back(fmt::format("ALTER TABLE {} ALTER COLUMN {} SET DATA TYPE {}", table,
                              QuoteIdentifier(name), DuckDbTypeName(type)));
  }
  for (const auto& [name, type] : change.add) {
    ddl.push_back(fmt::format("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {}", table,
                              QuoteIdentifier(name), DuckDbTypeName(type)));
  }
  if (ddl.empty()) return EvolveResult{};
  const Status applied = catalog_->RunDdl(ddl);
  WEIR_ASSIGN_OR_RAISE(auto exists, Reload());
  if (!exists) {
    return EvolveResult{EvolveStatus::kTableChanged, "table " + qualified_name_ + " was dropped"};
  }
  if (!applied.ok() && IsStatementRefusal(applied)) {
    // The table is there: DuckDB refused the columns' names or types, which come from the data.
    return EvolveResult{EvolveStatus::kRefused, fmt::format("changing the schema of {}: {}",
                                                            qualified_name_, applied.message())};
  }
  WEIR_RETURN_NOT_OK(applied);
  return EvolveResult{};
}

Result<std::vector<PartitionGroup>> DuckLakeTable::Partition(const arrow::RecordBatch& rows) const {
  std::vector<std::shared_ptr<arrow::Array>> keys;
  for (const auto& key : partitioning_) {
    if (key.transform.kind == TransformKind::kBucket ||
        key.transform.kind == TransformKind::kTruncate) {
      return Status::NotImplemented("DuckLake has no ", ToString(key.transform), " transform");
    }
    // A column the flush has no value for is absent from the rows: null in every row.
    keys.push_back(rows.GetColumnByName(key.column));
  }
  std::map<std::vector<PartitionValue>, std::vector<int64_t>> groups;
  for (int64_t row = 0; row < rows.num_rows(); ++row) {
    std::vector<PartitionValue> values;
    values.reserve(keys.size());
    for (size_t k = 0; k < keys.size(); ++k) {
      if (!keys[k]) {
        values.emplace_back();
        continue;
      }
      WEIR_ASSIGN_OR_RAISE(auto value, PartitionValueText(*keys[k], row, partitioning_[k]));
      values.push_back(std::move(value));
    }
    groups[std::move(values)].push_back(row);
  }
  std::vector<PartitionGroup> out;
  out.reserve(groups.size());
  for (auto& [values, indices] : groups) out.push_back({values, std::move(indices)});
  return out;
}

Result<std::map<int32_t, int64_t>> DuckLakeTable::ReadLedger(const std::string& topic) {
  WEIR_ASSIGN_OR_RAISE(auto rows, db_->Query(fmt::format("SELECT \"partition\", next_offset FROM "
                                                         "{} WHERE table_uuid = $1 AND topic = $2",
                                                         kLedgerTable),
                                             {table_uuid_, topic}));
  std::map<int32_t, int64_t> out;
  for (const auto& row : rows) {
    WEIR_ASSIGN_OR_RAISE(auto partition, ToInt(row[0], "ledger partition"));
    WEIR_ASSIGN_OR_RAISE(auto next, ToInt(row[1], "ledger next_offset"));
    out[static_cast<int32_t>(partition)] = next;
  }
  return out;
}

std::shared_ptr<arrow::fs::FileSystem> DuckLakeTable::filesystem() const {
  return catalog_->store().filesystem();
}

std::string DuckLakeTable::NewFilePath(const std::vector<PartitionValue>& partition_values) {
  std::string prefix;
  for (size_t i = 0; i < partitioning_.size() && i < partition_values.size(); ++i) {
    prefix +=
        (prefix.empty() ? "" : "/") + PartitionDirectory(partitioning_[i], partition_values[i]);
  }
  return files::DataFileName(prefix, uuids_.Next());
}

Result<CommitResult> DuckLakeTable::Commit(const CommitRequest& request) {
  WEIR_ASSIGN_OR_RAISE(const auto hold, catalog_->LockForWrite());
  WEIR_RETURN_NOT_OK(db_->Begin());
  unreferenced_deletes_.clear();
  auto result = TryCommit(request);
  if (result.ok() && result->status == CommitStatus::kCommitted) {
    const Status committed = db_->Commit();
    if (committed.ok()) {
      unreferenced_deletes_.clear();
      return result;
    }
    // The COMMIT itself failed: the link may have dropped after the database committed (its
    // delete files are left for the orphan sweep, like its data files).
    db_->Rollback();
    unreferenced_deletes_.clear();
    return Outcome(CommitStatus::kOutcomeUnknown, committed.message());
  }
  // Fenced, already committed, table changed, or an error before COMMIT: nothing was written.
  db_->Rollback();
  DropUnreferencedDeletes();
  if (result.ok()) return result;
  const ErrorDetail* detail = GetErrorDetail(result.status());
  if (IsUniqueConflict(result.status()) ||
      (detail != nullptr && detail->code() == "ledger_moved")) {
    // Another writer took the snapshot id (or created the same ledger row, or moved it) first;
    // the next attempt re-reads the head and renumbers.
    return Outcome(CommitStatus::kConflict, result.status().message());
  }
  return result.status();
}

Result<std::optional<int64_t>> DuckLakeTable::FindCommit(const CommitRequest& request) {
  std::set<std::string> topics;
  for (const auto& range : request.offsets) topics.insert(range.topic);
  for (const auto& topic : topics) {
    WEIR_ASSIGN_OR_RAISE(
        auto rows, db_->Query(fmt::format("SELECT snapshot_id FROM {} WHERE table_uuid = $1 AND "
                                          "topic = $2 AND writer = $3",
                                          kLedgerTable),
                              {table_uuid_, topic, request.writer}));
    if (!rows.empty()) {
      WEIR_ASSIGN_OR_RAISE(auto snapshot, ToInt(rows[0][0], "ledger snapshot_id"));
      return std::optional<int64_t>(snapshot);
    }
  }
  // The ledger may have moved on since (a later owner of the partitions): the files say it.
  if (!request.files.empty()) {
    WEIR_ASSIGN_OR_RAISE(auto rows,
                         db_->Query("SELECT begin_snapshot FROM ducklake_data_file WHERE "
                                    "table_id = $1 AND path = $2",
                                    {table_id_, request.files.front().relative_path}));
    if (!rows.empty()) {
      WEIR_ASSIGN_OR_RAISE(auto snapshot, ToInt(rows[0][0], "begin_snapshot"));
      return std::optional<int64_t>(snapshot);
    }
  }
  return std::optional<int64_t>();
}

Result<CommitResult> DuckLakeTable::TryCommit(const CommitRequest& request) {
  CommitResult out;
  // 1. The fence: every range must start where the ledger says its partition stands. A ledger
  // already at the range's end under this very commit's writer id means an earlier attempt
  // whose outcome was unknown (the connection dropped at COMMIT) did land: report it.
  int64_t landed_snapshot = -1;
  size_t landed = 0;
  // The ledger rows of every topic the commit covers, one query per topic.
  std::map<std::pair<std::string, int64_t>, SqlRow> ledger;
  std::set<std::string> topics;
  for (const auto& range : request.offsets) topics.insert(range.topic);
  for (const auto& topic : topics) {
    WEIR_ASSIGN_OR_RAISE(
        auto rows, db_->Query(fmt::format("SELECT \"partition\", next_offset, snapshot_id, writer "
                                          "FROM {} WHERE table_uuid = $1 AND topic = $2",
                                          kLedgerTable),
                              {table_uuid_, topic}));
    for (auto& row : rows) {
      WEIR_ASSIGN_OR_RAISE(auto partition, ToInt(row[0], "ledger partition"));
      ledger[{topic, partition}] = std::move(row);
    }
  }
  for (const auto& range : request.offsets) {
    const auto found = ledger.find({range.topic, range.partition});
    if (found == ledger.end()) continue;
    const SqlRow& row = found->second;
    WEIR_ASSIGN_OR_RAISE(auto next, ToInt(row[1], "ledger next_offset"));
    if (next == range.end && row[3] == request.writer && !request.writer.empty()) {
      WEIR_ASSIGN_OR_RAISE(landed_snapshot, ToInt(row[2], "ledger snapshot_id"));
      ++landed;
    } else if (next != range.start) {
      out.fenced_ranges.push_back(range);
    }
  }
  if (landed > 0 && landed == request.offsets.size()) {
    out.snapshot_id = landed_snapshot;
    out.status = CommitStatus::kAlreadyCommitted;
    return out;
  }
  if (!out.fenced_ranges.empty()) {
    out.status = CommitStatus::kFenced;
    return out;
  }

  // 2. The head snapshot, and the table as of the head.
  WEIR_ASSIGN_OR_RAISE(auto heads,
                       db_->Query("SELECT snapshot_id, schema_version, next_catalog_id, "
                                  "next_file_id FROM ducklake_snapshot WHERE snapshot_id = "
                                  "(SELECT max(snapshot_id) FROM ducklake_snapshot)",
                                  {}));
  if (heads.empty()) return Outcome(CommitStatus::kTableChanged, "the catalog has no snapshot");
  WEIR_ASSIGN_OR_RAISE(const int64_t head, ToInt(heads[0][0], "snapshot_id"));
  WEIR_ASSIGN_OR_RAISE(const int64_t schema_version, ToInt(heads[0][1], "schema_version"));
  WEIR_ASSIGN_OR_RAISE(const int64_t next_catalog_id, ToInt(heads[0][2], "next_catalog_id"));
  WEIR_ASSIGN_OR_RAISE(int64_t next_file_id, ToInt(heads[0][3], "next_file_id"));
  WEIR_ASSIGN_OR_RAISE(auto alive, db_->Query("SELECT count(*) FROM ducklake_table WHERE "
                                              "table_id = $1 AND end_snapshot IS NULL",
                                              {table_id_}));
  WEIR_ASSIGN_OR_RAISE(auto alive_count, ToInt(alive[0][0], "table count"));
  if (alive_count != 1) {
    return Outcome(CommitStatus::kTableChanged, "table " + qualified_name_ + " was dropped");
  }
  if (auto missing = MissingFileColumn(request.files)) {
    return Outcome(CommitStatus::kTableChanged, *missing);
  }
  auto* companion = dynamic_cast<DuckLakeTable*>(request.companion);
  if (request.companion != nullptr && companion == nullptr) {
    return Status::Invalid("the companion of ", qualified_name_, " is not a DuckLake table");
  }
  if (companion != nullptr) {
    if (auto missing = companion->MissingFileColumn(request.companion_files)) {
      return Outcome(CommitStatus::kTableChanged, *missing);
    }
  }

  // An upsert's deletes, planned against the head read above: a commit landing in between
  // takes snapshot head + 1 first, and this one then fails on it (kConflict, planned again).
  DeletePlan deletes;
  if (request.key_deletes) {
    WEIR_ASSIGN_OR_RAISE(deletes, PlanKeyDeletes(*request.key_deletes));
  }
  const int64_t snapshot_id = head + 1;
  const std::string now = TimestampText(UnixMicros(Clock::System().Now()));
  WEIR_RETURN_NOT_OK(db_->Execute(
      "INSERT INTO ducklake_snapshot (snapshot_id, snapshot_time, schema_version, "
      "next_catalog_id, next_file_id) VALUES ($1, $2, $3, $4, $5)",
      {snapshot_id, now, schema_version, next_catalog_id,
       next_file_id + static_cast<int64_t>(request.files.size() + request.companion_files.size() +
                                           deletes.files.size())}));
  std::string changes = fmt::format("inserted_into_table:{}", table_id_);
  if (!deletes.files.empty()) changes += fmt::format(",deleted_from_table:{}", table_id_);
  WEIR_RETURN_NOT_OK(db_->Execute(
      "INSERT INTO ducklake_snapshot_changes (snapshot_id, changes_made, author, commit_message, "
      "commit_extra_info) VALUES ($1, $2, $3, $4, $5)",
      {snapshot_id,
       companion != nullptr && !request.companion_files.empty()
           ? fmt::format("{},inserted_into_table:{}", changes, companion->table_id_)
           : changes,
       std::string("weir"), request.message.empty() ? SqlValue{} : SqlValue{request.message},
       LedgerJson(request.offsets)}));

  // 3. Files with their statistics, for the table and its companion.
  WEIR_RETURN_NOT_OK(InsertFiles(*db_, request.files, snapshot_id, next_file_id));
  if (companion != nullptr && !request.companion_files.empty()) {
    WEIR_RETURN_NOT_OK(
        companion->InsertFiles(*db_, request.companion_files, snapshot_id, next_file_id));
  }
  WEIR_RETURN_NOT_OK(InsertDeletes(deletes, snapshot_id, next_file_id));
  out.rows_deleted = deletes.rows;
  out.delete_files = static_cast<int64_t>(deletes.files.size());

  // 4. The ledger moves to the end of each range, in the same transaction: one guarded UPDATE
  // for the partitions that have a row (each matches only if its row still holds the range's
  // start), one INSERT for the others (a concurrent first commit fails it on the primary key,
  // and the retry sees the fence).
  std::string values;
  std::vector<SqlValue> params = {snapshot_id, request.writer, table_uuid_};
  int64_t expected_updates = 0;
  BatchInsert new_rows(*db_,
                       fmt::format("{} (table_uuid, topic, \"partition\", next_offset, "
                                   "snapshot_id, writer)",
                                   kLedgerTable),
                       6);
  for (const auto& range : request.offsets) {
    if (!ledger.count({range.topic, range.partition})) {
      WEIR_RETURN_NOT_OK(new_rows.Add({table_uuid_, range.topic, int64_t{range.partition},
                                       range.end, snapshot_id, request.writer}));
      continue;
    }
    const size_t n = params.size();
    values += fmt::format(
        "{}(CAST(${} AS VARCHAR), CAST(${} AS BIGINT), CAST(${} AS BIGINT), "
        "CAST(${} AS BIGINT))",
        values.empty() ? "" : ", ", n + 1, n + 2, n + 3, n + 4);
    params.push_back(range.topic);
    params.push_back(int64_t{range.partition});
    params.push_back(range.start);
    params.push_back(range.end);
    ++expected_updates;
  }
  if (expected_updates > 0) {
    WEIR_ASSIGN_OR_RAISE(
        auto updated,
        db_->Execute(fmt::format("UPDATE {0} SET next_offset = v.column4, snapshot_id = $1, "
                                 "writer = $2 FROM (VALUES {1}) AS v WHERE {0}.table_uuid = $3 "
                                 "AND {0}.topic = v.column1 AND {0}.\"partition\" = v.column2 "
                                 "AND {0}.next_offset = v.column3",
                                 kLedgerTable, values),
                     params));
    if (updated != expected_updates) {
      // A writer moved a row between the check above and this update (PostgreSQL's read
      // committed allows that): the caller rolls back; its retry sees the fence.
      return ClassifiedError(ErrorClass::kRetriable, "ducklake", "ledger_moved",
                             "the offset ledger moved during the commit");
    }
  }
  WEIR_RETURN_NOT_OK(new_rows.Finish());
  out.snapshot_id = snapshot_id;
  return out;
}

std::optional<std::string> DuckLakeTable::MissingFileColumn(
    const std::vector<DataFile>& files) const {
  for (const auto& file : files) {
    for (const auto& stats : file.info.columns) {
      const bool known = std::any_of(columns_.begin(), columns_.end(),
                                     [&](const Column& c) { return c.id == stats.field_id; });
      if (!known) {
        return "a file of " + qualified_name_ + " refers to column id " +
               std::to_string(stats.field_id) + " the table lacks";
      }
    }
  }
  return std::nullopt;
}

// Files, their column statistics and partition values; row ids continue the table's.
Status DuckLakeTable::InsertFiles(CatalogDb& db, const std::vector<DataFile>& files,
                                  int64_t snapshot_id, int64_t& next_file_id) {
  WEIR_ASSIGN_OR_RAISE(auto stats_rows, db.Query("SELECT next_row_id FROM ducklake_table_stats "
                                                 "WHERE table_id = $1",
                                                 {table_id_}));
  int64_t next_row_id = 0;
  if (!stats_rows.empty()) {
    WEIR_ASSIGN_OR_RAISE(next_row_id, ToInt(stats_rows[0][0], "next_row_id"));
  }
  std::map<int64_t, ColumnType> types;
  for (const auto& c : columns_) types[c.id] = c.type;
  BatchInsert data_files(db,
                         "ducklake_data_file (data_file_id, table_id, begin_snapshot, "
                         "end_snapshot, file_order, path, path_is_relative, file_format, "
                         "record_count, file_size_bytes, footer_size, row_id_start, partition_id, "
                         "encryption_key, mapping_id, partial_max)",
                         16);
  BatchInsert column_stats(db,
                           "ducklake_file_column_stats (data_file_id, table_id, column_id, "
                           "column_size_bytes, value_count, null_count, min_value, max_value, "
                           "contains_nan, extra_stats)",
                           10);
  BatchInsert partition_values(db,
                               "ducklake_file_partition_value (data_file_id, table_id, "
                               "partition_key_index, partition_value)",
                               4);
  const SqlValue null;
  for (const auto& file : files) {
    const int64_t file_id = next_file_id++;
    WEIR_RETURN_NOT_OK(data_files.Add(
        {file_id, table_id_, snapshot_id, null, null, file.relative_path, true,
         std::string("parquet"), file.info.rows, file.info.size_bytes, file.info.footer_bytes,
         next_row_id, partition_id_ ? SqlValue{*partition_id_} : null, null, null, null}));
    next_row_id += file.info.rows;
    for (const auto& stats : file.info.columns) {
      const ColumnType type = types[stats.field_id];
      const bool has_values = stats.value_count > stats.null_count;
      // A column with values but no min/max (statistics dropped for very long strings) is
      // recorded with unknown bounds, never with bounds that would prune wrongly.
      WEIR_RETURN_NOT_OK(column_stats.Add(
          {file_id, table_id_, int64_t{stats.field_id}, stats.compressed_bytes,
           stats.value_count - stats.null_count, stats.null_count,
           has_values && stats.min ? SqlValue{*StatText(type, stats.min)} : null,
           has_values && stats.max ? SqlValue{*StatText(type, stats.max)} : null,
           type == ColumnType::kDouble || type == ColumnType::kFloat ? SqlValue{false} : null,
           null}));
    }
    for (size_t k = 0; k < file.partition_values.size() && partition_id_; ++k) {
      const auto& value = file.partition_values[k];
      WEIR_RETURN_NOT_OK(partition_values.Add(
          {file_id, table_id_, static_cast<int64_t>(k), value ? SqlValue{*value} : null}));
    }
  }
  WEIR_RETURN_NOT_OK(data_files.Finish());
  WEIR_RETURN_NOT_OK(column_stats.Finish());
  WEIR_RETURN_NOT_OK(partition_values.Finish());
  return UpdateTableStats(db, files);
}

}  // namespace weir::lake::ducklake
