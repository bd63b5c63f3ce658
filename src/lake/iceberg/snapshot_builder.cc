#include "lake/iceberg/snapshot_builder.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "lake/iceberg/avro_file.h"

namespace weir::lake::iceberg {
namespace {

// Iceberg's ListPacker(target, lookback 1).packEnd: bins filled from the oldest manifest, so
// the bin holding the newest manifests is the one that is not full.
std::vector<std::vector<ManifestFile>> PackEnd(const std::vector<ManifestFile>& items,
                                               int64_t target) {
  std::vector<std::vector<ManifestFile>> bins;
  int64_t weight = 0;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (bins.empty() || weight + it->manifest_length > target) {
      bins.emplace_back();
      weight = 0;
    }
    bins.back().push_back(*it);
    weight += it->manifest_length;
  }
  std::reverse(bins.begin(), bins.end());
  for (auto& bin : bins) std::reverse(bin.begin(), bin.end());
  return bins;
}

std::string PartitionKey(const std::vector<Value>& tuple, const std::vector<NestedField>& type) {
  std::string key;
  for (size_t i = 0; i < tuple.size(); ++i) {
    key += IsNull(tuple[i]) ? std::string("\x01") : "\x02" + HumanString(tuple[i], type[i].type);
    key += '\0';
  }
  return key;
}

int64_t SummaryLong(const Snapshot* parent, const char* key, bool& known) {
  if (parent == nullptr) return 0;
  const std::string* value = parent->SummaryValue(key);
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

Result<MergePolicy> MergePolicy::FromProperties(const TableMetadata& metadata) {
  MergePolicy policy;
  WEIR_ASSIGN_OR_RAISE(policy.enabled,
                       metadata.BoolProperty("commit.manifest-merge.enabled", policy.enabled));
  WEIR_ASSIGN_OR_RAISE(
      policy.min_count_to_merge,
      metadata.IntProperty("commit.manifest.min-count-to-merge", policy.min_count_to_merge));
  WEIR_ASSIGN_OR_RAISE(
      policy.target_size_bytes,
      metadata.IntProperty("commit.manifest.target-size-bytes", policy.target_size_bytes));
  if (policy.target_size_bytes <= 0) {
    return Status::Invalid("table property commit.manifest.target-size-bytes must be positive");
  }
  return policy;
}

std::string RandomUuid(std::mt19937_64& random) {
  uint8_t b[16];
  for (int i = 0; i < 16; i += 8) {
    const uint64_t word = random();
    for (int k = 0; k < 8; ++k) b[i + k] = static_cast<uint8_t>(word >> (8 * k));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);
  char text[37];
  std::snprintf(text, sizeof(text),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return text;
}

Result<PendingSnapshot> BuildAppend(const TableIo& io, const TableMetadata& base,
                                    const AppendRequest& request, std::mt19937_64& random) {
  WEIR_ASSIGN_OR_RAISE(const MergePolicy policy, MergePolicy::FromProperties(base));
  const Schema& schema = base.current_schema();
  const PartitionSpec& spec = base.default_spec();
  WEIR_ASSIGN_OR_RAISE(const std::vector<NestedField> partition_type, PartitionType(spec, schema));
  const Snapshot* parent = base.RefSnapshot(kMainBranch);
  const int64_t snapshot_id = base.NewSnapshotId(random);
  const int64_t sequence = base.last_sequence_number() + 1;
  const std::string prefix = base.location() + "/metadata/" + RandomUuid(random);
  PendingSnapshot out{base, {}, {}, {}};

  std::vector<ManifestFile> existing;
  if (parent != nullptr && request.parent_manifests != nullptr) {
    existing = *request.parent_manifests;
  } else if (parent != nullptr && !parent->manifest_list.empty()) {
    WEIR_ASSIGN_OR_RAISE(existing, ReadManifestList(io, parent->manifest_list));
  }

  // The delete manifests holding replaced deletion vectors, written again with them DELETED.
  const int format = base.format_version();
  int64_t removed_dvs = 0, removed_dv_positions = 0, rewritten_count = 0;
  int64_t entries_processed = 0;
  int replaced = 0;
  std::set<std::string> rewritten_paths;
  for (ManifestFile& m : existing) {
    const auto replacing = request.replaced_dvs.find(m.manifest_path);
    if (replacing == request.replaced_dvs.end()) continue;
    const PartitionSpec* m_spec = base.SpecById(m.partition_spec_id);
    if (m_spec == nullptr) {
      return Status::Invalid("manifest ", m.manifest_path, " names partition spec ",
                             m.partition_spec_id, ", which the table lacks");
    }
    WEIR_ASSIGN_OR_RAISE(const auto m_type, PartitionType(*m_spec, schema));
    WEIR_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io, m, m_type));
    entries_processed += static_cast<int64_t>(entries.size());
    std::vector<ManifestEntry> kept;
    size_t found = 0;
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;  // deleted by an earlier snapshot
      const DataFile& f = e.data_file;
      if (f.content == FileContent::kPositionDeletes && f.file_format == "PUFFIN" &&
          f.referenced_data_file && replacing->second.contains(*f.referenced_data_file)) {
        ++found;
        ++removed_dvs;
        removed_dv_positions += f.record_count;
        e.status = EntryStatus::kDeleted;
        e.snapshot_id = snapshot_id;  // the snapshot that deleted it
      } else {
        e.status = EntryStatus::kExisting;
      }
      kept.push_back(std::move(e));
    }
    if (found != replacing->second.size()) {
      return Status::Invalid("delete manifest ", m.manifest_path, " holds ", found, " of the ",
                             replacing->second.size(), " deletion vectors to replace");
    }
    const std::string uri = prefix + "-r" + std::to_string(++rewritten_count) + ".avro";
    const ManifestContext context{&schema,  m_spec, snapshot_id,
                                  sequence, format, ManifestContent::kDeletes};
    WEIR_ASSIGN_OR_RAISE(m, WriteManifest(io, uri, context, kept));
    out.written.push_back(uri);
    rewritten_paths.insert(uri);
    ++replaced;
  }
  if (static_cast<size_t>(rewritten_count) != request.replaced_dvs.size()) {
    return Status::Invalid("a deletion vector to replace is in a manifest the parent lacks");
  }

