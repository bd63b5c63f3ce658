// Recovery of a WAL directory at start, before the uploader runs: the ingestor design's table,
// row by row, comparing each file with the Kafka offset committed for its partition (C, the
// next offset the group reads) and with the lake:
//
//   file     C                                      action
//   active   any                                    delete (its offsets were never committed)
//   ready    none, or C <= start                    delete (Kafka delivers the records again)
//   ready    C > end, not in the table              keep   (the uploader and committer finish)
//   ready    C > end, in the table                  delete the local copy
//   ready    start < C <= end                       refuse to start, naming the file
//
// "In the table" means a snapshot the table still keeps references the file's object (named
// from its UUID) and the table's offset ledger for the partition has reached end + 1. A file
// the table references while the ledger has not reached its end cannot arise from weir's
// atomic commits: recovery refuses it too, naming the file. Planning changes nothing (`weir
// wal check` prints the plan); ApplyRecovery deletes, and only when no file is refused.
//
// Threading: any one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "wal/wal_directory.h"

namespace weir::wal {

enum class RecoveryAction {
  kDelete,       // active, or ready but not committed to Kafka: Kafka delivers it again
  kKeep,         // ready, committed, not in the table yet
  kDeleteLocal,  // ready, committed and in the table: only the local copy goes
  kRefuse,       // the committed offset lies inside the file's range (or the lake disagrees)
  kIgnore,       // not a segment file: left alone
};

std::string_view ToString(RecoveryAction action);

struct RecoveryDecision {
  SegmentEntry file;
  RecoveryAction action = RecoveryAction::kIgnore;
  std::optional<int64_t> committed;  // C of the file's partition
  std::optional<bool> in_table;      // asked only for a ready file with C > end
  std::string reason;
};

// Whether a ready file is in its table (see above). Errors (the catalog is down) stop the
// plan: recovery never guesses.
class TableProbe {
 public:
  virtual ~TableProbe() = default;
  struct Answer {
    // Whether a kept snapshot references the file's object; nullopt for a file without rows,
    // which has no object (it only moves the ledger), so the ledger alone says.
    std::optional<bool> referenced;
    std::optional<int64_t> ledger;  // the ledger's next offset of the file's partition
  };
  virtual Result<Answer> Probe(const SegmentEntry& file) = 0;
};

using CommittedOffsets = std::map<std::pair<std::string, int32_t>, int64_t>;

// The decision for every entry, in the entries' order.
Result<std::vector<RecoveryDecision>> PlanRecovery(const std::vector<SegmentEntry>& entries,
                                                   const CommittedOffsets& committed,
                                                   TableProbe& probe);

// An error naming every refused file when any is refused (nothing deleted then); otherwise
// deletes the files to delete and fsyncs the directory.
Status ApplyRecovery(const std::string& directory, const std::vector<RecoveryDecision>& decisions);

}  // namespace weir::wal
