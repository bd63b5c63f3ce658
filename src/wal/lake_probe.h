// The lake's side of recovery (wal/recovery.h) for one dataset's table: whether a snapshot the
// table keeps references a ready file's object, and the table's ledger of the file's
// partition. The inspection and each topic's ledger are read once, on the first question.
//
// Threading: one thread, as the table.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "lake/table.h"
#include "wal/recovery.h"

namespace weir::wal {

class LakeTableProbe final : public TableProbe {
 public:
  // `table` null: the table does not exist yet, so nothing is in it.
  explicit LakeTableProbe(lake::Table* table) : table_(table) {}
  Result<Answer> Probe(const SegmentEntry& file) override;

 private:
  lake::Table* table_;
  std::optional<std::set<std::string>> referenced_;  // object names (last path component)
  std::map<std::string, std::map<int32_t, int64_t>> ledgers_;
};

}  // namespace weir::wal
