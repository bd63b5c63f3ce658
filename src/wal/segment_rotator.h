// The open WAL segments of one dataset: per Kafka partition, one active_* file per table
// partition, rotated together (one committed Kafka offset covers all of a partition's files).
//
// A Kafka partition's segments form a *rotation group* accounting for the offsets
// [start, end]: `start` is where the group began (the assignment's offset, then the previous
// group's end + 1), `end` the last offset appended or advanced over. Rotation closes and
// fsyncs every file of the group, renames each to ready_{topic}_{partition}_{start}-{end}_
// {uuid}.parquet, fsyncs the directory, and hands back a Rotation whose commit_offset()
// (end + 1) the caller commits to Kafka. A group that accounted for offsets but holds no row
// (every record rejected or filtered) still rotates to one zero-row ready file, so the range is
// on disk and the committer can move the ledger over it.
//
// Triggers: a file reaching max_file_bytes (after the append), a group older than max_age
// (RotateAged, which the caller runs every 30 s), a group at max_open_segments that needs a
// new one (before the append), a new schema for a table partition that has a file (a segment
// has one schema: before the append), revocation and shutdown (Rotate, RotateAll). A batch
// is never split across groups, so one batch with more table partitions than the limit opens
// them all.
//
// Threading: one thread (the poll thread); not thread-safe. Any error from a file operation
// is returned as is: the caller treats it as fatal (the process exits; recovery at the next
// start deletes the active files, whose offsets were never committed).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/record_batch.h>

#include "base/clock.h"
#include "base/status.h"
#include "base/uuid.h"
#include "wal/segment_file.h"
#include "wal/segment_name.h"

namespace weir::wal {

struct SegmentLimits {
  int64_t max_file_bytes = 64LL << 20;
  std::chrono::milliseconds max_age{5 * 60 * 1000};
  int max_open_segments = 256;
};

// Rows of one table partition: `key` identifies the partition tuple (the rotator only compares
// it), `metadata` goes into a new file's footer (the partition values, for the committer).
struct PartitionRows {
  std::string key;
  std::map<std::string, std::string> metadata;
  std::shared_ptr<arrow::RecordBatch> rows;
};

struct ReadyFile {
  std::string path;
  SegmentName name;
  std::string partition_key;
  int64_t rows = 0;
};

struct Rotation {
  std::string topic;
  int32_t partition = 0;
  int64_t start = 0, end = 0;  // offsets accounted for, inclusive
  std::vector<ReadyFile> files;
  int64_t commit_offset() const { return end + 1; }
};

class SegmentRotator {
 public:
  SegmentRotator(std::string directory, SegmentLimits limits, SegmentFileOptions options,
                 SegmentFileFactory factory, const Clock& clock, uint64_t seed);
  ~SegmentRotator();  // open files are discarded (their offsets were never committed)

  // Starts accounting for a partition at `start` (an assignment). A partition already held
  // is an error.
  Status Assign(const std::string& topic, int32_t partition, int64_t start);
  bool Holds(const std::string& topic, int32_t partition) const;

  // Appends the rows of records up to `last_offset` (inclusive, > every offset accounted for
  // so far), rotating before or after as the limits say. Returns the rotations done.
  Result<std::vector<Rotation>> Append(const std::string& topic, int32_t partition,
                                       const std::vector<PartitionRows>& rows, int64_t last_offset);
  // Accounts for offsets up to `last_offset` that carried no row.
  Status Advance(const std::string& topic, int32_t partition, int64_t last_offset);

  // Rotates the partition's group (nothing when it accounts for no offset) and keeps the
  // partition, its next group starting at end + 1.
  Result<std::optional<Rotation>> Rotate(const std::string& topic, int32_t partition);
  // Rotates the partition and stops accounting for it (revocation).
  Result<std::optional<Rotation>> Release(const std::string& topic, int32_t partition);
  // Rotates every partition (shutdown), in partition order.
  Result<std::vector<Rotation>> RotateAll();
  // Rotates the groups that have been open for max_age or longer.
  Result<std::vector<Rotation>> RotateAged();
  // Deletes the partition's active files and forgets it (a lost assignment).
  Status Drop(const std::string& topic, int32_t partition);

  int64_t open_segments() const;
  int64_t open_bytes() const;

 private:
  struct Segment {
    SegmentName name;
    std::shared_ptr<arrow::Schema> schema;
    std::unique_ptr<SegmentFile> file;
  };
  struct Group {
    int64_t start = 0;
    int64_t end = -1;  // < start: nothing accounted for yet
    std::chrono::steady_clock::time_point opened{};
    std::map<std::string, Segment> segments;  // by partition key
  };
  using Key = std::pair<std::string, int32_t>;

  Result<Group*> Find(const std::string& topic, int32_t partition);
  Result<std::optional<Rotation>> RotateGroup(const Key& key, Group& group);
  void Touch(Group& group);

  std::string directory_;
  SegmentLimits limits_;
  SegmentFileOptions options_;
  SegmentFileFactory factory_;
  const Clock& clock_;
  UuidV7Generator ids_;
  std::map<Key, Group> groups_;
};

}  // namespace weir::wal
