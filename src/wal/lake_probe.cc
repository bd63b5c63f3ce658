#include "wal/lake_probe.h"

#include "wal/segment_metadata.h"

namespace weir::wal {
namespace {

std::string LastComponent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Result<TableProbe::Answer> LakeTableProbe::Probe(const SegmentEntry& file) {
  Answer answer;
  WEIR_ASSIGN_OR_RAISE(const SegmentFooter footer, ReadSegmentFooter(file.path));
  if (table_ == nullptr) {
    if (footer.rows > 0 && !footer.rejects) answer.referenced = false;
    return answer;
  }
  const SegmentName& name = *file.name;
  auto ledger = ledgers_.find(name.topic);
  if (ledger == ledgers_.end()) {
    WEIR_ASSIGN_OR_RAISE(auto read, table_->ReadLedger(name.topic));
    ledger = ledgers_.emplace(name.topic, std::move(read)).first;
  }
  if (const auto at = ledger->second.find(name.partition); at != ledger->second.end()) {
    answer.ledger = at->second;
  }
  // No object in this table (a zero-row file has none, a rejects segment's is in the rejects
  // table, which lands in the same commit or before it): the ledger alone says.
  if (footer.rows == 0 || footer.rejects) return answer;
  if (!referenced_) {
    WEIR_ASSIGN_OR_RAISE(const lake::TableInspection inspection, table_->Inspect());
    referenced_.emplace();
    for (const std::string& path : inspection.referenced) referenced_->insert(LastComponent(path));
  }
  // The object name comes from the file's UUID alone, so its last component identifies it
  // whatever directory the partition values give.
  const std::string object =
      LastComponent(ObjectPath(*table_, footer.partition_values, name.id.ToString()));
  answer.referenced = referenced_->count(object) > 0;
  return answer;
}

}  // namespace weir::wal
