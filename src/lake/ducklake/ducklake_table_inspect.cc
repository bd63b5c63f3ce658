// DuckLakeTable::Inspect: what `weir maintain` reads of a DuckLake table, straight from the
// catalog database (lake/inspection.h).
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/ducklake_table.h"

namespace weir::lake::ducklake {
namespace {

// Milliseconds since the epoch of a catalog timestamp as both databases print it:
// "YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]" (SQLite holds the text DuckDB or weir wrote,
// PostgreSQL prints its timestamptz so under the session's UTC time zone).
Result<int64_t> TimestampMillis(const std::optional<std::string>& text) {
  if (!text) return Status::Invalid("a snapshot without snapshot_time");
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, consumed = 0;
  double second = 0;
  if (std::sscanf(text->c_str(), "%d-%d-%d%*[ T]%d:%d:%lf%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6) {
    return Status::Invalid("snapshot_time '", *text, "' is not a timestamp");
  }
  int offset_minutes = 0;
  const char* zone = text->c_str() + consumed;
  if (*zone == '+' || *zone == '-') {
    int zone_hours = 0, zone_minutes = 0;
    if (std::sscanf(zone + 1, "%d:%d", &zone_hours, &zone_minutes) < 1) {
      return Status::Invalid("snapshot_time '", *text, "' has a malformed time zone");
    }
    offset_minutes = (*zone == '-' ? -1 : 1) * (zone_hours * 60 + zone_minutes);
  }
  using namespace std::chrono;
  const sys_days date =
      year_month_day{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                     std::chrono::day{static_cast<unsigned>(day)}};
  const int64_t days_ms = duration_cast<milliseconds>(date.time_since_epoch()).count();
  return days_ms + (static_cast<int64_t>(hour) * 60 + minute - offset_minutes) * 60'000 +
         static_cast<int64_t>(second * 1000.0 + 0.5);
}

}  // namespace

Result<TableInspection> DuckLakeTable::Inspect() {
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return Status::Invalid("table ", qualified_name_, " no longer exists");
  TableInspection out;
  out.fs = filesystem();
  out.root = own_directory_ ? data_directory_ : std::string();
  const files::ObjectStore& store = catalog_->store();
  // A file's path: relative to the table's directory, or an absolute URI of the store.
  const auto path_of = [&](const std::optional<std::string>& path,
                           const std::optional<std::string>& relative) -> Result<std::string> {
    if (ToBool(relative)) return data_directory_ + path.value_or("");
    return store.PathOfUri(path.value_or(""));
  };

  WEIR_ASSIGN_OR_RAISE(
      auto data, db_->Query("SELECT path, path_is_relative, file_size_bytes, record_count, "
                            "end_snapshot IS NULL, data_file_id, partition_id, mapping_id FROM "
                            "ducklake_data_file WHERE table_id = $1",
                            {table_id_}));
  WEIR_ASSIGN_OR_RAISE(
      auto deletes, db_->Query("SELECT path, path_is_relative, file_size_bytes, delete_count, "
                               "end_snapshot IS NULL FROM ducklake_delete_file WHERE table_id = $1",
                               {table_id_}));
  // What Table::Rewrite needs: the live delete files of each data file (a rewrite applies
  // them) and every live file's partition values.
  WEIR_ASSIGN_OR_RAISE(auto live_deletes,
                       db_->Query("SELECT data_file_id, path, path_is_relative, delete_count, "
                                  "format FROM ducklake_delete_file WHERE table_id = $1 AND "
                                  "end_snapshot IS NULL",
                                  {table_id_}));
  struct FileDeletes {
    std::vector<PositionDeletes> files;
    int64_t rows = 0;
    bool applicable = true;  // every one a Parquet position delete file
  };
  std::map<int64_t, FileDeletes> deletes_of;
  for (const auto& row : live_deletes) {
    WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[0], "data_file_id"));
    WEIR_ASSIGN_OR_RAISE(std::string path, path_of(row[1], row[2]));
    WEIR_ASSIGN_OR_RAISE(const int64_t count, ToInt(row[3], "delete_count"));
    FileDeletes& d = deletes_of[id];
    d.files.push_back({std::move(path), std::string(), -1, 0});
    d.rows += count;
    if (row[4].value_or("parquet") != "parquet") d.applicable = false;
  }
  std::set<int64_t> inlined_from;
  // DuckDB inlines small deletes into the catalog instead of writing a delete file
  // (`ducklake_inlined_delete_<table id>`: file_id, row_id, begin_snapshot): such a data file
  // has deletes too, and a rewrite of it would bring the deleted rows back.
  const std::string inlined = fmt::format("ducklake_inlined_delete_{}", table_id_);
  WEIR_ASSIGN_OR_RAISE(
      auto inlined_exists,
      db_->Query(db_->dialect() == SqlDialect::kSqlite
                     ? fmt::format("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                   "name = '{}'",
                                   inlined)
                     : fmt::format("SELECT count(*) FROM information_schema.tables WHERE "
                                   "table_name = '{}' AND table_schema = current_schema()",
                                   inlined),
                 {}));
  WEIR_ASSIGN_OR_RAISE(const int64_t has_inlined, ToInt(inlined_exists.at(0).at(0), "count"));
  if (has_inlined > 0) {
    WEIR_ASSIGN_OR_RAISE(auto inlined_rows,
                         db_->Query(fmt::format("SELECT DISTINCT file_id FROM {}", inlined), {}));
    for (const auto& row : inlined_rows) {
      WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[0], "file_id"));
      inlined_from.insert(id);
    }
  }
  WEIR_ASSIGN_OR_RAISE(
      auto values, db_->Query("SELECT v.data_file_id, v.partition_key_index, v.partition_value "
                              "FROM ducklake_file_partition_value v JOIN ducklake_data_file f ON "
                              "f.data_file_id = v.data_file_id WHERE v.table_id = $1 AND "
                              "f.end_snapshot IS NULL",
                              {table_id_}));
  std::map<int64_t, std::map<int64_t, std::optional<std::string>>> partition_values;
  for (const auto& row : values) {
    WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[0], "data_file_id"));
    WEIR_ASSIGN_OR_RAISE(const int64_t key, ToInt(row[1], "partition_key_index"));
    partition_values[id][key] = row[2];
  }
  for (const auto* rows : {&data, &deletes}) {
    for (const auto& row : *rows) {
      WEIR_ASSIGN_OR_RAISE(std::string path, path_of(row[0], row[1]));
      out.referenced.insert(path);
      if (!ToBool(row[4])) continue;
      LakeFile file;
      file.path = std::move(path);
      file.kind = rows == &data ? LakeFileKind::kData : LakeFileKind::kDeletes;
      WEIR_ASSIGN_OR_RAISE(file.size_bytes, ToInt(row[2], "file_size_bytes"));
      WEIR_ASSIGN_OR_RAISE(file.record_count, ToInt(row[3], "record_count"));
      if (rows == &data) {
        WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[5], "data_file_id"));
        std::optional<int64_t> partition;
        if (row[6]) {
          WEIR_ASSIGN_OR_RAISE(partition, ToInt(row[6], "partition_id"));
        }
        file.rewritable = !row[7] && partition == partition_id_;
        if (inlined_from.contains(id)) {
          file.rewritable = false;
          file.not_rewritable_reason = "deletes inlined into the catalog";
        }
        if (const auto d = deletes_of.find(id); d != deletes_of.end()) {
          if (!d->second.applicable) {
            file.rewritable = false;
            file.not_rewritable_reason = "a delete file in another format than Parquet";
          }
          file.deletes = d->second.files;
          file.deleted_rows = d->second.rows;
        }
        if (file.rewritable && partition_id_) {
          file.partition_values.assign(partitioning_.size(), std::nullopt);
          for (const auto& [key, value] : partition_values[id]) {
            if (key >= 0 && key < static_cast<int64_t>(partitioning_.size())) {
              file.partition_values[key] = value;
            }
          }
        }
      }
      out.live.push_back(std::move(file));
    }
  }
  // Files waiting for DuckDB's ducklake_cleanup_old_files carry no table id, and a relative
  // one is relative to the catalog's data path (as DuckDB's ducklake 1.5 records them). They
  // count as referenced: never swept here.
  WEIR_ASSIGN_OR_RAISE(auto scheduled, db_->Query("SELECT path, path_is_relative FROM "
                                                  "ducklake_files_scheduled_for_deletion",
                                                  {}));
  WEIR_ASSIGN_OR_RAISE(std::string data_root, store.PathOfUri(store.uri()));
  if (!data_root.empty() && data_root.back() != '/') data_root += '/';
  for (const auto& row : scheduled) {
    if (ToBool(row[1])) {
      out.referenced.insert(data_root + row[0].value_or(""));
    } else {
      WEIR_ASSIGN_OR_RAISE(std::string path, store.PathOfUri(row[0].value_or("")));
      out.referenced.insert(std::move(path));
    }
  }

  // weir's commits are those it authored with a ledger (ducklake_table.cc writes both).
  WEIR_ASSIGN_OR_RAISE(
      auto snapshots,
      db_->Query("SELECT s.snapshot_id, s.snapshot_time, c.author = 'weir' AND "
                 "c.commit_extra_info LIKE '{\"weir_offsets\":%' FROM ducklake_snapshot s LEFT "
                 "JOIN ducklake_snapshot_changes c ON c.snapshot_id = s.snapshot_id ORDER BY "
                 "s.snapshot_id",
                 {}));
  WEIR_ASSIGN_OR_RAISE(auto ledger,
                       db_->Query(fmt::format("SELECT DISTINCT snapshot_id FROM {} WHERE "
                                              "table_uuid = $1",
                                              kLedgerTable),
                                  {table_uuid_}));
  // The ledger rows of this table name the snapshot that last moved each partition.
  std::set<int64_t> ledger_snapshots;
  for (const auto& row : ledger) {
    WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[0], "ledger snapshot_id"));
    ledger_snapshots.insert(id);
  }
  for (const auto& row : snapshots) {
    LakeSnapshot snapshot;
    WEIR_ASSIGN_OR_RAISE(snapshot.id, ToInt(row[0], "snapshot_id"));
    WEIR_ASSIGN_OR_RAISE(snapshot.timestamp_ms, TimestampMillis(row[1]));
    snapshot.weir_commit = ToBool(row[2]);
    out.snapshots.push_back(snapshot);
  }
  if (!ledger_snapshots.empty()) out.ledger_snapshot = *ledger_snapshots.rbegin();
  // weir's ledger is a table of its own, untouched by expiry: only the newest snapshot, which
  // the next commit builds on, must stay.
  if (!out.snapshots.empty()) out.protected_snapshots.insert(out.snapshots.back().id);
  return out;
}

