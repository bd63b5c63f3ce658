// BuildReplace: the `replace` snapshot compaction commits (snapshot_builder.h).
#include <algorithm>
#include <set>
#include <string_view>

#include "lake/iceberg/delete_scope.h"
#include "lake/iceberg/snapshot_builder.h"

namespace weir::lake::iceberg {
namespace {

int64_t SummaryLong(const Snapshot& parent, const char* key, bool& known) {
  const std::string* value = parent.SummaryValue(key);
  if (value == nullptr) {
    known = false;
    return 0;
  }
  try {
    return std::stoll(*value);
  } catch (...) {
    known = false;
    return 0;
  }
}

}  // namespace

Result<PendingSnapshot> BuildReplace(const TableIo& io, const TableMetadata& base,
                                     const ReplaceRequest& request, std::mt19937_64& random,
                                     ReplaceCheck& check) {
  check = ReplaceCheck{};
  size_t& found = check.found;
  const Schema& schema = base.current_schema();
  const PartitionSpec& spec = base.default_spec();
  const Snapshot* parent = base.RefSnapshot(kMainBranch);
  if (parent == nullptr || parent->manifest_list.empty()) {
    return Status::Invalid("a rewrite needs a table with a snapshot");
  }
  const int64_t snapshot_id = base.NewSnapshotId(random);
  const int64_t sequence = base.last_sequence_number() + 1;
  const std::string prefix = base.location() + "/metadata/" + RandomUuid(random);
  PendingSnapshot out{base, {}, {}, {}};
  WEIR_ASSIGN_OR_RAISE(const std::vector<ManifestFile> existing,
                       ReadManifestList(io, parent->manifest_list));

  std::vector<ManifestFile> result;
  int64_t added_records = 0, added_size = 0, removed_records = 0, removed_size = 0;
  int64_t entries_processed = 0;
  int created = 0, replaced = 0;
  std::vector<ManifestEntry> added_entries;
  for (const DataFile& file : request.files) {
    added_entries.push_back({EntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt, file});
    added_records += file.record_count;
    added_size += file.file_size_in_bytes;
  }
  if (!added_entries.empty()) {  // a rewrite whose every row was deleted adds no file
    const std::string added_uri = prefix + "-m0.avro";
    WEIR_ASSIGN_OR_RAISE(
        ManifestFile added,
        WriteManifest(io, added_uri, {&schema, &spec, snapshot_id, sequence, base.format_version()},
                      added_entries));
    out.written.push_back(added_uri);
    result.push_back(std::move(added));
    ++created;
  }

  // The removed data files, for the deletes that apply to them; with delete files in the table,
  // the data files that remain, for the equality delete files that still apply to one.
  std::vector<ManifestEntry> removed_entries, remaining_entries;
  std::vector<ScopedFile> removed, remaining;
  std::vector<const ManifestFile*> delete_manifests;
  const bool any_delete_manifest =
      std::any_of(existing.begin(), existing.end(),
                  [](const ManifestFile& m) { return m.content != ManifestContent::kData; });
  for (const ManifestFile& manifest : existing) {
    if (manifest.content != ManifestContent::kData) {
      delete_manifests.push_back(&manifest);
      continue;
    }
    const PartitionSpec* manifest_spec = base.SpecById(manifest.partition_spec_id);
    if (manifest_spec == nullptr) {
      return Status::Invalid("manifest ", manifest.manifest_path, " names partition spec ",
                             manifest.partition_spec_id, ", which the table lacks");
    }
    WEIR_ASSIGN_OR_RAISE(const auto type, PartitionType(*manifest_spec, schema));
    WEIR_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io, manifest, type));
    entries_processed += static_cast<int64_t>(entries.size());
    bool touched = false;
    std::vector<ManifestEntry> kept;
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;  // deleted by an earlier snapshot
      WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(e.data_file.file_path));
      if (request.remove.contains(path)) {
        touched = true;
        ++found;
        removed_records += e.data_file.record_count;
        removed_size += e.data_file.file_size_in_bytes;
        removed_entries.push_back(e);
        removed.push_back({nullptr, manifest.partition_spec_id, manifest_spec->is_unpartitioned()});
        e.status = EntryStatus::kDeleted;
        e.snapshot_id = snapshot_id;  // the snapshot that deleted it
      } else {
        e.status = EntryStatus::kExisting;
        if (any_delete_manifest) {
          remaining_entries.push_back(e);
          remaining.push_back(
              {nullptr, manifest.partition_spec_id, manifest_spec->is_unpartitioned()});
        }
      }
      kept.push_back(std::move(e));
    }
    if (!touched) {
      result.push_back(manifest);
      continue;
    }
    const std::string uri = prefix + "-m" + std::to_string(++replaced) + ".avro";
    WEIR_ASSIGN_OR_RAISE(
        ManifestFile rewritten,
        WriteManifest(
            io, uri, {&schema, manifest_spec, snapshot_id, sequence, base.format_version()}, kept));
    out.written.push_back(uri);
    ++created;
    result.push_back(std::move(rewritten));
  }

  for (size_t i = 0; i < removed.size(); ++i) removed[i].entry = &removed_entries[i];
  for (size_t i = 0; i < remaining.size(); ++i) remaining[i].entry = &remaining_entries[i];
  const auto in_removed_partition = [&](const ScopedFile& deletes) {
    return std::any_of(removed.begin(), removed.end(), [&](const ScopedFile& data) {
      return deletes.spec_unpartitioned ||
             (deletes.spec_id == data.spec_id &&
              deletes.entry->data_file.partition == data.entry->data_file.partition);
    });
  };
  const auto applies_to_remaining = [&](const ScopedFile& deletes) {
    return std::any_of(remaining.begin(), remaining.end(), [&](const ScopedFile& data) {
      return ScopeOf(deletes, data) != DeleteScope::kNone;
    });
  };

  // Delete manifests: the applied delete files become DELETED entries; any other live delete
  // file that applies to a removed data file blocks the rewrite.
  int64_t dropped_files = 0, dropped_vectors = 0, dropped_positions = 0,
          dropped_equality_deletes = 0;
  std::set<std::string> applied_paths;  // of remove_deletes, those found live
  for (const ManifestFile* manifest : delete_manifests) {
    const PartitionSpec* manifest_spec = base.SpecById(manifest->partition_spec_id);
    if (manifest_spec == nullptr) {
      return Status::Invalid("manifest ", manifest->manifest_path, " names partition spec ",
                             manifest->partition_spec_id, ", which the table lacks");
    }
    if (removed.empty()) {
      result.push_back(*manifest);
      continue;
    }
    WEIR_ASSIGN_OR_RAISE(const auto type, PartitionType(*manifest_spec, schema));
    WEIR_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io, *manifest, type));
    entries_processed += static_cast<int64_t>(entries.size());
    bool touched = false;
    std::vector<ManifestEntry> kept;
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(e.data_file.file_path));
      const ScopedFile scoped{&e, manifest->partition_spec_id, manifest_spec->is_unpartitioned()};
      // A Puffin file holds the vectors of many data files: one of its entries is applied when
      // its path is among remove_deletes and it names a removed file; the others stay.
      const bool vector = IsDeletionVector(e.data_file);
      const bool path_applied = request.remove_deletes.contains(path);
      const bool applied_by_value = request.equality_deletes.contains(path);
      bool names_removed = false;
      for (const ScopedFile& data : removed) {
        const DeleteScope scope = ScopeOf(scoped, data);
        if (scope == DeleteScope::kNone) continue;
        if (path_applied &&
            (scope == DeleteScope::kThisFile || (vector && scope == DeleteScope::kVector))) {
          names_removed = true;
        } else if (applied_by_value && scope == DeleteScope::kEquality) {
          continue;
        } else if (check.blocked.empty()) {
          const std::string reason =
              scope == DeleteScope::kEquality ? "equality deletes the rewrite did not apply"
              : scope == DeleteScope::kVector ? "a deletion vector the rewrite did not apply"
                                              : UnappliedReason(e);
          check.blocked = e.data_file.file_path + " (" + reason + ") applies to " +
                          data.entry->data_file.file_path;
        }
      }
      if (applied_by_value) ++check.found_equality;
      // An equality delete file applied, or of a partition the rewrite touched, that no
      // remaining data file needs any more (it applies to no later file either: their
      // sequence numbers are above its own) leaves the table.
      if (e.data_file.content == FileContent::kEqualityDeletes &&
          (applied_by_value || in_removed_partition(scoped))) {
        if (!applies_to_remaining(scoped)) {
          touched = true;
          ++check.equality_files_dropped;
          dropped_equality_deletes += e.data_file.record_count;
          e.status = EntryStatus::kDeleted;
          e.snapshot_id = snapshot_id;
          kept.push_back(std::move(e));
          continue;
        }
      }
      const bool applied = path_applied && (names_removed || !vector);
      if (applied) {
        if (!names_removed && check.blocked.empty()) {
          check.blocked = e.data_file.file_path + " names none of the files to rewrite";
        }
        touched = true;
        applied_paths.insert(path);
        ++(vector ? dropped_vectors : dropped_files);
        dropped_positions += e.data_file.record_count;
        e.status = EntryStatus::kDeleted;
        e.snapshot_id = snapshot_id;
      } else {
        e.status = EntryStatus::kExisting;
      }
      kept.push_back(std::move(e));
    }
    if (!touched) {
      result.push_back(*manifest);
      continue;
    }
    const std::string uri = prefix + "-m" + std::to_string(++replaced) + ".avro";
    WEIR_ASSIGN_OR_RAISE(ManifestFile rewritten,
                         WriteManifest(io, uri,
                                       {&schema, manifest_spec, snapshot_id, sequence,
                                        base.format_version(), ManifestContent::kDeletes},
                                       kept));
    out.written.push_back(uri);
    ++created;
    result.push_back(std::move(rewritten));
  }
  check.deleted_rows = dropped_positions;
  check.found_deletes = applied_paths.size();

  Snapshot& snapshot = out.snapshot;
  snapshot.snapshot_id = snapshot_id;
  snapshot.parent_snapshot_id = parent->snapshot_id;
  snapshot.sequence_number = sequence;
  snapshot.timestamp_ms = request.now_ms;
  snapshot.schema_id = schema.schema_id();
  snapshot.manifest_list = base.location() + "/metadata/snap-" + std::to_string(snapshot_id) +
                           "-1-" + RandomUuid(random) + ".avro";
  int64_t total_records = 0, total_files = 0;
  for (const ManifestFile& m : result) {
    if (m.content != ManifestContent::kData) continue;
    total_records += m.added_rows_count + m.existing_rows_count;
    total_files += m.added_files_count + m.existing_files_count;
  }
  auto& summary = snapshot.summary;
  summary = request.extra_summary;
  summary["operation"] = "replace";
  summary["added-data-files"] = std::to_string(request.files.size());
  summary["deleted-data-files"] = std::to_string(found);
  summary["added-records"] = std::to_string(added_records);
  summary["deleted-records"] = std::to_string(removed_records);
  summary["added-files-size"] = std::to_string(added_size);
  summary["removed-files-size"] = std::to_string(removed_size);
  summary["total-records"] = std::to_string(total_records);
  summary["total-data-files"] = std::to_string(total_files);
  bool sizes_known = true;
  const int64_t parent_size = SummaryLong(*parent, "total-files-size", sizes_known);
  if (sizes_known) {
    summary["total-files-size"] = std::to_string(parent_size + added_size - removed_size);
  }
  for (const char* key :
       {"total-delete-files", "total-position-deletes", "total-equality-deletes"}) {
    bool known = true;
    int64_t value = SummaryLong(*parent, key, known);
    if (std::string_view(key) == "total-delete-files") {
      value -= dropped_files + dropped_vectors + check.equality_files_dropped;
    }
    if (std::string_view(key) == "total-position-deletes") value -= dropped_positions;
    if (std::string_view(key) == "total-equality-deletes") value -= dropped_equality_deletes;
    if (known) summary[key] = std::to_string(std::max<int64_t>(0, value));
  }
  if (const int64_t dropped = dropped_files + dropped_vectors + check.equality_files_dropped;
      dropped > 0) {
    summary["removed-delete-files"] = std::to_string(dropped);
  }
  if (dropped_vectors > 0) summary["removed-dvs"] = std::to_string(dropped_vectors);
  if (dropped_files > 0) {
    summary["removed-position-delete-files"] = std::to_string(dropped_files);
    summary["removed-position-deletes"] = std::to_string(dropped_positions);
  }
  if (check.equality_files_dropped > 0) {
    summary["removed-equality-delete-files"] = std::to_string(check.equality_files_dropped);
    summary["removed-equality-deletes"] = std::to_string(dropped_equality_deletes);
  }
  summary["manifests-created"] = std::to_string(created);
  summary["manifests-replaced"] = std::to_string(replaced);
  summary["manifests-kept"] = std::to_string(static_cast<int64_t>(result.size()) - created);
  summary["entries-processed"] = std::to_string(entries_processed);

  WEIR_RETURN_NOT_OK(WriteSnapshotList(io, base, snapshot, result));
  out.written.push_back(snapshot.manifest_list);
  out.manifests = std::move(result);
  WEIR_RETURN_NOT_OK(out.metadata.AddSnapshot(snapshot, kMainBranch, request.now_ms));
  return out;
}

}  // namespace weir::lake::iceberg
