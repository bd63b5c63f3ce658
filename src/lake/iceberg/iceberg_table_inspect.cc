// IcebergTable::Inspect: what `weir maintain` reads of an Iceberg table (lake/inspection.h):
// the current snapshot's files, and every object a kept snapshot or the metadata references.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "lake/iceberg/delete_scope.h"
#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/snapshot_ledger.h"

namespace weir::lake::iceberg {
namespace {

Result<TableInspection> InspectMetadata(const TableIo& io_, const CurrentMetadata& current_) {
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
  for (const auto& [name, ref] : m.refs()) out.protected_snapshots.insert(ref.snapshot_id);
  if (out.ledger_snapshot) {
    // The ledger is read by walking main back from its head: keep every step of that walk.
    for (const Snapshot* step : m.Ancestry()) {
      out.protected_snapshots.insert(step->snapshot_id);
      if (step->snapshot_id == *out.ledger_snapshot) break;
    }
  }
  std::set<std::string> manifests_read;
  // The current snapshot's entries, for the deletes that apply to each data file.
  struct Current {
    ManifestEntry entry;
    int spec_id = 0;
    bool unpartitioned = false;
    size_t live = 0;  // its index in out.live
  };
  std::vector<Current> current_entries;
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
        LakeFile file{.path = std::move(path),
                      .kind = entry.data_file.content == FileContent::kData
                                  ? LakeFileKind::kData
                                  : LakeFileKind::kDeletes,
                      .size_bytes = entry.data_file.file_size_in_bytes,
                      .record_count = entry.data_file.record_count,
                      .partition_values = {},
                      .rewritable = false,
                      .deletes = {},
                      .deleted_rows = 0,
                      .not_rewritable_reason = {},
                      .equality_deletes = {}};
        // Rewritable: a data file of the default spec (its partition tuple is the table's).
        file.rewritable =
            file.kind == LakeFileKind::kData && manifest.partition_spec_id == m.default_spec_id();
        if (file.rewritable) {
          for (const Value& v : entry.data_file.partition) {
            file.partition_values.push_back(ValueText(v));
          }
        }
        current_entries.push_back(
            {entry, spec->spec_id, spec->is_unpartitioned(), out.live.size()});
        out.live.push_back(std::move(file));
      }
    }
  }
  // The deletes of each data file: Parquet position delete files naming it alone and Parquet
  // equality delete files are applied by a rewrite; any other delete that may apply leaves it
  // as it is (delete_scope.h).
  std::map<std::string, std::vector<const Current*>> deletes_by_partition;
  std::vector<const Current*> global_deletes;
  const auto partition_key = [](const Current& c) {
    std::string key = std::to_string(c.spec_id);
    for (const Value& v : c.entry.data_file.partition) {
      const auto text = ValueText(v);
      key += text ? "\x01" + *text : std::string("\x02");
    }
    return key;
  };
  for (const Current& c : current_entries) {
    if (c.entry.data_file.content == FileContent::kData) continue;
    if (c.entry.data_file.content == FileContent::kEqualityDeletes && c.unpartitioned) {
      global_deletes.push_back(&c);
    } else {
      deletes_by_partition[partition_key(c)].push_back(&c);
    }
  }
  for (const Current& c : current_entries) {
    if (c.entry.data_file.content != FileContent::kData) continue;
    LakeFile& file = out.live[c.live];
    const ScopedFile data{&c.entry, c.spec_id, c.unpartitioned};
    std::vector<const Current*> candidates = global_deletes;
    if (const auto found = deletes_by_partition.find(partition_key(c));
        found != deletes_by_partition.end()) {
      candidates.insert(candidates.end(), found->second.begin(), found->second.end());
    }
    for (const Current* d : candidates) {
      switch (ScopeOf({&d->entry, d->spec_id, d->unpartitioned}, data)) {
        case DeleteScope::kNone:
          break;
        case DeleteScope::kThisFile:
          file.deletes.push_back({out.live[d->live].path, c.entry.data_file.file_path, -1, 0});
          file.deleted_rows += d->entry.data_file.record_count;
          break;
        case DeleteScope::kVector:
          file.deletes.push_back({out.live[d->live].path, c.entry.data_file.file_path,
                                  *d->entry.data_file.content_offset,
                                  *d->entry.data_file.content_size_in_bytes});
          file.deleted_rows += d->entry.data_file.record_count;
          break;
        case DeleteScope::kEquality:
          file.equality_deletes.push_back(
              {out.live[d->live].path, d->entry.data_file.equality_ids});
          break;
        case DeleteScope::kOther:
          file.rewritable = false;
          file.not_rewritable_reason = UnappliedReason(d->entry);
          break;
      }
    }
  }
  return out;
}

}  // namespace

