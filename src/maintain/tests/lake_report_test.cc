#include "maintain/lake_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

namespace weir::maintain {
namespace {

namespace fs = std::filesystem;

class LakeReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "weir-lake-report-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    inspection_.fs = std::make_shared<arrow::fs::LocalFileSystem>();
    inspection_.root = dir_ + "/table/";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `bytes` bytes at root/`name`, modified `age_ms` ago.
  std::string Write(const std::string& name, size_t bytes, int64_t age_ms = 0) {
    const fs::path path = fs::path(dir_) / "table" / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << std::string(bytes, 'x');
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::milliseconds(age_ms));
    return path.string();
  }
  void Live(const std::string& path, int64_t bytes, int64_t rows,
            lake::LakeFileKind kind = lake::LakeFileKind::kData) {
    inspection_.live.push_back(lake::LakeFile{path, kind, bytes, rows, {}, false, {}, 0, {}, {}});
    inspection_.referenced.insert(path);
  }
  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::string dir_;
  lake::TableInspection inspection_;
};

TEST_F(LakeReportTest, CountsFilesRowsBytesAndBucketsBySize) {
  Live(Write("a.parquet", 100), 100, 10);
  Live(Write("p=1/b.parquet", 2000), 2000, 20);
  Live(Write("c-deletes.parquet", 50), 50, 3, lake::LakeFileKind::kDeletes);
  inspection_.snapshots = {{1, Now() - 60'000, true}, {2, Now() - 1'000, true}};
  inspection_.ledger_snapshot = 2;

  auto report = BuildReport(inspection_, {.now_ms = Now()});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->data_files, 2);
  EXPECT_EQ(report->delete_files, 1);
  EXPECT_EQ(report->rows, 30);
  EXPECT_EQ(report->bytes, 2150);
  EXPECT_EQ(report->size_histogram[0], 2);  // both data files are under 1 MiB
  EXPECT_EQ(report->snapshots, 2);
  ASSERT_TRUE(report->oldest_snapshot_age_ms);
  EXPECT_GE(*report->oldest_snapshot_age_ms, 60'000);
  EXPECT_LT(*report->oldest_snapshot_age_ms, 70'000);
  EXPECT_EQ(report->ledger_snapshot, 2);
  EXPECT_TRUE(report->listed);
  EXPECT_TRUE(report->orphans.empty());
  EXPECT_EQ(report->live_not_listed, 0);
}

TEST_F(LakeReportTest, BucketBoundsAreUpperExclusive) {
  for (int64_t bytes : {(int64_t{1} << 20) - 1, int64_t{1} << 20, int64_t{600} << 20}) {
    inspection_.live.push_back(
        lake::LakeFile{"x", lake::LakeFileKind::kData, bytes, 1, {}, false, {}, 0, {}, {}});
  }
  auto report = BuildReport(inspection_, {.now_ms = Now(), .list_objects = false});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->size_histogram[0], 1);
  EXPECT_EQ(report->size_histogram[1], 1);
  EXPECT_EQ(report->size_histogram[kSizeBuckets - 1], 1);
}

TEST_F(LakeReportTest, AnUnreferencedObjectIsAnOrphanAndADoubledSlashIsNot) {
  const std::string live = Write("a.parquet", 10);
  Live(dir_ + "/table//a.parquet", 10, 1);  // the catalog's spelling with a doubled '/'
  const std::string orphan = Write("crashed.parquet", 7, 3'600'000);
  auto report = BuildReport(inspection_, {.now_ms = Now()});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->orphans.size(), 1u);
  EXPECT_EQ(report->orphans[0].path, orphan);
  EXPECT_EQ(report->orphans[0].size_bytes, 7);
  EXPECT_EQ(report->live_not_listed, 0);
}

TEST_F(LakeReportTest, SweepDeletesOnlyOrphansOlderThanTheWindowAndNothingOnADryRun) {
  Live(Write("a.parquet", 10), 10, 1);
  const std::string old_orphan = Write("old.parquet", 7, 7'200'000);
  const std::string young_orphan = Write("young.parquet", 5, 60'000);
  auto report = BuildReport(inspection_, {.now_ms = Now()});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->orphans.size(), 2u);

  auto dry = SweepOrphans(inspection_, *report, Now(), 3'600'000, /*dry_run=*/true);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->deleted, 1);
  EXPECT_EQ(dry->deleted_bytes, 7);
  EXPECT_EQ(dry->kept_young, 1);
  EXPECT_TRUE(fs::exists(old_orphan));

  auto swept = SweepOrphans(inspection_, *report, Now(), 3'600'000, /*dry_run=*/false);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->deleted, 1);
  EXPECT_FALSE(fs::exists(old_orphan));
  EXPECT_TRUE(fs::exists(young_orphan));
  EXPECT_TRUE(fs::exists(dir_ + "/table/a.parquet"));
}

