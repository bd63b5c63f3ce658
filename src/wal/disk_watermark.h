// WAL mode's disk backpressure (the ingestor design): the WAL volume is measured (every 5 s,
// by the caller); at `high_pct` used every consumer pauses, and they resume once usage falls
// 5 points below it, so records wait in Kafka rather than fill the volume. Also what the
// gauges say: WAL files and bytes by state.
//
// Threading: one thread (the poll thread's timer); not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "wal/wal_directory.h"

namespace weir::wal {

struct VolumeUsage {
  int64_t total_bytes = 0;
  int64_t used_bytes = 0;  // as an unprivileged writer sees it: total less what it may use
};

// statvfs(3) of the volume holding `directory`.
Result<VolumeUsage> MeasureVolume(const std::string& directory);

using VolumeProbe = std::function<Result<VolumeUsage>(const std::string& directory)>;

class DiskWatermark {
 public:
  static constexpr int kResumeGapPct = 5;

  explicit DiskWatermark(int high_pct, VolumeProbe probe = MeasureVolume)
      : high_pct_(high_pct), probe_(std::move(probe)) {}

  // Measures `directory`'s volume; true while consumers must stay paused. An error (the
  // volume cannot be measured) keeps the previous answer.
  Result<bool> Measure(const std::string& directory);

  bool paused() const { return paused_; }
  double used_pct() const { return used_pct_; }

 private:
  int high_pct_;
  VolumeProbe probe_;
  bool paused_ = false;
  double used_pct_ = 0;
};

struct StateTotals {
  int64_t files = 0, bytes = 0;
};

// Files and bytes of `entries` by state ("active", "ready", "unknown"), for the gauges.
std::map<std::string, StateTotals> TotalsByState(const std::vector<SegmentEntry>& entries);

}  // namespace weir::wal
