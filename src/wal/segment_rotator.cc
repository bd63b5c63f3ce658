#include "wal/segment_rotator.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <arrow/api.h>

namespace weir::wal {

SegmentRotator::SegmentRotator(std::string directory, SegmentLimits limits,
                               SegmentFileOptions options, SegmentFileFactory factory,
                               const Clock& clock, uint64_t seed)
    : directory_(std::move(directory)),
      limits_(limits),
      options_(std::move(options)),
      factory_(factory ? std::move(factory) : SegmentFileFactory(CreateParquetSegment)),
      clock_(clock),
      ids_(clock, seed) {}

SegmentRotator::~SegmentRotator() {
  for (auto& [key, group] : groups_) {
    for (auto& [partition_key, segment] : group.segments) (void)segment.file->Discard();
  }
}

Status SegmentRotator::Assign(const std::string& topic, int32_t partition, int64_t start) {
  const Key key{topic, partition};
  if (groups_.count(key)) {
    return Status::Invalid("WAL: partition ", topic, "/", partition, " is already held");
  }
  Group group;
  group.start = start;
  group.end = start - 1;
  groups_.emplace(key, std::move(group));
  return Status::OK();
}

bool SegmentRotator::Holds(const std::string& topic, int32_t partition) const {
  return groups_.count(Key{topic, partition}) > 0;
}

Result<SegmentRotator::Group*> SegmentRotator::Find(const std::string& topic, int32_t partition) {
  const auto found = groups_.find(Key{topic, partition});
  if (found == groups_.end()) {
    return Status::Invalid("WAL: partition ", topic, "/", partition, " is not held");
  }
  return &found->second;
}

void SegmentRotator::Touch(Group& group) {
  if (group.end < group.start) group.opened = clock_.Monotonic();
}

Status SegmentRotator::Advance(const std::string& topic, int32_t partition, int64_t last_offset) {
  WEIR_ASSIGN_OR_RAISE(Group * group, Find(topic, partition));
  if (last_offset <= group->end) return Status::OK();  // nothing new
  Touch(*group);
  group->end = last_offset;
  return Status::OK();
}

Result<std::vector<Rotation>> SegmentRotator::Append(const std::string& topic, int32_t partition,
                                                     const std::vector<PartitionRows>& rows,
                                                     int64_t last_offset) {
  const Key key{topic, partition};
  WEIR_ASSIGN_OR_RAISE(Group * group, Find(topic, partition));
  if (last_offset <= group->end) {
    return Status::Invalid("WAL: offset ", last_offset, " of ", topic, "/", partition,
                           " is not after ", group->end);
  }
  std::vector<Rotation> done;
  // Before: the segments this batch needs must fit, and each must have the batch's schema.
  int64_t opening = 0;
  bool schema_changed = false;
  for (const PartitionRows& part : rows) {
    const auto found = group->segments.find(part.key);
    if (found == group->segments.end()) {
      ++opening;
    } else if (!found->second.schema->Equals(*part.rows->schema(), /*check_metadata=*/false)) {
      schema_changed = true;
    }
  }
  const bool over_limit =
      static_cast<int64_t>(group->segments.size()) + opening > limits_.max_open_segments;
  if ((over_limit || schema_changed) && group->end >= group->start) {
    WEIR_ASSIGN_OR_RAISE(auto rotated, RotateGroup(key, *group));
    if (rotated) done.push_back(std::move(*rotated));
  }
  Touch(*group);
  bool full = false;
  for (const PartitionRows& part : rows) {
    if (part.rows->num_rows() == 0) continue;
    auto found = group->segments.find(part.key);
    if (found == group->segments.end()) {
      Segment segment;
      segment.name.state = SegmentState::kActive;
      segment.name.topic = topic;
      segment.name.partition = partition;
      segment.name.start = group->start;
      segment.name.id = ids_.Next();
      segment.schema = part.rows->schema();
      SegmentFileOptions options = options_;
      for (const auto& [k, v] : part.metadata) options.metadata[k] = v;
      const std::string path = directory_ + "/" + segment.name.FileName();
      WEIR_ASSIGN_OR_RAISE(segment.file, factory_(path, segment.schema, options));
      found = group->segments.emplace(part.key, std::move(segment)).first;
    }
    WEIR_RETURN_NOT_OK(found->second.file->Append(*part.rows));
    if (found->second.file->EstimatedSize() >= limits_.max_file_bytes) full = true;
  }
  group->end = last_offset;
  if (full) {
    WEIR_ASSIGN_OR_RAISE(auto rotated, RotateGroup(key, *group));
    if (rotated) done.push_back(std::move(*rotated));
  }
  return done;
}

Result<std::optional<Rotation>> SegmentRotator::RotateGroup(const Key& key, Group& group) {
  if (group.end < group.start) return std::nullopt;
  Rotation rotation;
  rotation.topic = key.first;
  rotation.partition = key.second;
  rotation.start = group.start;
  rotation.end = group.end;
  if (group.segments.empty()) {
    // Offsets without rows: one zero-row file records the range.
    Segment segment;
    segment.name.topic = key.first;
    segment.name.partition = key.second;
    segment.name.start = group.start;
    segment.name.id = ids_.Next();
    segment.schema = arrow::schema({});
    const std::string path = directory_ + "/" + segment.name.FileName();
    WEIR_ASSIGN_OR_RAISE(segment.file, factory_(path, segment.schema, options_));
    group.segments.emplace("", std::move(segment));
  }
  for (auto& [partition_key, segment] : group.segments) {
    WEIR_RETURN_NOT_OK(segment.file->Close());
  }
  for (auto& [partition_key, segment] : group.segments) {
    const SegmentName ready = segment.name.Ready(group.end);
    const std::string to = directory_ + "/" + ready.FileName();
    if (std::rename(segment.file->path().c_str(), to.c_str()) != 0) {
      return ClassifiedError(
          ErrorClass::kFatal, "errno", std::to_string(errno),
          "rename " + segment.file->path() + " to " + to + ": " + std::strerror(errno));
    }
    rotation.files.push_back(ReadyFile{to, ready, partition_key, segment.file->rows()});
  }
  // One directory sync makes every rename of the group durable before the offset commit.
  WEIR_RETURN_NOT_OK(SyncPath(directory_));
  group.segments.clear();
  group.start = group.end + 1;
  return rotation;
}

Result<std::optional<Rotation>> SegmentRotator::Rotate(const std::string& topic,
                                                       int32_t partition) {
  WEIR_ASSIGN_OR_RAISE(Group * group, Find(topic, partition));
  return RotateGroup(Key{topic, partition}, *group);
}

Result<std::optional<Rotation>> SegmentRotator::Release(const std::string& topic,
                                                        int32_t partition) {
  WEIR_ASSIGN_OR_RAISE(auto rotation, Rotate(topic, partition));
  groups_.erase(Key{topic, partition});
  return rotation;
}

Result<std::vector<Rotation>> SegmentRotator::RotateAll() {
  std::vector<Rotation> done;
  for (auto& [key, group] : groups_) {
    WEIR_ASSIGN_OR_RAISE(auto rotated, RotateGroup(key, group));
    if (rotated) done.push_back(std::move(*rotated));
  }
  return done;
}

Result<std::vector<Rotation>> SegmentRotator::RotateAged() {
  std::vector<Rotation> done;
  const auto now = clock_.Monotonic();
  for (auto& [key, group] : groups_) {
    if (group.end < group.start || now - group.opened < limits_.max_age) continue;
    WEIR_ASSIGN_OR_RAISE(auto rotated, RotateGroup(key, group));
    if (rotated) done.push_back(std::move(*rotated));
  }
  return done;
}

Status SegmentRotator::Drop(const std::string& topic, int32_t partition) {
  const auto found = groups_.find(Key{topic, partition});
  if (found == groups_.end()) return Status::OK();
  Status first;
  for (auto& [partition_key, segment] : found->second.segments) {
    const Status discarded = segment.file->Discard();
    if (first.ok()) first = discarded;
  }
  groups_.erase(found);
  return first;
}

int64_t SegmentRotator::open_segments() const {
  int64_t count = 0;
  for (const auto& [key, group] : groups_) count += static_cast<int64_t>(group.segments.size());
  return count;
}

int64_t SegmentRotator::open_bytes() const {
  int64_t bytes = 0;
  for (const auto& [key, group] : groups_) {
    for (const auto& [partition_key, segment] : group.segments) {
      bytes += segment.file->EstimatedSize();
    }
  }
  return bytes;
}

}  // namespace weir::wal
