// IcebergTable::Inspect: what `weir maintain` reads of an Iceberg table (lake/inspection.h):
// the current snapshot's files, and every object a kept snapshot or the metadata references.
#include <set>

#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/snapshot_ledger.h"

namespace weir::lake::iceberg {

Result<TableInspection> IcebergTable::Inspect() {
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return Status::Invalid("table ", name_, " no longer exists");
  const TableMetadata& m = current_.metadata;
  TableInspection out;
  out.fs = io_.fs;
  std::string location = m.location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  WEIR_ASSIGN_OR_RAISE(out.root, io_.PathOf(location + "/"));
  const auto reference = [&](const std::string& uri) -> Status {
    WEIR_ASSIGN_OR_RAISE(std::string path, io_.PathOf(uri));
    out.referenced.insert(std::move(path));
    return Status::OK();
  };
  WEIR_RETURN_NOT_OK(reference(current_.location));
  for (const MetadataLogEntry& entry : m.metadata_log()) {
    WEIR_RETURN_NOT_OK(reference(entry.metadata_file));
  }

  WEIR_ASSIGN_OR_RAISE(auto newest, NewestWeirCommit(m));
  if (newest) out.ledger_snapshot = newest->snapshot->snapshot_id;
  const std::optional<int64_t> current = m.current_snapshot_id();
  std::set<std::string> manifests_read;
  for (const Snapshot& snapshot : m.snapshots()) {
    out.snapshots.push_back(
        LakeSnapshot{.id = snapshot.snapshot_id,
                     .timestamp_ms = snapshot.timestamp_ms,
                     .weir_commit = snapshot.SummaryValue(kCommitIdKey) != nullptr});
    if (snapshot.manifest_list.empty()) continue;
    WEIR_RETURN_NOT_OK(reference(snapshot.manifest_list));
    WEIR_ASSIGN_OR_RAISE(auto manifests, ReadManifestList(io_, snapshot.manifest_list));
    const bool is_current = current && *current == snapshot.snapshot_id;
    for (const ManifestFile& manifest : manifests) {
      // A manifest shared by many snapshots is read once, unless its live entries are wanted.
      if (!manifests_read.insert(manifest.manifest_path).second && !is_current) continue;
      WEIR_RETURN_NOT_OK(reference(manifest.manifest_path));
      const PartitionSpec* spec = m.SpecById(manifest.partition_spec_id);
      if (spec == nullptr) {
        return Status::Invalid("manifest ", manifest.manifest_path, " names partition spec ",
                               manifest.partition_spec_id, ", which the table does not have");
      }
      WEIR_ASSIGN_OR_RAISE(auto partition_type, PartitionType(*spec, m.current_schema()));
      WEIR_ASSIGN_OR_RAISE(auto entries, ReadManifest(io_, manifest, partition_type));
      for (const ManifestEntry& entry : entries) {
        if (entry.status == EntryStatus::kDeleted) continue;
        WEIR_ASSIGN_OR_RAISE(std::string path, io_.PathOf(entry.data_file.file_path));
        out.referenced.insert(path);
        if (!is_current) continue;
        out.live.push_back(LakeFile{.path = std::move(path),
                                    .kind = entry.data_file.content == FileContent::kData
                                                ? LakeFileKind::kData
                                                : LakeFileKind::kDeletes,
                                    .size_bytes = entry.data_file.file_size_in_bytes,
                                    .record_count = entry.data_file.record_count});
      }
    }
  }
  return out;
}

}  // namespace weir::lake::iceberg
