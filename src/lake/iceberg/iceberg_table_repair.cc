// IcebergTable::DropDataFiles: the repair of data files whose objects are missing or damaged
// (`weir maintain fsck --repair`): one `delete` snapshot on main whose manifest list keeps every
// manifest that holds none of them, and rewrites each one that does with those entries DELETED
// (the others EXISTING, their ids and sequence numbers kept), as Iceberg's own DeleteFiles
// does; the deletion vectors of the dropped files are DELETED in their delete manifests too.
// Committed with one compare-and-swap, retried on conflict. It carries no ledger keys:
// weir reads its ledger from the newest weir snapshot of main's ancestry, which this is not.
#include <algorithm>
#include <chrono>
#include <set>
#include <string_view>

#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/snapshot_builder.h"

namespace weir::lake::iceberg {
namespace {

constexpr int kAttempts = 20;

std::optional<int64_t> SummaryLong(const Snapshot& snapshot, const char* key) {
  const std::string* value = snapshot.SummaryValue(key);
  if (value == nullptr) return std::nullopt;
  try {
    return std::stoll(*value);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

Result<DropFilesResult> IcebergTable::DropDataFiles(const std::vector<std::string>& paths,
                                                    const std::string& reason) {
  if (paths.empty()) return DropFilesResult{};
  const std::set<std::string> wanted(paths.begin(), paths.end());
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
    if (!exists) return Status::Invalid("table ", name_, " no longer exists");
    const CurrentMetadata base = current_;
    const TableMetadata& m = base.metadata;
    const Snapshot* parent = m.RefSnapshot(kMainBranch);
    if (parent == nullptr || parent->manifest_list.empty()) {
      return Status::Invalid("table ", name_, " has no data files");
    }
    WEIR_ASSIGN_OR_RAISE(const auto manifests, ReadManifestList(io_, parent->manifest_list));
    const int64_t snapshot_id = m.NewSnapshotId(random_);
    const int64_t sequence = m.last_sequence_number() + 1;
    const std::string prefix = m.location() + "/metadata/" + RandomUuid(random_);
    std::vector<std::string> written;
    const auto remove_written = [&] {
      for (const auto& uri : written) {
        if (auto path = io_.PathOf(uri); path.ok()) (void)io_.fs->DeleteFile(*path);
      }
    };
    DropFilesResult result;
    std::set<std::string> found, dropped_uris;
    std::vector<ManifestFile> list;
    Status built = Status::OK();
    for (const ManifestFile& manifest : manifests) {
      if (manifest.content != ManifestContent::kData) {
        list.push_back(manifest);
        continue;
      }
      const PartitionSpec* spec = m.SpecById(manifest.partition_spec_id);
      if (spec == nullptr) {
        built = Status::Invalid("manifest ", manifest.manifest_path, " names partition spec ",
                                manifest.partition_spec_id, ", which the table lacks");
        break;
      }
      auto type = PartitionType(*spec, m.current_schema());
      auto entries = type.ok() ? ReadManifest(io_, manifest, *type)
                               : Result<std::vector<ManifestEntry>>(type.status());
      if (!entries.ok()) {
        built = entries.status();
        break;
      }
      std::vector<ManifestEntry> rewritten;
      bool hit = false;
      for (ManifestEntry& entry : *entries) {
        if (entry.status == EntryStatus::kDeleted) continue;
        auto path = io_.PathOf(entry.data_file.file_path);
        if (path.ok() && wanted.contains(*path)) {
          hit = true;
          found.insert(*path);
          dropped_uris.insert(entry.data_file.file_path);
          ++result.files;
          result.rows += entry.data_file.record_count;
          result.bytes += entry.data_file.file_size_in_bytes;
          entry.status = EntryStatus::kDeleted;
          entry.snapshot_id = snapshot_id;  // the snapshot that deletes it
        } else {
          entry.status = EntryStatus::kExisting;
        }
        rewritten.push_back(std::move(entry));
      }
      if (!hit) {
        list.push_back(manifest);
        continue;
      }
      const std::string uri = prefix + "-m" + std::to_string(written.size()) + ".avro";
      auto rewrote = WriteManifest(
          io_, uri, {&m.current_schema(), spec, snapshot_id, sequence, m.format_version()},
          rewritten);
      if (!rewrote.ok()) {
        built = rewrote.status();
        break;
      }
      written.push_back(uri);
      list.push_back(std::move(*rewrote));
    }
    if (built.ok() && found.size() != wanted.size()) {
      for (const std::string& path : wanted) {
        if (found.contains(path)) continue;
        built =
            Status::Invalid("table ", name_, ": ", path, " is not a live data file of the table");
        break;
      }
    }
    // The deletion vectors of the dropped files leave with them (the spec: a data file's removal
    // removes the vectors that apply to it).
    int64_t dropped_dvs = 0, dropped_positions = 0;
    for (ManifestFile& manifest : list) {
      if (!built.ok() || manifest.content != ManifestContent::kDeletes) continue;
      const PartitionSpec* spec = m.SpecById(manifest.partition_spec_id);
      if (spec == nullptr) continue;
      auto type = PartitionType(*spec, m.current_schema());
      auto entries = type.ok() ? ReadManifest(io_, manifest, *type)
                               : Result<std::vector<ManifestEntry>>(type.status());
      if (!entries.ok()) {
        built = entries.status();
        break;
      }
      std::vector<ManifestEntry> rewritten;
      bool hit = false;
      for (ManifestEntry& entry : *entries) {
        if (entry.status == EntryStatus::kDeleted) continue;
        const DataFile& f = entry.data_file;
        if (f.file_format == "PUFFIN" && f.referenced_data_file &&
            dropped_uris.contains(*f.referenced_data_file)) {
          hit = true;
          ++dropped_dvs;
          dropped_positions += f.record_count;
          entry.status = EntryStatus::kDeleted;
          entry.snapshot_id = snapshot_id;
        } else {
          entry.status = EntryStatus::kExisting;
        }
        rewritten.push_back(std::move(entry));
      }
      if (!hit) continue;
      const std::string uri = prefix + "-m" + std::to_string(written.size()) + ".avro";
      auto rewrote = WriteManifest(io_, uri,
                                   {&m.current_schema(), spec, snapshot_id, sequence,
                                    m.format_version(), ManifestContent::kDeletes},
                                   rewritten);
      if (!rewrote.ok()) {
        built = rewrote.status();
        break;
      }
      written.push_back(uri);
      manifest = std::move(*rewrote);
    }
    if (!built.ok()) {
      remove_written();
      return built;
    }

    Snapshot snapshot;
    snapshot.snapshot_id = snapshot_id;
    snapshot.parent_snapshot_id = parent->snapshot_id;
    snapshot.sequence_number = sequence;
    snapshot.timestamp_ms = NowUnixMillis();
    snapshot.schema_id = m.current_schema().schema_id();
    snapshot.manifest_list = m.location() + "/metadata/snap-" + std::to_string(snapshot_id) +
                             "-1-" + RandomUuid(random_) + ".avro";
    int64_t total_records = 0, total_files = 0;
    for (const ManifestFile& manifest : list) {
      if (manifest.content != ManifestContent::kData) continue;
      total_records += manifest.added_rows_count + manifest.existing_rows_count;
      total_files += manifest.added_files_count + manifest.existing_files_count;
    }
    auto& summary = snapshot.summary;
    summary["operation"] = "delete";
    summary["deleted-data-files"] = std::to_string(result.files);
    summary["deleted-records"] = std::to_string(result.rows);
    summary["removed-files-size"] = std::to_string(result.bytes);
    summary["total-records"] = std::to_string(total_records);
    summary["total-data-files"] = std::to_string(total_files);
    if (auto size = SummaryLong(*parent, "total-files-size")) {
      summary["total-files-size"] = std::to_string(*size - result.bytes);
    }
    for (const char* key :
         {"total-delete-files", "total-position-deletes", "total-equality-deletes"}) {
      auto value = SummaryLong(*parent, key);
      if (!value) continue;
      if (std::string_view(key) == "total-delete-files") *value -= dropped_dvs;
      if (std::string_view(key) == "total-position-deletes") *value -= dropped_positions;
      summary[key] = std::to_string(std::max<int64_t>(0, *value));
    }
    if (dropped_dvs > 0) {
      summary["removed-dvs"] = std::to_string(dropped_dvs);
      summary["removed-delete-files"] = std::to_string(dropped_dvs);
      summary["removed-position-deletes"] = std::to_string(dropped_positions);
    }
    if (!reason.empty()) summary["weir.repair"] = reason;
    const Status listed = WriteSnapshotList(io_, m, snapshot, list);
    if (!listed.ok()) {
      remove_written();
      return listed;
    }
    written.push_back(snapshot.manifest_list);
    TableMetadata next = m;
    WEIR_RETURN_NOT_OK(next.AddSnapshot(snapshot, kMainBranch, snapshot.timestamp_ms));
    auto committed = store_->Commit(ident_, base, next, {snapshot, std::nullopt}, written);
    if (!committed.ok()) {
      remove_written();
      return committed.status();
    }
    if (committed->outcome == CommitOutcome::kConflict) {
      remove_written();
      spdlog::info("table {}: dropping files lost a race to a concurrent commit; retrying", name_);
      continue;
    }
    if (committed->outcome == CommitOutcome::kUnknown) {
      WEIR_ASSIGN_OR_RAISE(const bool still, Reload());
      if (!still) return Status::Invalid("table ", name_, " no longer exists");
      if (current_.metadata.SnapshotById(snapshot_id) == nullptr) continue;  // did not land
    }
    result.snapshot_id = snapshot_id;
    return result;
  }
  return Status::IOError("table ", name_, ": dropping files lost ", kAttempts, " races in a row");
}

}  // namespace weir::lake::iceberg
