#include "wal/commit_plan.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace weir::wal {

Result<std::vector<ReadyGroup>> GroupReadyFiles(const std::vector<SegmentEntry>& entries) {
  using Key = std::tuple<std::string, int32_t, int64_t, int64_t>;
  std::map<Key, ReadyGroup> by_key;
  for (const SegmentEntry& entry : entries) {
    if (!entry.name || entry.name->state != SegmentState::kReady) continue;
    const SegmentName& n = *entry.name;
    ReadyGroup& group = by_key[Key{n.topic, n.partition, n.start, n.end}];
    group.topic = n.topic;
    group.partition = n.partition;
    group.start = n.start;
    group.end = n.end;
    group.files.push_back(entry);
  }
  std::vector<ReadyGroup> groups;
  for (auto& [key, group] : by_key) {
    std::sort(
        group.files.begin(), group.files.end(),
        [](const SegmentEntry& a, const SegmentEntry& b) { return a.file_name < b.file_name; });
    if (!groups.empty()) {
      const ReadyGroup& before = groups.back();
      if (before.topic == group.topic && before.partition == group.partition &&
          group.start <= before.end) {
        return ClassifiedError(
            ErrorClass::kFatal, "wal", "overlapping_ranges",
            "WAL files of " + group.topic + "[" + std::to_string(group.partition) +
                "] overlap: " + before.files.front().path + " and " + group.files.front().path);
      }
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

CommitPlan PlanCommit(const std::vector<ReadyGroup>& groups, const PartitionOffsets& ledger,
                      const PartitionOffsets& origin) {
  CommitPlan plan;
  // Groups come ordered by partition, then start: each partition's run is walked once.
  std::optional<std::pair<std::string, int32_t>> current;
  std::optional<int64_t> l;     // the partition's ledger
  std::optional<int64_t> next;  // where its chain continues; nullopt: no chain (any more)
  for (const ReadyGroup& group : groups) {
    const std::pair<std::string, int32_t> key{group.topic, group.partition};
    if (current != key) {
      current = key;
      const auto at = ledger.find(key);
      l = at == ledger.end() ? std::nullopt : std::optional<int64_t>(at->second);
      const auto from = origin.find(key);
      next = l ? l : from == origin.end() ? std::nullopt : std::optional<int64_t>(from->second);
    }
    if (l && group.end < *l) {
      plan.landed.push_back(group);
    } else if (l && group.start < *l) {
      plan.conflicting.push_back(group);
      next.reset();  // nothing after it commits either
    } else if (next && group.start == *next) {
      plan.commit.push_back(group);
      lake::OffsetRange* range = plan.ranges.empty() ? nullptr : &plan.ranges.back();
      if (range != nullptr && range->topic == key.first && range->partition == key.second) {
        range->end = group.end + 1;
      } else {
        plan.ranges.push_back(lake::OffsetRange{key.first, key.second, group.start, group.end + 1});
      }
      next = group.end + 1;
    } else {
      plan.waiting.push_back(group);
      next.reset();  // a gap: what follows it waits too
    }
  }
  return plan;
}

}  // namespace weir::wal
