#include "maintain/lake_report.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include <arrow/filesystem/filesystem.h>
#include <fmt/format.h>

#include "base/number_text.h"
#include "wal/bloom_sidecar.h"

namespace weir::maintain {
namespace {

// One spelling per object: a doubled '/' (a catalog path joined onto a prefix that already ended
// in one) must not make a live file look like an orphan.
std::string Normal(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  return out;
}

struct Listed {
  int64_t size = 0;
  int64_t modified_ms = 0;
};

Result<std::map<std::string, Listed>> ListObjects(arrow::fs::FileSystem& fs,
                                                  const std::string& root) {
  arrow::fs::FileSelector selector;
  selector.base_dir = root;
  while (selector.base_dir.size() > 1 && selector.base_dir.back() == '/') {
    selector.base_dir.pop_back();
  }
  selector.recursive = true;
  selector.allow_not_found = true;
  WEIR_ASSIGN_OR_RAISE(auto infos, fs.GetFileInfo(selector));
  std::map<std::string, Listed> out;
  for (const auto& info : infos) {
    if (info.type() != arrow::fs::FileType::File) continue;
    const auto since_epoch = info.mtime().time_since_epoch();
    out[Normal(info.path())] = Listed{
        info.size(), std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count()};
  }
  return out;
}

size_t BucketOf(int64_t bytes) {
  for (size_t i = 0; i < kSizeBucketUpperBounds.size(); ++i) {
    if (bytes < kSizeBucketUpperBounds[i]) return i;
  }
  return kSizeBucketUpperBounds.size();
}

std::string BucketLabel(size_t i) {
  const auto mib = [](int64_t bytes) { return fmt::format("{}MiB", bytes >> 20); };
  if (i == 0) return "<" + mib(kSizeBucketUpperBounds[0]);
  if (i == kSizeBucketUpperBounds.size()) return ">=" + mib(kSizeBucketUpperBounds.back());
  return mib(kSizeBucketUpperBounds[i - 1]) + "-" + mib(kSizeBucketUpperBounds[i]);
}

std::string HumanAge(std::optional<int64_t> ms) {
  if (!ms) return "-";
  const int64_t s = *ms / 1000;
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 172800) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

}  // namespace

Result<TableReport> BuildReport(const lake::TableInspection& inspection,
                                const ReportOptions& options) {
  TableReport report;
  for (const lake::LakeFile& file : inspection.live) {
    report.bytes += file.size_bytes;
    if (file.kind == lake::LakeFileKind::kDeletes) {
      ++report.delete_files;
      continue;
    }
    ++report.data_files;
    report.rows += file.record_count;
    ++report.size_histogram[BucketOf(file.size_bytes)];
  }
  report.snapshots = static_cast<int64_t>(inspection.snapshots.size());
  for (const lake::LakeSnapshot& snapshot : inspection.snapshots) {
    const int64_t age = std::max<int64_t>(0, options.now_ms - snapshot.timestamp_ms);
    report.oldest_snapshot_age_ms = std::max(report.oldest_snapshot_age_ms.value_or(0), age);
  }
  report.ledger_snapshot = inspection.ledger_snapshot;

  std::map<std::string, Listed> listed;
  if (options.list_objects) {
    if (inspection.root.empty()) {
      report.orphan_scan = "the table has no directory of its own";
    } else {
      WEIR_ASSIGN_OR_RAISE(listed, ListObjects(*inspection.fs, inspection.root));
      report.listed = true;
      std::set<std::string> referenced;
      for (const std::string& path : inspection.referenced) referenced.insert(Normal(path));
      for (const auto& [path, object] : listed) {
        if (referenced.contains(path)) continue;
        // A WAL file's bloom sidecar (wal/bloom_sidecar.h) lives and dies with its data file.
        const auto data = wal::BloomSidecarDataPath(path);
        if (data && referenced.contains(*data)) continue;
        report.orphans.push_back(Orphan{path, object.size, object.modified_ms});
      }
      for (const lake::LakeFile& file : inspection.live) {
        if (!listed.contains(Normal(file.path))) ++report.live_not_listed;
      }
    }
  }
  if (options.check_files) {
    for (const lake::LakeFile& file : inspection.live) {
      const std::string path = Normal(file.path);
      std::optional<int64_t> actual;
      if (auto found = listed.find(path); found != listed.end()) {
        actual = found->second.size;
      } else {
        WEIR_ASSIGN_OR_RAISE(auto info, inspection.fs->GetFileInfo(file.path));
        if (info.type() == arrow::fs::FileType::File) actual = info.size();
      }
      if (!actual) {
        report.fsck.push_back(FsckFinding{path, FileProblem::kMissing, file.size_bytes, 0,
                                          file.path, file.kind, file.record_count});
      } else if (*actual != file.size_bytes) {
        report.fsck.push_back(FsckFinding{path, FileProblem::kSizeDiffers, file.size_bytes, *actual,
                                          file.path, file.kind, file.record_count});
      }
    }
  }
  return report;
}

std::string FormatReports(const std::vector<TableReport>& reports, bool with_fsck) {
  std::string out =
      fmt::format("{:<28} {:>7} {:>7} {:>12} {:>10} {:>9} {:>10} {:>8}  {}\n", "table", "files",
                  "deletes", "rows", "bytes", "snapshots", "oldest", "orphans", "file sizes");
  for (const TableReport& r : reports) {
    std::string sizes;
    for (size_t i = 0; i < kSizeBuckets; ++i) {
      if (r.size_histogram[i] == 0) continue;
      sizes +=
          fmt::format("{}{}:{}", sizes.empty() ? "" : " ", BucketLabel(i), r.size_histogram[i]);
    }
    out +=
        fmt::format("{:<28} {:>7} {:>7} {:>12} {:>10} {:>9} {:>10} {:>8}  {}\n", r.table,
                    r.data_files, r.delete_files, r.rows, BytesText(static_cast<double>(r.bytes)),
                    r.snapshots, HumanAge(r.oldest_snapshot_age_ms),
                    r.listed ? std::to_string(r.orphans.size()) : "-", sizes);
  }
  for (const TableReport& r : reports) {
    if (!r.orphan_scan.empty())
      out += fmt::format("{}: orphans not looked for: {}\n", r.table, r.orphan_scan);
    if (!with_fsck) continue;
    for (const FsckFinding& f : r.fsck) {
      out += f.problem == FileProblem::kMissing
                 ? fmt::format("{}: MISSING {} (the catalog records {} bytes)\n", r.table, f.path,
                               f.catalog_bytes)
                 : fmt::format(
                       "{}: SIZE DIFFERS {}: the catalog records {} bytes, the object "
                       "has {}\n",
                       r.table, f.path, f.catalog_bytes, f.actual_bytes);
    }
  }
  return out;
}

nlohmann::json ReportsToJson(const std::vector<TableReport>& reports, bool with_fsck) {
  nlohmann::json tables = nlohmann::json::array();
  for (const TableReport& r : reports) {
    nlohmann::json histogram = nlohmann::json::array();
    for (size_t i = 0; i < kSizeBuckets; ++i) {
      nlohmann::json bucket = {{"label", BucketLabel(i)}, {"files", r.size_histogram[i]}};
      bucket["upper_bytes"] = i < kSizeBucketUpperBounds.size()
                                  ? nlohmann::json(kSizeBucketUpperBounds[i])
                                  : nlohmann::json(nullptr);
      histogram.push_back(std::move(bucket));
    }
    nlohmann::json orphans = nlohmann::json::array();
    int64_t orphan_bytes = 0;
    for (const Orphan& o : r.orphans) {
      orphans.push_back(
          {{"path", o.path}, {"bytes", o.size_bytes}, {"modified_ms", o.modified_ms}});
      orphan_bytes += o.size_bytes;
    }
    nlohmann::json table = {
        {"dataset", r.dataset},
        {"table", r.table},
        {"data_files", r.data_files},
        {"delete_files", r.delete_files},
        {"rows", r.rows},
        {"bytes", r.bytes},
        {"file_size_histogram", std::move(histogram)},
        {"snapshots", r.snapshots},
        {"oldest_snapshot_age_ms", r.oldest_snapshot_age_ms
                                       ? nlohmann::json(*r.oldest_snapshot_age_ms)
                                       : nlohmann::json(nullptr)},
        {"ledger_snapshot",
         r.ledger_snapshot ? nlohmann::json(*r.ledger_snapshot) : nlohmann::json(nullptr)},
        {"orphans_listed", r.listed},
        {"orphan_files", r.listed ? nlohmann::json(r.orphans.size()) : nlohmann::json(nullptr)},
        {"orphan_bytes", r.listed ? nlohmann::json(orphan_bytes) : nlohmann::json(nullptr)},
        {"orphans", std::move(orphans)}};
    if (!r.orphan_scan.empty()) table["orphans_not_listed_because"] = r.orphan_scan;
    if (with_fsck) {
      nlohmann::json findings = nlohmann::json::array();
      for (const FsckFinding& f : r.fsck) {
        nlohmann::json finding = {
            {"path", f.path},
            {"problem", f.problem == FileProblem::kMissing ? "missing" : "size_differs"},
            {"catalog_bytes", f.catalog_bytes}};
        if (f.problem == FileProblem::kSizeDiffers) finding["actual_bytes"] = f.actual_bytes;
        findings.push_back(std::move(finding));
      }
      table["fsck"] = std::move(findings);
    }
    tables.push_back(std::move(table));
  }
  return nlohmann::json{{"tables", std::move(tables)}};
}

Result<SweepResult> SweepOrphans(const lake::TableInspection& inspection, const TableReport& report,
                                 int64_t now_ms, int64_t window_ms, bool dry_run) {
  if (!report.listed) {
    return Status::Invalid("table ", report.table, ": orphans were not listed (",
                           report.orphan_scan, ")");
  }
  if (report.live_not_listed > 0) {
    return Status::Invalid("table ", report.table, ": ", report.live_not_listed,
                           " live file(s) do not appear under ", inspection.root,
                           "; the catalog's paths and the store's disagree, so no orphan is "
                           "deleted (run `weir maintain fsck`)");
  }
  SweepResult result;
  for (const Orphan& orphan : report.orphans) {
    if (now_ms - orphan.modified_ms < window_ms) {
      ++result.kept_young;
      continue;
    }
    if (!dry_run) WEIR_RETURN_NOT_OK(inspection.fs->DeleteFile(orphan.path));
    ++result.deleted;
    result.deleted_bytes += orphan.size_bytes;
  }
  return result;
}

std::vector<int64_t> SnapshotsToExpire(const lake::TableInspection& inspection,
                                       const ExpiryPolicy& policy, int64_t now_ms) {
  std::vector<lake::LakeSnapshot> snapshots = inspection.snapshots;
  std::sort(snapshots.begin(), snapshots.end(), [](const auto& a, const auto& b) {
    return std::tie(a.timestamp_ms, a.id) < std::tie(b.timestamp_ms, b.id);
  });
  const int64_t keep = std::max<int64_t>(policy.retain_last, 1);
  const auto candidates = static_cast<int64_t>(snapshots.size()) - keep;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < candidates; ++i) {
    const lake::LakeSnapshot& s = snapshots[static_cast<size_t>(i)];
    if (now_ms - s.timestamp_ms <= policy.older_than_ms) break;  // the rest are younger
    if (inspection.protected_snapshots.contains(s.id)) continue;
    out.push_back(s.id);
  }
  return out;
}

}  // namespace weir::maintain
