#include "lake/table.h"

namespace weir::lake {

std::string_view ToString(CommitStatus status) {
  switch (status) {
    case CommitStatus::kCommitted:
      return "committed";
    case CommitStatus::kAlreadyCommitted:
      return "already committed";
    case CommitStatus::kFenced:
      return "fenced";
    case CommitStatus::kConflict:
      return "conflict";
    case CommitStatus::kTableChanged:
      return "table changed";
    case CommitStatus::kOutcomeUnknown:
      return "outcome unknown";
  }
  return "?";
}

Result<TableInspection> Table::Inspect() {
  return Status::NotImplemented("inspecting a table of this format");
}

Result<std::vector<int64_t>> Table::ReadDeletionVector(const PositionDeletes& /*deletes*/) {
  return Status::NotImplemented("deletion vectors in a table of this format");
}

Result<CommitResult> Table::Rewrite(const RewriteRequest& /*request*/) {
  return Status::NotImplemented("rewriting files of this format");
}

Result<ExpireResult> Table::ExpireSnapshots(const std::vector<int64_t>& /*ids*/,
                                            int64_t /*queue_window_ms*/) {
  return Status::NotImplemented("expiring snapshots of this format");
}

Result<DropFilesResult> Table::DropDataFiles(const std::vector<std::string>& /*paths*/,
                                             const std::string& /*reason*/) {
  return Status::NotImplemented("dropping data files of this format");
}

}  // namespace weir::lake
