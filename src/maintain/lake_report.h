// What `weir maintain` tells about a table, computed from its inspection (lake/inspection.h)
// and a listing of the objects under its directory: files and bytes, a file-size histogram,
// snapshots and the oldest one's age, orphans (objects no kept snapshot references), and the
// catalog entries whose object is missing or has another size (fsck). And the one destructive
// action built on it so far: deleting orphans older than a safety window.
//
// Format-neutral: both lake formats answer Table::Inspect, so this is written once.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "lake/inspection.h"

namespace weir::maintain {

// File-size histogram buckets: a file of n bytes counts in the first bucket whose upper bound
// exceeds n (the last has none).
inline constexpr std::array<int64_t, 5> kSizeBucketUpperBounds = {
    int64_t{1} << 20, int64_t{8} << 20, int64_t{32} << 20, int64_t{128} << 20, int64_t{512} << 20};
inline constexpr size_t kSizeBuckets = kSizeBucketUpperBounds.size() + 1;

struct Orphan {
  std::string path;
  int64_t size_bytes = 0;
  int64_t modified_ms = 0;  // ms since the epoch; the safety window is measured from it
};

enum class FileProblem { kMissing, kSizeDiffers };

struct FsckFinding {
  std::string path;
  FileProblem problem = FileProblem::kMissing;
  int64_t catalog_bytes = 0;
  int64_t actual_bytes = 0;  // kSizeDiffers
  std::string lake_path;     // the inspection's spelling, which the table's repair takes
  lake::LakeFileKind kind = lake::LakeFileKind::kData;
  int64_t rows = 0;  // the catalog's record count (deleted rows for a delete file)
};

struct TableReport {
  std::string dataset;
  std::string table;  // schema.table
  int64_t data_files = 0;
  int64_t delete_files = 0;
  int64_t rows = 0;   // in the data files (deleted rows not subtracted)
  int64_t bytes = 0;  // of every live file
  std::array<int64_t, kSizeBuckets> size_histogram{};  // live data files per bucket
  int64_t snapshots = 0;
  std::optional<int64_t> oldest_snapshot_age_ms;
  std::optional<int64_t> ledger_snapshot;
  // Orphans are only looked for when the table has a directory of its own; otherwise
  // `orphan_scan` says why not.
  std::string orphan_scan;
  std::vector<Orphan> orphans;
  bool listed = false;            // the directory was listed
  int64_t live_not_listed = 0;    // live files the listing did not show
  std::vector<FsckFinding> fsck;  // filled when asked for
};

struct ReportOptions {
  int64_t now_ms = 0;
  bool list_objects = true;  // look for orphans (one listing of the table's directory)
  bool check_files = false;  // fsck: look up every live file's object
};

Result<TableReport> BuildReport(const lake::TableInspection& inspection,
                                const ReportOptions& options);

// A human-readable table of the reports, one row per table, then the findings.
std::string FormatReports(const std::vector<TableReport>& reports, bool with_fsck);
nlohmann::json ReportsToJson(const std::vector<TableReport>& reports, bool with_fsck);

struct SweepResult {
  int64_t deleted = 0;
  int64_t deleted_bytes = 0;
  int64_t kept_young = 0;  // orphans inside the safety window
};

// Deletes the report's orphans last modified more than `window_ms` before `now_ms` (none when
// `dry_run`: only counted). Refuses, deleting nothing, when the listing did not see every live
// file of the table: then the catalog's paths and the store's disagree, and a sweep could hit
// live data.
Result<SweepResult> SweepOrphans(const lake::TableInspection& inspection, const TableReport& report,
                                 int64_t now_ms, int64_t window_ms, bool dry_run);

// Which snapshots an expiry removes: those committed more than `older_than_ms` before `now_ms`,
// except the newest `retain_last` and every protected one (lake/inspection.h), oldest first.
struct ExpiryPolicy {
  int64_t older_than_ms = 0;
  int64_t retain_last = 1;
};
std::vector<int64_t> SnapshotsToExpire(const lake::TableInspection& inspection,
                                       const ExpiryPolicy& policy, int64_t now_ms);

}  // namespace weir::maintain
