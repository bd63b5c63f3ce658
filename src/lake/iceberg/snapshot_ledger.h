// weir's offset ledger, carried in the summaries of the snapshots weir writes.
//
// Every weir snapshot's summary holds `weir.commit-id` (unique per commit attempt series: a
// retry after an unknown outcome reuses it) and, for every topic the table has ever been fed
// from, `weir.offsets.<topic>` = a JSON object partition → next offset (the whole ledger, not
// only the topics of this commit). The ledger of a table is that of the newest snapshot in
// main's ancestry with a `weir.commit-id`; snapshots of other writers in between carry none
// and are skipped. See README.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "lake/iceberg/metadata.h"

namespace weir::lake::iceberg {

inline constexpr char kCommitIdKey[] = "weir.commit-id";
inline constexpr char kOffsetsKeyPrefix[] = "weir.offsets.";

// topic → partition → next offset.
using OffsetLedger = std::map<std::string, std::map<int32_t, int64_t>>;

struct WeirCommit {
  const Snapshot* snapshot = nullptr;
  std::string commit_id;
  OffsetLedger ledger;
};

// Writes the commit id and the full ledger into a snapshot summary.
void WriteLedger(const std::string& commit_id, const OffsetLedger& ledger,
                 std::map<std::string, std::string>& summary);

// The ledger a weir snapshot's summary holds (an error names a key whose JSON is malformed).
Result<OffsetLedger> ReadLedger(const Snapshot& snapshot);

// The newest snapshot in `branch`'s ancestry written by weir, with its ledger; nullopt when
// weir never committed to the branch (or its snapshots were all expired).
Result<std::optional<WeirCommit>> NewestWeirCommit(const TableMetadata& metadata,
                                                   const std::string& branch = kMainBranch);

// The snapshot in `branch`'s ancestry whose summary carries `commit_id`, or nullptr: how a
// retry after an unknown outcome finds out whether its commit landed.
const Snapshot* FindCommit(const TableMetadata& metadata, const std::string& commit_id,
                           const std::string& branch = kMainBranch);

}  // namespace weir::lake::iceberg
