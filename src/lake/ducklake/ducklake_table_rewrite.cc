// DuckLakeTable::Rewrite: compaction's commit. One snapshot ends the removed files
// (end_snapshot) and begins the added ones, so DuckDB's reader sees the new files from that
// snapshot on and time travel to an earlier one still reads the old files (until an expiry
// removes those snapshots and queues the files). The offset ledger is not touched.
#include <map>
#include <set>

#include <fmt/format.h>

#include "base/clock.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/ducklake/ducklake_table.h"
#include "lake/ducklake/stats_text.h"

namespace weir::lake::ducklake {
namespace {

CommitResult RewriteOutcome(CommitStatus status, std::string reason) {
  CommitResult out;
  out.status = status;
  out.reason = std::move(reason);
  return out;
}

}  // namespace

Result<CommitResult> DuckLakeTable::Rewrite(const RewriteRequest& request) {
  if (request.remove.empty() || (request.add.empty() && request.remove_deletes.empty())) {
    return Status::Invalid("a rewrite of ", qualified_name_, " removes and adds files");
  }
  if (!request.equality_deletes.empty()) {
    return Status::Invalid("a rewrite of ", qualified_name_,
                           " names equality delete files, which DuckLake does not have");
  }
  WEIR_ASSIGN_OR_RAISE(const auto hold, catalog_->LockForWrite());
  WEIR_RETURN_NOT_OK(db_->Begin());
  auto result = TryRewrite(request);
  if (result.ok() && result->status == CommitStatus::kCommitted) {
    const Status committed = db_->Commit();
    if (committed.ok()) return result;
    db_->Rollback();
    return RewriteOutcome(CommitStatus::kOutcomeUnknown, committed.message());
  }
  db_->Rollback();
  if (result.ok()) return result;
  if (IsUniqueConflict(result.status())) {
    // A concurrent commit (an ingest flush) took the snapshot id first.
    return RewriteOutcome(CommitStatus::kConflict, result.status().message());
  }
  return result.status();
}

Result<CommitResult> DuckLakeTable::TryRewrite(const RewriteRequest& request) {
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return RewriteOutcome(CommitStatus::kTableChanged, qualified_name_ + " is gone");
  if (auto missing = MissingFileColumn(request.add)) {
    return RewriteOutcome(CommitStatus::kTableChanged, *missing);
  }
  // The files to remove, found among the live ones by the path Inspect gave them.
  WEIR_ASSIGN_OR_RAISE(auto live,
                       db_->Query("SELECT data_file_id, path, path_is_relative, record_count, "
                                  "file_size_bytes, mapping_id FROM ducklake_data_file WHERE "
                                  "table_id = $1 AND end_snapshot IS NULL",
                                  {table_id_}));
  const std::set<std::string> wanted(request.remove.begin(), request.remove.end());
  std::vector<int64_t> ids;
  int64_t removed_rows = 0, removed_bytes = 0;
  for (const auto& row : live) {
    std::string path;
    if (ToBool(row[2])) {
      path = data_directory_ + row[1].value_or("");
    } else {
      WEIR_ASSIGN_OR_RAISE(path, catalog_->store().PathOfUri(row[1].value_or("")));
    }
    if (!wanted.contains(path)) continue;
    if (row[5]) {
      return RewriteOutcome(CommitStatus::kTableChanged, path + " maps its columns by name");
    }
    WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[0], "data_file_id"));
    WEIR_ASSIGN_OR_RAISE(const int64_t rows, ToInt(row[3], "record_count"));
    WEIR_ASSIGN_OR_RAISE(const int64_t bytes, ToInt(row[4], "file_size_bytes"));
    ids.push_back(id);
    removed_rows += rows;
    removed_bytes += bytes;
  }
  if (ids.size() != wanted.size()) {
    return RewriteOutcome(CommitStatus::kTableChanged,
                          fmt::format("{} of the {} files to rewrite are no longer live",
                                      wanted.size() - ids.size(), wanted.size()));
  }
  std::string id_list;
  for (const int64_t id : ids) id_list += (id_list.empty() ? "" : ", ") + std::to_string(id);
  // The live delete files of the removed files must be exactly those the rewrite applied: one
  // it did not apply (a DELETE since the plan) would be lost with its data file.
  WEIR_ASSIGN_OR_RAISE(auto deletes,
                       db_->Query(fmt::format("SELECT delete_file_id, path, path_is_relative, "
                                              "delete_count FROM ducklake_delete_file WHERE "
                                              "table_id = $1 AND end_snapshot IS NULL AND "
                                              "data_file_id IN ({})",
                                              id_list),
                                  {table_id_}));
  const std::set<std::string> applied(request.remove_deletes.begin(), request.remove_deletes.end());
  std::vector<int64_t> delete_ids;
  int64_t deleted_rows = 0;
  for (const auto& row : deletes) {
    std::string path;
    if (ToBool(row[2])) {
      path = data_directory_ + row[1].value_or("");
    } else {
      WEIR_ASSIGN_OR_RAISE(path, catalog_->store().PathOfUri(row[1].value_or("")));
    }
    if (!applied.contains(path)) {
      return RewriteOutcome(
          CommitStatus::kTableChanged,
          "deletes apply to files to rewrite that the rewrite did not apply (" + path + ")");
    }
    WEIR_ASSIGN_OR_RAISE(const int64_t id, ToInt(row[0], "delete_file_id"));
    WEIR_ASSIGN_OR_RAISE(const int64_t count, ToInt(row[3], "delete_count"));
    delete_ids.push_back(id);
    deleted_rows += count;
  }
  if (delete_ids.size() != applied.size()) {
    return RewriteOutcome(CommitStatus::kTableChanged,
                          "delete files the rewrite applied are no longer live");
  }
  // Deletes DuckDB inlined into the catalog cannot be ended with the file: refused.
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
    WEIR_ASSIGN_OR_RAISE(
        auto hits,
        db_->Query(fmt::format("SELECT count(*) FROM {} WHERE file_id IN ({})", inlined, id_list),
                   {}));
    WEIR_ASSIGN_OR_RAISE(const int64_t inlined_rows, ToInt(hits.at(0).at(0), "count"));
    if (inlined_rows > 0) {
      return RewriteOutcome(CommitStatus::kTableChanged,
                            "deletes inlined into the catalog apply to files to rewrite");
    }
  }
  int64_t added_rows = 0;
  for (const auto& file : request.add) added_rows += file.info.rows;
  if (added_rows != removed_rows - deleted_rows) {
    return Status::Invalid("a rewrite of ", qualified_name_, " adds ", added_rows, " rows for the ",
                           removed_rows, " it removes less the ", deleted_rows, " deleted");
  }

  WEIR_ASSIGN_OR_RAISE(auto heads,
                       db_->Query("SELECT snapshot_id, schema_version, next_catalog_id, "
                                  "next_file_id FROM ducklake_snapshot WHERE snapshot_id = "
                                  "(SELECT max(snapshot_id) FROM ducklake_snapshot)",
                                  {}));
  if (heads.empty()) return RewriteOutcome(CommitStatus::kTableChanged, "no snapshot");
  WEIR_ASSIGN_OR_RAISE(const int64_t head, ToInt(heads[0][0], "snapshot_id"));
  WEIR_ASSIGN_OR_RAISE(const int64_t schema_version, ToInt(heads[0][1], "schema_version"));
  WEIR_ASSIGN_OR_RAISE(const int64_t next_catalog_id, ToInt(heads[0][2], "next_catalog_id"));
  WEIR_ASSIGN_OR_RAISE(int64_t next_file_id, ToInt(heads[0][3], "next_file_id"));
  const int64_t snapshot_id = head + 1;
  const std::string now = TimestampText(UnixMicros(Clock::System().Now()));
  WEIR_RETURN_NOT_OK(
      db_->Execute("INSERT INTO ducklake_snapshot (snapshot_id, snapshot_time, schema_version, "
                   "next_catalog_id, next_file_id) VALUES ($1, $2, $3, $4, $5)",
                   {snapshot_id, now, schema_version, next_catalog_id,
                    next_file_id + static_cast<int64_t>(request.add.size())}));
  // The change DuckDB's own compaction (ducklake_merge_adjacent_files) records, which its
  // conflict check and ducklake_snapshots know.
  WEIR_RETURN_NOT_OK(db_->Execute(
      "INSERT INTO ducklake_snapshot_changes (snapshot_id, changes_made, author, commit_message, "
      "commit_extra_info) VALUES ($1, $2, $3, $4, $5)",
      {snapshot_id, fmt::format("merge_adjacent:{}", table_id_), std::string("weir"),
       request.message.empty() ? SqlValue{} : SqlValue{request.message}, SqlValue{}}));
  WEIR_ASSIGN_OR_RAISE(
      const int64_t ended,
      db_->Execute(fmt::format("UPDATE ducklake_data_file SET end_snapshot = $1 WHERE table_id = "
                               "$2 AND end_snapshot IS NULL AND data_file_id IN ({})",
                               id_list),
                   {snapshot_id, table_id_}));
  if (ended != static_cast<int64_t>(ids.size())) {
    return RewriteOutcome(CommitStatus::kTableChanged, "files to rewrite ended concurrently");
  }
  if (!delete_ids.empty()) {
    std::string delete_list;
    for (const int64_t id : delete_ids) {
      delete_list += (delete_list.empty() ? "" : ", ") + std::to_string(id);
    }
    WEIR_ASSIGN_OR_RAISE(
        const int64_t ended_deletes,
        db_->Execute(fmt::format("UPDATE ducklake_delete_file SET end_snapshot = $1 WHERE "
                                 "table_id = $2 AND end_snapshot IS NULL AND delete_file_id IN "
                                 "({})",
                                 delete_list),
                     {snapshot_id, table_id_}));
    if (ended_deletes != static_cast<int64_t>(delete_ids.size())) {
      return RewriteOutcome(CommitStatus::kTableChanged, "delete files ended concurrently");
    }
  }
  // The new files take new row ids (InsertFiles adds their rows to the table statistics); the
  // removed rows leave the record count and their bytes the table's size.
  WEIR_RETURN_NOT_OK(InsertFiles(*db_, request.add, snapshot_id, next_file_id));
  WEIR_RETURN_NOT_OK(db_->Execute("UPDATE ducklake_table_stats SET record_count = record_count - "
                                  "$1, file_size_bytes = file_size_bytes - $2 WHERE table_id = $3",
                                  {removed_rows, removed_bytes, table_id_})
                         .status());
  CommitResult out;
  out.snapshot_id = snapshot_id;
  return out;
}

}  // namespace weir::lake::ducklake
