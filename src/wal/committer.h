// The uploader and the committer of one dataset's WAL directory, on the format-neutral
// lake::Table (docs/ARCHITECTURE.md, "WAL mode"):
//  - Upload(): every ready file with rows not uploaded yet is copied to its object,
//    `wal-<uuid>.parquet` in its table partition's directory (a repeat replaces the same
//    object); a failure leaves the file for the next scan.
//  - CommitOnce(): the commit plan (wal/commit_plan.h) against the table's ledger; landed
//    groups lose their local copies; the chain's uploaded prefix is committed in one commit with
//    one range per partition, and its local files are deleted only after the commit landed
//    (read back with FindCommit after an unknown outcome). A fence, a conflict or a retriable
//    error leaves everything for the next interval; a ledger inside a range is fatal.
//
// Threading: one thread (the dataset's commit thread); not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "base/uuid.h"
#include "lake/table.h"
#include "wal/commit_plan.h"

namespace weir::wal {

struct UploadResult {
  int64_t uploaded = 0, failed = 0, bytes = 0;
  Status first_error;
};

struct CommitOnceResult {
  lake::CommitStatus status = lake::CommitStatus::kCommitted;
  bool committed = false;       // a commit landed (now or found landed)
  int64_t files = 0, rows = 0;  // of the commit
  int64_t deleted_local = 0;    // local files deleted (committed or landed before)
  int64_t waiting_groups = 0;   // after a gap, or not uploaded yet
  std::vector<lake::OffsetRange> ranges;
};

class WalCommitter {
 public:
  WalCommitter(std::string directory, lake::Table* table, std::string writer_prefix,
               const Clock& clock, uint64_t seed);

  Result<UploadResult> Upload();
  // `origin`: where partitions without a ledger may start a chain (commit_plan.h).
  Result<CommitOnceResult> CommitOnce(const PartitionOffsets& origin);

 private:
  Status DeleteLocal(const std::vector<ReadyGroup>& groups, int64_t* deleted);

  std::string directory_;
  lake::Table* table_;
  std::string writer_prefix_;
  UuidV7Generator ids_;
  std::map<std::string, lake::DataFile> uploaded_;  // by local file name
  // The request of a commit whose outcome was unknown and not resolved yet: retried as is.
  std::optional<lake::CommitRequest> unresolved_;
};

}  // namespace weir::wal
