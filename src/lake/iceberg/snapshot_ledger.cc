#include "lake/iceberg/snapshot_ledger.h"

#include <charconv>

#include "lake/iceberg/json_fields.h"

namespace weir::lake::iceberg {

void WriteLedger(const std::string& commit_id, const OffsetLedger& ledger,
                 std::map<std::string, std::string>& summary) {
  summary[kCommitIdKey] = commit_id;
  for (const auto& [topic, partitions] : ledger) {
    nlohmann::json offsets = nlohmann::json::object();
    for (const auto& [partition, next] : partitions) offsets[std::to_string(partition)] = next;
    summary[kOffsetsKeyPrefix + topic] = offsets.dump();
  }
}

Result<OffsetLedger> ReadLedger(const Snapshot& snapshot) {
  OffsetLedger ledger;
  const std::string prefix = kOffsetsKeyPrefix;
  for (auto it = snapshot.summary.lower_bound(prefix);
       it != snapshot.summary.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const std::string topic = it->first.substr(prefix.size());
    const std::string where = "snapshot " + std::to_string(snapshot.snapshot_id) + " " + it->first;
    WEIR_ASSIGN_OR_RAISE(const nlohmann::json offsets, ParseJson(it->second, where));
    if (!offsets.is_object()) return Status::Invalid(where, ": not a JSON object");
    auto& out = ledger[topic];
    for (auto o = offsets.begin(); o != offsets.end(); ++o) {
      int32_t partition = 0;
      const std::string& key = o.key();
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), partition);
      if (ec != std::errc() || end != key.data() + key.size() || partition < 0 ||
          !o->is_number_integer()) {
        return Status::Invalid(where, ": \"", key, "\": ", o->dump(), " is not partition → offset");
      }
      out[partition] = o->get<int64_t>();
    }
  }
  return ledger;
}

Result<std::optional<WeirCommit>> NewestWeirCommit(const TableMetadata& metadata,
                                                   const std::string& branch) {
  for (const Snapshot* snapshot : metadata.Ancestry(branch)) {
    const std::string* commit_id = snapshot->SummaryValue(kCommitIdKey);
    if (commit_id == nullptr) continue;
    WEIR_ASSIGN_OR_RAISE(OffsetLedger ledger, ReadLedger(*snapshot));
    return std::optional<WeirCommit>(WeirCommit{snapshot, *commit_id, std::move(ledger)});
  }
  return std::optional<WeirCommit>();
}

const Snapshot* FindCommit(const TableMetadata& metadata, const std::string& commit_id,
                           const std::string& branch) {
  for (const Snapshot* snapshot : metadata.Ancestry(branch)) {
    const std::string* id = snapshot->SummaryValue(kCommitIdKey);
    if (id != nullptr && *id == commit_id) return snapshot;
  }
  return nullptr;
}

}  // namespace weir::lake::iceberg