Result<ExpireResult> DuckLakeTable::ExpireSnapshots(const std::vector<int64_t>& ids,
                                                    int64_t queue_window_ms) {
  ExpireResult result;
  if (!ids.empty()) {
    WEIR_ASSIGN_OR_RAISE(auto head,
                         db_->Query("SELECT max(snapshot_id) FROM ducklake_snapshot", {}));
    WEIR_ASSIGN_OR_RAISE(const int64_t newest, ToInt(head.at(0)[0], "newest snapshot"));
    std::string list;
    for (const int64_t id : ids) {
      if (id == newest) {
        return Status::Invalid("snapshot ", id, " is the catalog's newest and cannot be expired");
      }
      list += (list.empty() ? "" : ", ") + std::to_string(id);
    }
    WEIR_RETURN_NOT_OK(catalog_->RunDdl(
        {fmt::format("CALL ducklake_expire_snapshots('weir_lake', versions => [{}])", list)}));
    result.expired = static_cast<int64_t>(ids.size());
  }
  WEIR_RETURN_NOT_OK(catalog_->RunDdl({fmt::format(
      "CALL ducklake_cleanup_old_files('weir_lake', older_than => now() - INTERVAL '{} "
      "milliseconds')",
      queue_window_ms)}));
  return result;
}

}  // namespace weir::lake::ducklake
