// What the committer does with a dataset's ready files at one interval, decided against the
// table's offset ledger L (the next offset of each partition) — the ledger wins over the
// files: a ready file's range is fenced in the lake commit like any flush's.
//
// Files are grouped by rotation group (topic, partition, start, end: the files of one
// rotation, one per table partition, share the range). Per partition, with groups in offset
// order:
//   end < L             landed: the range is in the table already (by these files, or by a
//                       commit whose local delete did not happen): delete the local copies
//   start == L          the chain: this group and each following one that starts at the
//                       previous end + 1 commit together, as one range [L, last end + 1)
//   start > L           waiting: an earlier range is not in the table yet (a previous owner
//                       of the partition has not committed it): keep, try again next interval
//   start < L <= end    conflicting: the ledger stands inside the range; cannot arise from
//                       weir's own commits: the committer stops (the error names the files)
// A partition without a ledger entry starts its chain only at `origin` (the offset its first
// owner began consuming at when neither the ledger nor Kafka had one); without an origin every
// group waits, because an absent ledger cannot vouch that no earlier range is pending.
//
// Pure: reads nothing, changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "lake/table.h"
#include "wal/wal_directory.h"

namespace weir::wal {

struct ReadyGroup {
  std::string topic;
  int32_t partition = 0;
  int64_t start = 0, end = 0;       // inclusive
  std::vector<SegmentEntry> files;  // by name
};

// The ready files of `entries` (others are ignored) grouped by rotation group, ordered by
// topic, partition and start. Two groups of one partition whose ranges overlap are an error
// naming both.
Result<std::vector<ReadyGroup>> GroupReadyFiles(const std::vector<SegmentEntry>& entries);

using PartitionOffsets = std::map<std::pair<std::string, int32_t>, int64_t>;

struct CommitPlan {
  std::vector<ReadyGroup> commit;         // every group of the commit, in order
  std::vector<lake::OffsetRange> ranges;  // one per partition of `commit`: [L, end + 1)
  std::vector<ReadyGroup> landed;
  std::vector<ReadyGroup> waiting;
  std::vector<ReadyGroup> conflicting;
};

CommitPlan PlanCommit(const std::vector<ReadyGroup>& groups, const PartitionOffsets& ledger,
                      const PartitionOffsets& origin);

}  // namespace weir::wal
