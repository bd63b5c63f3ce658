#include "wal/disk_watermark.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace weir::wal {

Result<VolumeUsage> MeasureVolume(const std::string& directory) {
  struct statvfs stats {};
  if (::statvfs(directory.c_str(), &stats) != 0) {
    return Status::IOError("statvfs ", directory, ": ", std::strerror(errno));
  }
  VolumeUsage usage;
  const auto block = static_cast<int64_t>(stats.f_frsize);
  usage.total_bytes = static_cast<int64_t>(stats.f_blocks) * block;
  usage.used_bytes = usage.total_bytes - static_cast<int64_t>(stats.f_bavail) * block;
  return usage;
}

Result<bool> DiskWatermark::Measure(const std::string& directory) {
  WEIR_ASSIGN_OR_RAISE(const VolumeUsage usage, probe_(directory));
  if (usage.total_bytes <= 0) return Status::IOError("volume of ", directory, " has no size");
  used_pct_ =
      100.0 * static_cast<double>(usage.used_bytes) / static_cast<double>(usage.total_bytes);
  if (!paused_ && used_pct_ >= high_pct_) paused_ = true;
  if (paused_ && used_pct_ < high_pct_ - kResumeGapPct) paused_ = false;
  return paused_;
}

std::map<std::string, StateTotals> TotalsByState(const std::vector<SegmentEntry>& entries) {
  std::map<std::string, StateTotals> totals{{"active", {}}, {"ready", {}}};
  for (const SegmentEntry& entry : entries) {
    StateTotals& total =
        totals[entry.name ? std::string(ToString(entry.name->state)) : std::string("unknown")];
    ++total.files;
    total.bytes += entry.size_bytes;
  }
  return totals;
}

}  // namespace weir::wal
