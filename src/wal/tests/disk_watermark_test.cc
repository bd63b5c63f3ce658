#include "wal/disk_watermark.h"

#include <gtest/gtest.h>

#include "assert_status.h"

namespace weir::wal {
namespace {

TEST(DiskWatermarkTest, PausesAtTheHighWatermarkAndResumesFivePointsBelow) {
  int64_t used = 0;
  DiskWatermark watermark(80, [&used](const std::string&) -> Result<VolumeUsage> {
    return VolumeUsage{1000, used};
  });
  const std::vector<std::pair<int64_t, bool>> steps = {
      {500, false}, {799, false}, {800, true},  {900, true}, {760, true},
      {751, true},  {749, false}, {790, false}, {801, true}, {100, false}};
  for (const auto& [at, paused] : steps) {
    used = at;
    ASSERT_OK_AND_ASSIGN(const bool now, watermark.Measure("/wal"));
    EXPECT_EQ(now, paused) << "used " << at;
    EXPECT_DOUBLE_EQ(watermark.used_pct(), at / 10.0);
  }
}

TEST(DiskWatermarkTest, AVolumeThatCannotBeMeasuredIsAnErrorAndKeepsTheState) {
  bool fail = false;
  DiskWatermark watermark(80, [&fail](const std::string&) -> Result<VolumeUsage> {
    if (fail) return Status::IOError("gone");
    return VolumeUsage{100, 90};
  });
  ASSERT_OK_AND_ASSIGN(const bool paused, watermark.Measure("/wal"));
  EXPECT_TRUE(paused);
  fail = true;
  EXPECT_FALSE(watermark.Measure("/wal").ok());
  EXPECT_TRUE(watermark.paused());
}

TEST(DiskWatermarkTest, TheRealVolumeOfTmpIsMeasured) {
  ASSERT_OK_AND_ASSIGN(const VolumeUsage usage, MeasureVolume("/tmp"));
  EXPECT_GT(usage.total_bytes, 0);
  EXPECT_GE(usage.used_bytes, 0);
  EXPECT_LE(usage.used_bytes, usage.total_bytes);
  EXPECT_FALSE(MeasureVolume("/nonexistent-wal-volume").ok());
}

TEST(DiskWatermarkTest, TotalsCountFilesAndBytesByState) {
  SegmentEntry active{"/w/a", "a", SegmentName{SegmentState::kActive, "t", 0, 0, -1, {}}, 10};
  SegmentEntry ready{"/w/r", "r", SegmentName{SegmentState::kReady, "t", 0, 0, 5, {}}, 20};
  SegmentEntry other{"/w/x", "x", std::nullopt, 7};
  const auto totals = TotalsByState({active, ready, ready, other});
  EXPECT_EQ(totals.at("active").files, 1);
  EXPECT_EQ(totals.at("active").bytes, 10);
  EXPECT_EQ(totals.at("ready").files, 2);
  EXPECT_EQ(totals.at("ready").bytes, 40);
  EXPECT_EQ(totals.at("unknown").files, 1);
  EXPECT_EQ(TotalsByState({}).at("ready").files, 0);
}

}  // namespace
}  // namespace weir::wal