  // The new manifests: one of the data files, one of the delete files.
  std::set<std::string> partitions;
  int64_t added_records = 0, added_size = 0, added_deletes = 0, added_delete_size = 0;
  int64_t added_dvs = 0, added_dv_positions = 0;
  const auto write_new = [&](const std::vector<DataFile>& files, ManifestContent content,
                             const std::string& uri) -> Result<std::optional<ManifestFile>> {
    if (files.empty()) return std::optional<ManifestFile>();
    std::vector<ManifestEntry> entries;
    for (const DataFile& file : files) {
      entries.push_back({EntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt, file});
      partitions.insert(PartitionKey(file.partition, partition_type));
      if (content == ManifestContent::kData) {
        added_records += file.record_count;
        added_size += file.file_size_in_bytes;
      } else if (file.content == FileContent::kPositionDeletes) {
        ++added_dvs;
        added_dv_positions += file.record_count;
        added_delete_size += file.file_size_in_bytes;
      } else {
        added_deletes += file.record_count;
        added_delete_size += file.file_size_in_bytes;
      }
    }
    const ManifestContext context{&schema, &spec, snapshot_id, sequence, format, content};
    WEIR_ASSIGN_OR_RAISE(ManifestFile m, WriteManifest(io, uri, context, entries));
    out.written.push_back(uri);
    return std::optional<ManifestFile>(std::move(m));
  };
  WEIR_ASSIGN_OR_RAISE(const std::optional<ManifestFile> added,
                       write_new(request.files, ManifestContent::kData, prefix + "-m0.avro"));
  WEIR_ASSIGN_OR_RAISE(
      const std::optional<ManifestFile> added_delete,
      write_new(request.delete_files, ManifestContent::kDeletes, prefix + "-d0.avro"));