Result<TableInspection> IcebergTable::Inspect() {
  WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
  if (!exists) return Status::Invalid("table ", name_, " no longer exists");
  return InspectMetadata(io_, current_);
}

Result<ExpireResult> IcebergTable::ExpireSnapshots(const std::vector<int64_t>& ids,
                                                   int64_t /*queue_window_ms*/) {
  ExpireResult result;
  if (ids.empty()) return result;
  for (int attempt = 0; attempt < 20; ++attempt) {
    WEIR_ASSIGN_OR_RAISE(const bool exists, Reload());
    if (!exists) return Status::Invalid("table ", name_, " no longer exists");
    const CurrentMetadata base = current_;
    WEIR_ASSIGN_OR_RAISE(const TableInspection before, InspectMetadata(io_, base));
    std::set<int64_t> remove;
    for (const int64_t id : ids) {
      if (before.protected_snapshots.contains(id)) {
        return Status::Invalid("table ", name_, ": snapshot ", id,
                               " is protected (the current snapshot, a ref's head, or on the way "
                               "from main's head to the offset ledger)");
      }
      if (base.metadata.SnapshotById(id) != nullptr) remove.insert(id);
    }
    if (remove.empty()) return result;
    TableMetadata next = base.metadata;
    WEIR_RETURN_NOT_OK(next.RemoveSnapshots(remove, NowUnixMillis()));
    MetadataChange change;
    change.removed_snapshots.assign(remove.begin(), remove.end());
    std::vector<std::string> written;
    WEIR_ASSIGN_OR_RAISE(const auto committed, store_->Commit(ident_, base, next, change, written));
    if (committed.outcome == CommitOutcome::kConflict) {
      for (const std::string& uri : written) {
        if (auto path = io_.PathOf(uri); path.ok()) (void)io_.fs->DeleteFile(*path);
      }
      spdlog::info("table {}: expiring snapshots lost a race to a concurrent commit; retrying",
                   name_);
      continue;
    }
    if (committed.outcome == CommitOutcome::kUnknown) {
      // Read back: the expiry landed when none of the snapshots is listed any more.
      WEIR_ASSIGN_OR_RAISE(const bool still, Reload());
      if (!still) return Status::Invalid("table ", name_, " no longer exists");
      const bool landed = std::none_of(remove.begin(), remove.end(), [&](int64_t id) {
        return current_.metadata.SnapshotById(id) != nullptr;
      });
      if (!landed) continue;
    }
    result.expired = static_cast<int64_t>(remove.size());
    // What the kept snapshots reference now (concurrent commits only add to it).
    WEIR_ASSIGN_OR_RAISE(const TableInspection after, Inspect());
    for (const std::string& path : before.referenced) {
      if (after.referenced.contains(path) || path.rfind(before.root, 0) != 0) continue;
      const Status deleted = io_.fs->DeleteFile(path);
      if (!deleted.ok()) {
        // Left for the orphan sweep.
        spdlog::warn("table {}: could not delete {} after expiry: {}", name_, path,
                     deleted.message());
        continue;
      }
      result.deleted.push_back(path);
    }
    return result;
  }
  return Status::IOError("table ", name_, ": expiring snapshots lost 20 races in a row");
}

}  // namespace weir::lake::iceberg
