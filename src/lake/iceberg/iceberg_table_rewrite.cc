// IcebergTable::Rewrite: compaction's `replace` snapshot, one compare-and-swap attempt on a fresh
// read of the table (iceberg_table.h).
#include <chrono>

#include <fmt/format.h>

#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/snapshot_builder.h"

namespace weir::lake::iceberg {
namespace {

lake::CommitResult RewriteOutcome(CommitStatus status, std::string reason,
                                  int64_t snapshot_id = -1) {
  lake::CommitResult out;
  out.status = status;
  out.reason = std::move(reason);
  out.snapshot_id = snapshot_id;
  return out;
}

}  // namespace

Result<lake::CommitResult> IcebergTable::Rewrite(const RewriteRequest& request) {
  if (request.remove.empty() || (request.add.empty() && request.remove_deletes.empty())) {
    return Status::Invalid("a rewrite of ", name_, " removes and adds files");
  }
  current_is_own_commit_ = false;
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return RewriteOutcome(CommitStatus::kTableChanged, "table " + name_ + " is gone");
  const TableMetadata& base = current_.metadata;
  for (const auto& file : request.add) {
    for (const auto& stats : file.info.columns) {
      if (base.current_schema().FindField(stats.field_id) == nullptr) {
        return RewriteOutcome(CommitStatus::kTableChanged,
                              fmt::format("a file of {} refers to field id {} the table lacks",
                                          name_, stats.field_id));
      }
    }
  }
  ReplaceRequest replace;
  replace.remove.insert(request.remove.begin(), request.remove.end());
  replace.remove_deletes.insert(request.remove_deletes.begin(), request.remove_deletes.end());
  replace.equality_deletes.insert(request.equality_deletes.begin(), request.equality_deletes.end());
  int64_t added_rows = 0;
  for (const auto& file : request.add) {
    WEIR_ASSIGN_OR_RAISE(auto data_file, ManifestFileOf(file));
    added_rows += data_file.record_count;
    replace.files.push_back(std::move(data_file));
  }
  if (!request.message.empty()) replace.extra_summary["weir.message"] = request.message;
  replace.extra_summary["weir.rewrite"] = "compaction";
  replace.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  ReplaceCheck check;
  WEIR_ASSIGN_OR_RAISE(PendingSnapshot pending, BuildReplace(io_, base, replace, random_, check));
  const size_t found = check.found;
  const auto remove_written = [&] {
    for (const auto& uri : pending.written) {
      if (auto path = io_.PathOf(uri); path.ok()) (void)io_.fs->DeleteFile(*path);
    }
  };
  if (found != replace.remove.size()) {
    remove_written();
    return RewriteOutcome(CommitStatus::kTableChanged,
                          fmt::format("{} of the {} files to rewrite are no longer live",
                                      replace.remove.size() - found, replace.remove.size()));
  }
  if (check.found_deletes != replace.remove_deletes.size()) {
    remove_written();
    return RewriteOutcome(CommitStatus::kTableChanged,
                          fmt::format("{} of the {} delete files applied are no longer live",
                                      replace.remove_deletes.size() - check.found_deletes,
                                      replace.remove_deletes.size()));
  }
  if (check.found_equality != replace.equality_deletes.size()) {
    remove_written();
    return RewriteOutcome(
        CommitStatus::kTableChanged,
        fmt::format("{} of the {} equality delete files applied are no longer live",
                    replace.equality_deletes.size() - check.found_equality,
                    replace.equality_deletes.size()));
  }
  if (!check.blocked.empty()) {
    remove_written();
    return RewriteOutcome(
        CommitStatus::kTableChanged,
        "deletes apply to files to rewrite that the rewrite did not apply: " + check.blocked);
  }
  const int64_t removed_rows = std::stoll(pending.snapshot.summary["deleted-records"]);
  if (removed_rows - check.deleted_rows - request.equality_deleted_rows != added_rows) {
    remove_written();
    return Status::Invalid("a rewrite of ", name_, " adds ", added_rows, " rows for the ",
                           removed_rows, " it removes less the ", check.deleted_rows,
                           " deleted by position and the ", request.equality_deleted_rows,
                           " by equality");
  }
  auto committed = store_->Commit(ident_, current_, pending.metadata,
                                  {pending.snapshot, std::nullopt}, pending.written);
  if (!committed.ok()) {
    remove_written();
    return committed.status();
  }
  switch (committed->outcome) {
    case CommitOutcome::kConflict:
      remove_written();
      return RewriteOutcome(CommitStatus::kConflict, committed->message.empty()
                                                         ? "the table moved during the rewrite"
                                                         : committed->message);
    case CommitOutcome::kUnknown:
      return RewriteOutcome(CommitStatus::kOutcomeUnknown, committed->message);
    case CommitOutcome::kCommitted:
      break;
  }
  const int64_t snapshot_id = pending.snapshot.snapshot_id;
  last_list_.emplace(pending.snapshot.manifest_list, std::move(pending.manifests));
  if (committed->current) Adopt(std::move(*committed->current));
  return RewriteOutcome(CommitStatus::kCommitted, "", snapshot_id);
}

}  // namespace weir::lake::iceberg