  // Group the manifests by content and spec, each group's new manifest first; data groups
  // before delete groups, as the list has them.
  using GroupKey = std::pair<int, int>;  // (content, spec id)
  std::vector<ManifestFile> result;
  std::map<GroupKey, std::vector<ManifestFile>> groups;
  std::vector<GroupKey> group_order;  // by first appearance
  const auto add_to_group = [&](const ManifestFile& m) {
    const GroupKey key{static_cast<int>(m.content), m.partition_spec_id};
    if (!groups.count(key)) group_order.push_back(key);
    groups[key].push_back(m);
  };
  if (added) add_to_group(*added);
  if (added_delete) add_to_group(*added_delete);
  for (const ManifestFile& m : existing) add_to_group(m);
  std::stable_partition(group_order.begin(), group_order.end(),
                        [](const GroupKey& key) { return key.first == 0; });
  const auto is_new = [&](const ManifestFile& m) {
    return (added && m.manifest_path == added->manifest_path) ||
           (added_delete && m.manifest_path == added_delete->manifest_path);
  };
  int created = (added ? 1 : 0) + (added_delete ? 1 : 0) + static_cast<int>(rewritten_count);
  int merged_count = 0;
  std::vector<std::string> merged_away;  // new manifests folded into a merged one
  for (const GroupKey& key : group_order) {
    const std::vector<ManifestFile>& group = groups[key];
    if (!policy.enabled) {
      result.insert(result.end(), group.begin(), group.end());
      continue;
    }
    const int spec_id = key.second;
    const ManifestContent content = static_cast<ManifestContent>(key.first);
    const ManifestFile& first = group.front();
    for (const auto& bin : PackEnd(group, policy.target_size_bytes)) {
      const bool has_first = std::any_of(bin.begin(), bin.end(), [&](const ManifestFile& m) {
        return m.manifest_path == first.manifest_path;
      });
      if (bin.size() == 1 ||
          (has_first && static_cast<int64_t>(bin.size()) < policy.min_count_to_merge)) {
        result.insert(result.end(), bin.begin(), bin.end());
        continue;
      }
      const PartitionSpec* bin_spec = base.SpecById(spec_id);
      if (bin_spec == nullptr) {
        return Status::Invalid("manifest ", bin[0].manifest_path, " names partition spec ", spec_id,
                               ", which the table lacks");
      }
      WEIR_ASSIGN_OR_RAISE(const auto bin_type, PartitionType(*bin_spec, schema));
      std::vector<ManifestEntry> merged;
      for (const ManifestFile& m : bin) {
        WEIR_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io, m, bin_type));
        entries_processed += static_cast<int64_t>(entries.size());
        const bool fresh = is_new(m);
        if (fresh || rewritten_paths.contains(m.manifest_path)) {
          --created;  // folded into the merged one
          merged_away.push_back(m.manifest_path);
        } else {
          ++replaced;
        }
        for (ManifestEntry& e : entries) {
          if (fresh) {
            e.snapshot_id = e.sequence_number = e.file_sequence_number = std::nullopt;
            merged.push_back(std::move(e));
          } else if (e.status != EntryStatus::kDeleted) {
            e.status = EntryStatus::kExisting;  // ids and sequence numbers stay explicit
            merged.push_back(std::move(e));
          } else if (e.snapshot_id == snapshot_id) {
            merged.push_back(std::move(e));  // a replaced deletion vector: deleted now
          }
        }
      }
      const std::string uri = prefix + "-m" + std::to_string(++merged_count) + ".avro";
      const ManifestContext merge_context{&schema,  bin_spec, snapshot_id,
                                          sequence, format,   content};
      WEIR_ASSIGN_OR_RAISE(ManifestFile m, WriteManifest(io, uri, merge_context, merged));
      out.written.push_back(uri);
      ++created;
      result.push_back(std::move(m));
    }
  }
  for (const std::string& uri : merged_away) {
    WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(uri));
    WEIR_RETURN_NOT_OK(io.fs->DeleteFile(path));
    out.written.erase(std::find(out.written.begin(), out.written.end(), uri));
  }

  Snapshot& snapshot = out.snapshot;
  snapshot.snapshot_id = snapshot_id;
  if (parent != nullptr) snapshot.parent_snapshot_id = parent->snapshot_id;
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
  const bool deletes = !request.delete_files.empty();
  summary["operation"] = !deletes ? "append" : request.files.empty() ? "delete" : "overwrite";
  summary["added-data-files"] = std::to_string(request.files.size());
  summary["added-records"] = std::to_string(added_records);
  summary["added-files-size"] = std::to_string(added_size + added_delete_size);
  summary["changed-partition-count"] = std::to_string(partitions.size());
  summary["total-records"] = std::to_string(total_records);
  summary["total-data-files"] = std::to_string(total_files);
  const auto added_equality_files = static_cast<int64_t>(request.delete_files.size()) - added_dvs;
  if (deletes) {
    summary["added-delete-files"] = std::to_string(request.delete_files.size());
    if (added_equality_files > 0) {
      summary["added-equality-delete-files"] = std::to_string(added_equality_files);
      summary["added-equality-deletes"] = std::to_string(added_deletes);
    }
    if (added_dvs > 0) {
      summary["added-dvs"] = std::to_string(added_dvs);
      summary["added-position-deletes"] = std::to_string(added_dv_positions);
    }
  }
  if (removed_dvs > 0) {
    summary["removed-dvs"] = std::to_string(removed_dvs);
    summary["removed-delete-files"] = std::to_string(removed_dvs);
    summary["removed-position-deletes"] = std::to_string(removed_dv_positions);
  }
  bool sizes_known = true;
  const int64_t parent_size = SummaryLong(parent, "total-files-size", sizes_known);
  if (sizes_known) {
    summary["total-files-size"] = std::to_string(parent_size + added_size + added_delete_size);
  }
  const std::pair<const char*, int64_t> totals[] = {
      {"total-delete-files", static_cast<int64_t>(request.delete_files.size()) - removed_dvs},
      {"total-position-deletes", added_dv_positions - removed_dv_positions},
      {"total-equality-deletes", added_deletes}};
  for (const auto& [key, added_now] : totals) {
    bool known = true;
    const int64_t value = SummaryLong(parent, key, known);
    if (known) summary[key] = std::to_string(value + added_now);
  }
  summary["manifests-created"] = std::to_string(created);
  summary["manifests-replaced"] = std::to_string(replaced);
  summary["manifests-kept"] = std::to_string(static_cast<int64_t>(result.size()) - created);
  summary["entries-processed"] = std::to_string(entries_processed);
  if (!request.commit_id.empty()) WriteLedger(request.commit_id, request.ledger, summary);

  WEIR_RETURN_NOT_OK(WriteSnapshotList(io, base, snapshot, result));
  out.written.push_back(snapshot.manifest_list);
  out.manifests = std::move(result);
  WEIR_RETURN_NOT_OK(out.metadata.AddSnapshot(snapshot, kMainBranch, request.now_ms));
  return out;
}