TEST_F(LakeReportTest, AWalSidecarIsReferencedWithItsDataFileAndAnOrphanWithout) {
  Live(Write("p=1/wal-0001.parquet", 10), 10, 1);
  const std::string kept = Write("p=1/wal-0001.bloom", 4, 7'200'000);
  const std::string lone = Write("p=1/wal-0002.bloom", 3, 7'200'000);
  const std::string young = Write("p=1/wal-0003.bloom", 2, 60'000);
  const std::string other = Write("p=1/data-0001.bloom", 1, 7'200'000);  // not a sidecar name
  auto report = BuildReport(inspection_, {.now_ms = Now()});
  ASSERT_TRUE(report.ok()) << report.status();
  std::vector<std::string> orphans;
  for (const Orphan& o : report->orphans) orphans.push_back(o.path);
  std::sort(orphans.begin(), orphans.end());
  EXPECT_EQ(orphans, (std::vector<std::string>{other, lone, young}));
  auto swept = SweepOrphans(inspection_, *report, Now(), 3'600'000, /*dry_run=*/false);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->deleted, 2);
  EXPECT_EQ(swept->kept_young, 1);
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_FALSE(fs::exists(lone));
  EXPECT_TRUE(fs::exists(young));
}

TEST_F(LakeReportTest, SweepRefusesWhenALiveFileIsNotWhereTheCatalogSays) {
  Live(dir_ + "/elsewhere/a.parquet", 10, 1);
  const std::string orphan = Write("old.parquet", 7, 7'200'000);
  auto report = BuildReport(inspection_, {.now_ms = Now()});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->live_not_listed, 1);
  auto swept = SweepOrphans(inspection_, *report, Now(), 0, /*dry_run=*/false);
  ASSERT_FALSE(swept.ok());
  EXPECT_NE(swept.status().message().find("disagree"), std::string::npos) << swept.status();
  EXPECT_TRUE(fs::exists(orphan));
}

TEST_F(LakeReportTest, NoOwnDirectoryMeansNoOrphanScanAndSweepRefuses) {
  inspection_.root.clear();
  auto report = BuildReport(inspection_, {.now_ms = Now()});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->listed);
  EXPECT_EQ(report->orphan_scan, "the table has no directory of its own");
  EXPECT_FALSE(SweepOrphans(inspection_, *report, Now(), 0, false).ok());
}

TEST_F(LakeReportTest, FsckFindsAMissingAndATruncatedFile) {
  Live(Write("good.parquet", 10), 10, 1);
  Live(Write("short.parquet", 4), 10, 1);
  Live(dir_ + "/table/gone.parquet", 12, 1);
  auto report = BuildReport(inspection_, {.now_ms = Now(), .check_files = true});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->fsck.size(), 2u);
  std::map<std::string, FsckFinding> by_path;
  for (const auto& f : report->fsck) by_path[f.path] = f;
  const auto& gone = by_path.at(dir_ + "/table/gone.parquet");
  EXPECT_EQ(gone.problem, FileProblem::kMissing);
  EXPECT_EQ(gone.catalog_bytes, 12);
  const auto& short_file = by_path.at(dir_ + "/table/short.parquet");
  EXPECT_EQ(short_file.problem, FileProblem::kSizeDiffers);
  EXPECT_EQ(short_file.catalog_bytes, 10);
  EXPECT_EQ(short_file.actual_bytes, 4);

  const auto json = ReportsToJson({*report}, /*with_fsck=*/true);
  EXPECT_EQ(json["tables"][0]["fsck"].size(), 2u);
  EXPECT_EQ(json["tables"][0]["data_files"], 3);
}

TEST_F(LakeReportTest, ExpiryKeepsTheYoungTheNewestNAndTheProtected) {
  const int64_t now = 10'000'000;
  // Snapshots 1..6, 1000 s apart, the last committed 1000 s ago (listed out of order).
  for (int64_t id : {3, 1, 2, 6, 5, 4}) {
    inspection_.snapshots.push_back({id, now - (7 - id) * 1'000'000, true});
  }
  inspection_.protected_snapshots = {2, 6};
  EXPECT_EQ(SnapshotsToExpire(inspection_, {.older_than_ms = 0, .retain_last = 1}, now),
            (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_EQ(SnapshotsToExpire(inspection_, {.older_than_ms = 0, .retain_last = 3}, now),
            (std::vector<int64_t>{1, 3}));
  // Older than 3500 s: snapshots 1-3 (6000, 5000, 4000 s old); 2 is protected.
  EXPECT_EQ(SnapshotsToExpire(inspection_, {.older_than_ms = 3'500'000, .retain_last = 1}, now),
            (std::vector<int64_t>{1, 3}));
  // retain_last below 1 still keeps the newest.
  inspection_.protected_snapshots.clear();
  EXPECT_EQ(SnapshotsToExpire(inspection_, {.older_than_ms = 0, .retain_last = 0}, now),
            (std::vector<int64_t>{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace weir::maintain
