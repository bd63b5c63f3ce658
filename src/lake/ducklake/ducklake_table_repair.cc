// DuckLakeTable::DropDataFiles: the repair of data files whose objects are missing or damaged
// (`weir maintain fsck --repair`). One new snapshot, written as DuckDB's own deletes are: the
// files' rows in ducklake_data_file (and the delete files on them) end at the new snapshot, the
// table's statistics lose their rows and bytes, and the snapshot's changes say
// deleted_from_table. Older snapshots keep them; the offset ledger is not touched.
#include <map>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/ducklake_table.h"
#include "lake/ducklake/stats_text.h"

namespace weir::lake::ducklake {
namespace {

constexpr int kAttempts = 20;

std::string IdList(const std::vector<int64_t>& ids) {
  std::string out;
  for (const int64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

}  // namespace

Result<DropFilesResult> DuckLakeTable::DropDataFiles(const std::vector<std::string>& paths,
                                                     const std::string& reason) {
  if (paths.empty()) return DropFilesResult{};
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
    if (!exists) return Status::Invalid("table ", qualified_name_, " no longer exists");
    WEIR_ASSIGN_OR_RAISE(const auto hold, catalog_->LockForWrite());
    WEIR_RETURN_NOT_OK(db_->Begin());
    auto attempted = TryDropDataFiles(paths, reason);
    if (attempted.ok()) {
      const Status committed = db_->Commit();
      if (committed.ok()) return attempted->first;
      db_->Rollback();
      // Whether it landed is read back: the files end at some snapshot now, or not.
      WEIR_ASSIGN_OR_RAISE(auto live, db_->Query("SELECT count(*) FROM ducklake_data_file WHERE "
                                                 "table_id = $1 AND end_snapshot IS NULL AND "
                                                 "data_file_id IN (" +
                                                     IdList(attempted->second) + ")",
                                                 {table_id_}));
      WEIR_ASSIGN_OR_RAISE(const int64_t still, ToInt(live.at(0)[0], "count"));
      if (still == 0) return attempted->first;
      continue;
    }
    db_->Rollback();
    if (IsUniqueConflict(attempted.status())) {
      spdlog::info("table {}: dropping files lost a race to a concurrent commit; retrying",
                   qualified_name_);
      continue;
    }
    return attempted.status();
  }
  return Status::IOError("table ", qualified_name_, ": dropping files lost ", kAttempts,
                         " races in a row");
}

Result<std::pair<DropFilesResult, std::vector<int64_t>>> DuckLakeTable::TryDropDataFiles(
    const std::vector<std::string>& paths, const std::string& reason) {
  const files::ObjectStore& store = catalog_->store();
  WEIR_ASSIGN_OR_RAISE(auto rows,
                       db_->Query("SELECT data_file_id, path, path_is_relative, record_count, "
                                  "file_size_bytes FROM ducklake_data_file WHERE table_id = $1 "
                                  "AND end_snapshot IS NULL",
                                  {table_id_}));
  std::map<std::string, const SqlRow*> live;
  for (const auto& row : rows) {
    std::string path;
    if (ToBool(row[2])) {
      path = data_directory_ + row[1].value_or("");
    } else {
      WEIR_ASSIGN_OR_RAISE(path, store.PathOfUri(row[1].value_or("")));
    }
    live[std::move(path)] = &row;
  }
  DropFilesResult result;
  std::vector<int64_t> ids;
  for (const std::string& path : std::set<std::string>(paths.begin(), paths.end())) {
    const auto found = live.find(path);
    if (found == live.end()) {
      return Status::Invalid("table ", qualified_name_, ": ", path,
                             " is not a live data file of the table");
    }
    WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt((*found->second)[0], "data_file_id"));
    WEIR_ASSIGN_OR_RAISE(const int64_t records, ToInt((*found->second)[3], "record_count"));
    WEIR_ASSIGN_OR_RAISE(const int64_t bytes, ToInt((*found->second)[4], "file_size_bytes"));
    ids.push_back(id);
    ++result.files;
    result.rows += records;
    result.bytes += bytes;
  }
  WEIR_ASSIGN_OR_RAISE(auto heads,
                       db_->Query("SELECT snapshot_id, schema_version, next_catalog_id, "
                                  "next_file_id FROM ducklake_snapshot WHERE snapshot_id = "
                                  "(SELECT max(snapshot_id) FROM ducklake_snapshot)",
                                  {}));
  if (heads.empty()) return Status::Invalid("the catalog has no snapshot");
  WEIR_ASSIGN_OR_RAISE(const int64_t head, ToInt(heads[0][0], "snapshot_id"));
  WEIR_ASSIGN_OR_RAISE(const int64_t schema_version, ToInt(heads[0][1], "schema_version"));
  WEIR_ASSIGN_OR_RAISE(const int64_t next_catalog_id, ToInt(heads[0][2], "next_catalog_id"));
  WEIR_ASSIGN_OR_RAISE(const int64_t next_file_id, ToInt(heads[0][3], "next_file_id"));
  const int64_t snapshot_id = head + 1;
  // A concurrent commit that took the id first fails this on the primary key: the caller retries.
  WEIR_RETURN_NOT_OK(
      db_->Execute("INSERT INTO ducklake_snapshot (snapshot_id, snapshot_time, schema_version, "
                   "next_catalog_id, next_file_id) VALUES ($1, $2, $3, $4, $5)",
                   {snapshot_id, TimestampText(UnixMicros(Clock::System().Now())), schema_version,
                    next_catalog_id, next_file_id}));
  WEIR_RETURN_NOT_OK(db_->Execute(
      "INSERT INTO ducklake_snapshot_changes (snapshot_id, changes_made, author, commit_message, "
      "commit_extra_info) VALUES ($1, $2, $3, $4, $5)",
      {snapshot_id, fmt::format("deleted_from_table:{}", table_id_), std::string("weir"),
       reason.empty() ? SqlValue{} : SqlValue{reason}, SqlValue{}}));
  const std::string list = IdList(ids);
  WEIR_ASSIGN_OR_RAISE(auto ended,
                       db_->Execute("UPDATE ducklake_data_file SET end_snapshot = $1 WHERE "
                                    "table_id = $2 AND end_snapshot IS NULL AND data_file_id IN (" +
                                        list + ")",
                                    {snapshot_id, table_id_}));
  if (ended != static_cast<int64_t>(ids.size())) {
    return Status::Invalid("table ", qualified_name_, ": ", ids.size() - ended,
                           " of the files to drop ended meanwhile");
  }
  WEIR_RETURN_NOT_OK(db_->Execute("UPDATE ducklake_delete_file SET end_snapshot = $1 WHERE "
                                  "table_id = $2 AND end_snapshot IS NULL AND data_file_id IN (" +
                                      list + ")",
                                  {snapshot_id, table_id_})
                         .status());
  WEIR_RETURN_NOT_OK(db_->Execute("UPDATE ducklake_table_stats SET record_count = record_count - "
                                  "$1, file_size_bytes = file_size_bytes - $2 WHERE table_id = $3",
                                  {result.rows, result.bytes, table_id_})
                         .status());
  result.snapshot_id = snapshot_id;
  return std::make_pair(result, ids);
}

}  // namespace weir::lake::ducklake