Status WriteSnapshotList(const TableIo& io, const TableMetadata& base, Snapshot& snapshot,
                         std::vector<ManifestFile>& manifests) {
  ManifestListContext context{snapshot.snapshot_id, snapshot.parent_snapshot_id,
                              snapshot.sequence_number, base.format_version(), 0};
  if (base.format_version() >= 3) {
    context.first_row_id = base.next_row_id();
    snapshot.first_row_id = base.next_row_id();
    snapshot.added_rows = AssignFirstRowIds(manifests, base.next_row_id());
  }
  return WriteManifestList(io, snapshot.manifest_list, context, manifests).status();
}

std::string VersionedMetadataUri(const TableMetadata& metadata, int version) {
  return metadata.location() + "/metadata/v" + std::to_string(version) + ".metadata.json";
}

std::string CatalogMetadataUri(const TableMetadata& metadata, int version,
                               std::mt19937_64& random) {
  char number[16];
  std::snprintf(number, sizeof(number), "%05d", version);
  return metadata.location() + "/metadata/" + number + "-" + RandomUuid(random) + ".metadata.json";
}

int MetadataVersionOf(std::string_view uri) {
  const auto slash = uri.rfind('/');
  std::string_view name = slash == std::string_view::npos ? uri : uri.substr(slash + 1);
  if (!name.ends_with(".metadata.json")) return -1;
  if (name.starts_with("v")) name.remove_prefix(1);
  int version = 0;
  size_t digits = 0;
  while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9' && digits < 9) {
    version = version * 10 + (name[digits] - '0');
    ++digits;
  }
  if (digits == 0) return -1;
  const std::string_view rest = name.substr(digits);
  return rest.starts_with(".") || rest.starts_with("-") ? version : -1;
}

Status WriteMetadataFile(const TableIo& io, const std::string& uri, const TableMetadata& metadata) {
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(uri));
  WEIR_ASSIGN_OR_RAISE(const auto info, io.fs->GetFileInfo(path));
  if (info.type() != arrow::fs::FileType::NotFound) {
    return Status::AlreadyExists("table metadata ", uri, " exists already");
  }
  return WriteWholeFile(*io.fs, path, metadata.ToJsonText());
}

Status WriteVersionHint(const TableIo& io, const TableMetadata& metadata, int version) {
  WEIR_ASSIGN_OR_RAISE(const std::string path,
                       io.PathOf(metadata.location() + "/metadata/version-hint.text"));
  return WriteWholeFile(*io.fs, path, std::to_string(version));
}

Result<TableMetadata> ReadMetadataFile(const TableIo& io, const std::string& uri) {
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(uri));
  WEIR_ASSIGN_OR_RAISE(const std::string text, ReadWholeFile(*io.fs, path));
  auto metadata = TableMetadata::Parse(text);
  if (!metadata.ok()) return WithContext(metadata.status(), uri);
  return metadata;
}

}  // namespace weir::lake::iceberg
