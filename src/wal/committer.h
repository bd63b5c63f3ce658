// The uploader and the committer of one dataset's WAL directory, on the format-neutral
// lake::Table (docs/ARCHITECTURE.md, "WAL mode"):
//  - Upload(): every ready file with rows not uploaded yet is copied to its object,
//    `wal-<uuid>.parquet` in its table partition's directory (a repeat replaces the same
//    object); a failure leaves the file for the next scan. With WriteBloomSidecars, the
//    object's `wal-<uuid>.bloom` follows it (never read back here or by recovery).
//  - CommitOnce(): the commit plan (wal/commit_plan.h) against the table's ledger; landed
//    groups lose their local copies; the chain's uploaded prefix is committed in one commit with
//    one range per partition, and its local files are deleted only after the commit landed
//    (read back with FindCommit after an unknown outcome). A fence, a conflict or a retriable
//    error leaves everything for the next interval; a ledger inside a range is fatal.
//  - Rejects segments (segment_metadata.h; docs/ARCHITECTURE.md "Rejects in WAL mode") are
//    uploaded to the dataset's rejects table and belong to their rotation group like any of
//    its files: on a table that commits its companion (DuckLake) they land in the rows' commit;
//    otherwise (Iceberg) the groups' rejects the rejects table's own ledger lacks commit first,
//    in the rejects table's snapshot moving that ledger, then the rows.
//
// Threading: one thread (the dataset's commit thread); not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
  int64_t rejects = 0;          // rejects landed with it (or just before it, in their table)
  int64_t deleted_local = 0;    // local files deleted (committed or landed before)
  int64_t waiting_groups = 0;   // after a gap, or not uploaded yet
  std::vector<lake::OffsetRange> ranges;
};

// The dataset's rejects table, opened (or created) on first need; owned by the caller.
using RejectsTableOpener = std::function<Result<lake::Table*>()>;

class WalCommitter {
 public:
  // `rejects`: null when the dataset keeps no rejects (a rejects segment is then an error).
  WalCommitter(std::string directory, lake::Table* table, std::string writer_prefix,
               const Clock& clock, uint64_t seed, RejectsTableOpener rejects = {});

  // The writer of this directory's ready files holds `mutex` from a rotation's rename until its
  // Kafka offset commit is decided (a refused one deletes the files): CommitOnce lists the
  // directory under it, so it never commits a file whose offsets the group may still refuse.
  void GuardListing(std::mutex* mutex) { listing_ = mutex; }
  // `wal.bloom_sidecar`: every uploaded rows file also gets its bloom-filter sidecar
  // (wal/bloom_sidecar.h) for `columns`, written after the data object; a failure to write it
  // fails the file's upload (retried at the next scan, both objects replaced).
  void WriteBloomSidecars(std::vector<std::string> columns) {
    sidecar_columns_ = std::move(columns);
  }

  Result<UploadResult> Upload();
  // `origin`: where partitions without a ledger may start a chain (commit_plan.h).
  Result<CommitOnceResult> CommitOnce(const PartitionOffsets& origin);

 private:
  Status DeleteLocal(const std::vector<ReadyGroup>& groups, int64_t* deleted);
  // For a table that does not commit its companion: commits the rejects of `committing` that
  // the rejects table's ledger lacks, before the rows' commit `rows`. false: not landed (the
  // next interval plans again).
  Result<bool> CommitRejectsFirst(const std::vector<ReadyGroup>& committing,
                                  const lake::CommitRequest& rows, CommitOnceResult* result);

  std::string directory_;
  lake::Table* table_;
  std::string writer_prefix_;
  UuidV7Generator ids_;
  RejectsTableOpener open_rejects_;
  std::mutex* listing_ = nullptr;
  std::vector<std::string> sidecar_columns_;        // empty: no sidecars
  std::map<std::string, lake::DataFile> uploaded_;  // by local file name
  std::set<std::string> rejects_files_;             // the uploaded_ ones of the rejects table
  // The request of a commit whose outcome was unknown and not resolved yet: retried as is.
  std::optional<lake::CommitRequest> unresolved_;
};

}  // namespace weir::wal
