// The names of WAL segment files, which carry everything recovery needs to know about a file
// without opening it (the ingestor design, ../../docs/ARCHITECTURE.md "WAL mode"):
//
//   active_{topic}_{partition}_{start}_{uuid}.parquet       being written
//   ready_{topic}_{partition}_{start}-{end}_{uuid}.parquet  closed, synced, renamed
//
// `start` is the offset range's start as the ledger sees it (the first offset this segment's
// rotation group accounts for, which may precede the first record's offset when offsets have
// gaps); `end` is the last offset the group accounts for (inclusive), so the Kafka offset
// committed at rotation is end + 1. Topics may contain '_' and '.': names are parsed from the
// right, where every field has a fixed alphabet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/uuid.h"

namespace weir::wal {

enum class SegmentState { kActive, kReady };

std::string_view ToString(SegmentState state);

struct SegmentName {
  SegmentState state = SegmentState::kActive;
  std::string topic;
  int32_t partition = 0;
  int64_t start = 0;
  int64_t end = -1;  // kReady only: the last offset covered (inclusive)
  Uuid id;

  // The file name (no directory).
  std::string FileName() const;
  // The same segment once rotated to cover [start, end].
  SegmentName Ready(int64_t last_offset) const;

  friend bool operator==(const SegmentName&, const SegmentName&) = default;
};

// Parses a segment file name; nullopt for any other name (a temporary file, a stray file):
// recovery leaves those alone and `weir wal ls` lists them as unknown.
std::optional<SegmentName> ParseSegmentName(std::string_view file_name);

}  // namespace weir::wal
