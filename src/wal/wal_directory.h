// What a WAL directory holds: its segment files by name, with their sizes. Files whose names
// are not segment names (see segment_name.h) are listed as unknown and never touched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "wal/segment_name.h"

namespace weir::wal {

struct SegmentEntry {
  std::string path;
  std::string file_name;
  std::optional<SegmentName> name;  // nullopt: not a segment
  int64_t size_bytes = 0;
};

// The regular files of `directory`, segments ordered by topic, partition, start, then id;
// unknown files last, by name. A missing directory is an empty WAL.
Result<std::vector<SegmentEntry>> ListSegments(const std::string& directory);

}  // namespace weir::wal
