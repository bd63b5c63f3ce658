#include <filesystem>
#include <map>
#include <set>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/iceberg/snapshot_builder.h"
#include "snapshot_builder_fixture.h"

namespace weir::lake::iceberg {
namespace {

TEST_F(IcebergSnapshotBuilder, HundredsOfAppendsPlanFromAtMostAHundredManifests) {
  // 250 commits merge twice (commits 100 and 199); the e2e test runs 1,000.
  constexpr int kCommits = 250;
  TableMetadata m = NewTableMetadata();
  int64_t records = 0;
  size_t max_manifests = 0;
  for (int commit = 0; commit < kCommits; ++commit) {
    AppendRequest request;
    request.files = {File(commit, 0)};
    request.commit_id = "commit-" + std::to_string(commit);
    request.ledger = {{"events", {{0, commit + 1}}}};
    request.now_ms = 1000 + commit;
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
    records += commit + 1;
    max_manifests = std::max(max_manifests, next.manifests.size());
    ASSERT_LE(next.manifests.size(), 100u) << "commit " << commit;
    ASSERT_EQ(next.snapshot.summary.at("total-records"), std::to_string(records));
    ASSERT_EQ(next.snapshot.summary.at("total-data-files"), std::to_string(commit + 1));
  }
  EXPECT_EQ(max_manifests, 99u);  // the 100th manifest triggers a merge into one
  EXPECT_EQ(m.snapshots().size(), static_cast<size_t>(kCommits));
  EXPECT_EQ(m.last_sequence_number(), kCommits);
  const Snapshot& head = *m.RefSnapshot();
  EXPECT_EQ(head.summary.at("total-files-size"), std::to_string(100 * kCommits));
  EXPECT_EQ(head.summary.at("added-records"), std::to_string(kCommits));
  EXPECT_EQ(head.summary.at("weir.commit-id"), "commit-" + std::to_string(kCommits - 1));
  EXPECT_EQ(head.summary.at("weir.offsets.events"), "{\"0\":" + std::to_string(kCommits) + "}");

  // Every file exactly once, with the sequence number of the commit that added it.
  const std::vector<ManifestEntry> live = LiveEntries(m);
  ASSERT_EQ(live.size(), static_cast<size_t>(kCommits));
  std::set<std::string> paths;
  int64_t live_records = 0;
  for (const ManifestEntry& e : live) {
    paths.insert(e.data_file.file_path);
    live_records += e.data_file.record_count;
    EXPECT_EQ(*e.sequence_number, e.data_file.record_count);  // commit c has c + 1 records
    EXPECT_EQ(*e.file_sequence_number, e.data_file.record_count);
    const Snapshot* added = m.SnapshotById(*e.snapshot_id);
    ASSERT_NE(added, nullptr);
    EXPECT_EQ(added->sequence_number, *e.sequence_number);
  }
  EXPECT_EQ(paths.size(), static_cast<size_t>(kCommits));
  EXPECT_EQ(live_records, records);
  // A new manifest folded into a merged one is deleted; the head's manifests all exist.
  for (const ManifestFile& manifest : *ReadManifestList(io_, head.manifest_list)) {
    EXPECT_TRUE(std::filesystem::exists(manifest.manifest_path)) << manifest.manifest_path;
  }
}

TEST_F(IcebergSnapshotBuilder, MergesAtTheTablesMinCountAndNotWhenDisabled) {
  TableMetadata merged = NewTableMetadata({{"commit.manifest.min-count-to-merge", "3"}});
  TableMetadata fast = NewTableMetadata({{"commit.manifest-merge.enabled", "false"}});
  std::vector<size_t> counts;
  for (int commit = 0; commit < 7; ++commit) {
    AppendRequest request;
    request.files = {File(commit, 0), File(commit, 1)};
    request.now_ms = 10 + commit;
    ASSERT_OK_AND_ASSIGN(PendingSnapshot a, BuildAppend(io_, merged, request, random_));
    merged = std::move(a.metadata);
    counts.push_back(a.manifests.size());
    ASSERT_OK_AND_ASSIGN(PendingSnapshot b, BuildAppend(io_, fast, request, random_));
    fast = std::move(b.metadata);
    EXPECT_EQ(b.manifests.size(), static_cast<size_t>(commit + 1));
  }
  EXPECT_EQ(counts, (std::vector<size_t>{1, 2, 1, 2, 1, 2, 1}));
  EXPECT_EQ(LiveEntries(merged).size(), 14u);
  EXPECT_EQ(LiveEntries(fast).size(), 14u);
  EXPECT_EQ(merged.RefSnapshot()->summary.at("changed-partition-count"), "1");
  EXPECT_EQ(merged.RefSnapshot()->summary.at("manifests-replaced"), "2");
}

// A table another engine repartitioned: manifests of its old spec are never merged with the new
// spec's, and keep their files and partition tuples.
TEST_F(IcebergSnapshotBuilder, MergesManifestsOfEachPartitionSpecSeparately) {
  nlohmann::json json = NewTableMetadata({{"commit.manifest.min-count-to-merge", "2"}}).ToJson();
  json["partition-specs"] = nlohmann::json::parse(R"json([
      {"spec-id": 0, "fields": [{"name": "id", "transform": "identity", "source-id": 1,
                                 "field-id": 1000}]},
      {"spec-id": 1, "fields": [{"name": "_inserted_at_day", "transform": "day", "source-id": 2,
                                 "field-id": 1001}]}])json");
  json["default-spec-id"] = 1;
  json["last-partition-id"] = 1001;
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::FromJson(json));
  // Two snapshots of the old spec, written as another engine would (one manifest each).
  std::vector<ManifestFile> old_manifests;
  for (int i = 0; i < 2; ++i) {
    DataFile f = File(100 + i, 0);
    f.partition = {int64_t{7 + i}};
    const ManifestContext context{&m.current_schema(), m.SpecById(0), 500 + i, i + 1};
    ASSERT_OK_AND_ASSIGN(
        ManifestFile manifest,
        WriteManifest(io_, (dir_ / ("metadata/old-" + std::to_string(i) + ".avro")).string(),
                      context, {{EntryStatus::kAdded, {}, {}, {}, f}}));
    old_manifests.insert(old_manifests.begin(), manifest);
    Snapshot s;
    s.snapshot_id = 500 + i;
    if (i > 0) s.parent_snapshot_id = 500;
    s.sequence_number = i + 1;
    s.manifest_list = (dir_ / ("metadata/snap-old-" + std::to_string(i) + ".avro")).string();
    s.summary = {{"operation", "append"}};
    ASSERT_OK(WriteManifestList(io_, s.manifest_list,
                                {s.snapshot_id, s.parent_snapshot_id, s.sequence_number},
                                old_manifests)
                  .status());
    ASSERT_OK(m.AddSnapshot(s, kMainBranch, 2 + i));
  }
  for (int commit = 0; commit < 3; ++commit) {
    AppendRequest request;
    request.files = {File(commit, 0)};
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
  }
  ASSERT_OK_AND_ASSIGN(const auto manifests, ReadManifestList(io_, m.RefSnapshot()->manifest_list));
  std::map<int, int> per_spec, files_per_spec;
  for (const ManifestFile& manifest : manifests) {
    ++per_spec[manifest.partition_spec_id];
    files_per_spec[manifest.partition_spec_id] +=
        manifest.added_files_count + manifest.existing_files_count;
  }
  // Spec 0's two manifests merged into one (a bin without the new manifest, of size 2); spec 1
  // merged at its second manifest and holds the 3 new files.
  EXPECT_EQ(files_per_spec, (std::map<int, int>{{0, 2}, {1, 3}}));
  EXPECT_EQ(per_spec[0], 1);
  EXPECT_LE(per_spec[1], 2);
  const auto old_type = *PartitionType(*m.SpecById(0), m.current_schema());
  std::set<int64_t> old_ids;
  for (const ManifestFile& manifest : manifests) {
    if (manifest.partition_spec_id != 0) continue;
    for (const ManifestEntry& e : *ReadManifest(io_, manifest, old_type)) {
      EXPECT_EQ(e.status, EntryStatus::kExisting);
      old_ids.insert(std::get<int64_t>(e.data_file.partition[0]));
      EXPECT_EQ(*e.snapshot_id, 500 + std::get<int64_t>(e.data_file.partition[0]) - 7);
    }
  }
  EXPECT_EQ(old_ids, (std::set<int64_t>{7, 8}));
  EXPECT_EQ(m.RefSnapshot()->summary.at("total-data-files"), "5");
}

TEST_F(IcebergSnapshotBuilder, AnAppendWithoutFilesStillMovesTheLedger) {
  TableMetadata m = NewTableMetadata();
  AppendRequest first;
  first.files = {File(0, 0)};
  first.commit_id = "a";
  first.ledger = {{"t", {{0, 5}}}};
  ASSERT_OK_AND_ASSIGN(PendingSnapshot one, BuildAppend(io_, m, first, random_));
  AppendRequest empty;
  empty.commit_id = "b";
  empty.ledger = {{"t", {{0, 9}}}};
  ASSERT_OK_AND_ASSIGN(PendingSnapshot two, BuildAppend(io_, one.metadata, empty, random_));
  EXPECT_EQ(two.snapshot.summary.at("added-data-files"), "0");
  EXPECT_EQ(two.snapshot.summary.at("total-records"), "1");
  EXPECT_EQ(two.manifests.size(), 1u);
  EXPECT_EQ(two.written.size(), 1u);  // only the manifest list
  ASSERT_OK_AND_ASSIGN(const auto newest, NewestWeirCommit(two.metadata));
  EXPECT_EQ(newest->commit_id, "b");
  EXPECT_EQ(newest->ledger.at("t").at(0), 9);
}

TEST_F(IcebergSnapshotBuilder, MetadataFilesAreNeverOverwritten) {
  TableMetadata m = NewTableMetadata();
  const std::string uri = VersionedMetadataUri(m, 1);
  ASSERT_OK(WriteMetadataFile(io_, uri, m));
  EXPECT_TRUE(WriteMetadataFile(io_, uri, m).IsAlreadyExists());
  ASSERT_OK(WriteVersionHint(io_, m, 1));
  ASSERT_OK_AND_ASSIGN(const TableMetadata back, ReadMetadataFile(io_, uri));
  EXPECT_EQ(back.ToJson(), m.ToJson());
}

TEST_F(IcebergSnapshotBuilder, NamesMetadataFilesAsFileSystemTablesAndCatalogsDo) {
  TableMetadata m = NewTableMetadata();
  EXPECT_EQ(VersionedMetadataUri(m, 7), dir_.string() + "/metadata/v7.metadata.json");
  const std::string catalog = CatalogMetadataUri(m, 12, random_);
  EXPECT_EQ(catalog.substr(0, dir_.string().size() + 16), dir_.string() + "/metadata/00012-");
  EXPECT_EQ(catalog.size(), dir_.string().size() + 16 + 36 + 14);
  EXPECT_EQ(MetadataVersionOf(catalog), 12);
  EXPECT_EQ(MetadataVersionOf("s3://b/t/metadata/v3.metadata.json"), 3);
  EXPECT_EQ(MetadataVersionOf("v3.gz.metadata.json"), 3);
  EXPECT_EQ(MetadataVersionOf("s3://b/t/metadata/snap-1.avro"), -1);
  EXPECT_EQ(MetadataVersionOf("vx.metadata.json"), -1);
}

TEST_F(IcebergSnapshotBuilder, RefusesBadMergeProperties) {
  TableMetadata m = NewTableMetadata({{"commit.manifest.min-count-to-merge", "many"}});
  AppendRequest request;
  const Status status = BuildAppend(io_, m, request, random_).status();
  EXPECT_NE(status.message().find("commit.manifest.min-count-to-merge"), std::string::npos)
      << status.message();
}

// Row lineage (format 3): every live file ends up with a row id range of its own, however its
// manifests were merged, and each snapshot starts where the table's next-row-id stood.
void ExpectDisjointRowIds(const std::vector<ManifestEntry>& live, int64_t next_row_id) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const ManifestEntry& e : live) {
    ASSERT_TRUE(e.data_file.first_row_id.has_value()) << e.data_file.file_path;
    ranges.emplace_back(*e.data_file.first_row_id,
                        *e.data_file.first_row_id + e.data_file.record_count);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_LE(ranges[i - 1].second, ranges[i].first) << "row ids overlap at " << i;
  }
  if (!ranges.empty()) {
    EXPECT_LE(ranges.back().second, next_row_id);
  }
}

TEST_F(IcebergSnapshotBuilder, FormatThreeAssignsDisjointRowIdsThroughMerges) {
  TableMetadata m = NewTableMetadata({{"commit.manifest.min-count-to-merge", "10"}}, 3);
  EXPECT_EQ(m.format_version(), 3);
  EXPECT_EQ(m.ToJson()["next-row-id"], 0);
  for (int commit = 0; commit < 40; ++commit) {
    AppendRequest request;
    request.files = {File(commit, 0), File(commit, 1)};
    request.commit_id = "c" + std::to_string(commit);
    request.now_ms = 1000 + commit;
    const int64_t before = m.next_row_id();
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
    ASSERT_EQ(next.snapshot.first_row_id, before);
    ASSERT_EQ(m.next_row_id(), before + *next.snapshot.added_rows);
    ASSERT_GE(*next.snapshot.added_rows, 2 * (commit + 1));
    for (const ManifestFile& manifest : next.manifests) ASSERT_TRUE(manifest.first_row_id);
  }
  const std::vector<ManifestEntry> live = LiveEntries(m);
  ASSERT_EQ(live.size(), 80u);
  ExpectDisjointRowIds(live, m.next_row_id());
  // The metadata and the snapshots round-trip with their row lineage fields.
  ASSERT_OK_AND_ASSIGN(const TableMetadata again, TableMetadata::FromJson(m.ToJson()));
  EXPECT_EQ(again.next_row_id(), m.next_row_id());
  EXPECT_EQ(again.RefSnapshot()->first_row_id, m.RefSnapshot()->first_row_id);
  EXPECT_EQ(again.ToJson(), m.ToJson());
  // A snapshot without row lineage is refused on a format 3 table.
  Snapshot bare;
  bare.snapshot_id = 7;
  bare.parent_snapshot_id = m.current_snapshot_id();
  bare.sequence_number = m.last_sequence_number() + 1;
  bare.summary = {{"operation", "append"}};
  EXPECT_FALSE(m.AddSnapshot(bare, kMainBranch, 1).ok());
}

TEST_F(IcebergSnapshotBuilder, AnUpgradedTableGivesRowIdsToEveryFileAtItsFirstV3Snapshot) {
  TableMetadata m = NewTableMetadata();
  for (int commit = 0; commit < 3; ++commit) {
    AppendRequest request;
    request.files = {File(commit, 0)};
    request.now_ms = 1000 + commit;
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
  }
  for (const ManifestEntry& e : LiveEntries(m)) EXPECT_FALSE(e.data_file.first_row_id);
  EXPECT_FALSE(m.UpgradeFormatVersion(4, 2).ok());
  ASSERT_OK(m.UpgradeFormatVersion(3, 2000));
  EXPECT_EQ(m.format_version(), 3);
  EXPECT_EQ(m.next_row_id(), 0);
  EXPECT_FALSE(m.UpgradeFormatVersion(2, 2).ok());
  AppendRequest request;
  request.files = {File(7, 0)};
  request.now_ms = 3000;
  ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
  m = std::move(next.metadata);
  EXPECT_EQ(*next.snapshot.first_row_id, 0);
  EXPECT_EQ(*next.snapshot.added_rows, 1 + 2 + 3 + 8);  // the old files get ids too
  const std::vector<ManifestEntry> live = LiveEntries(m);
  ASSERT_EQ(live.size(), 4u);
  ExpectDisjointRowIds(live, m.next_row_id());
  EXPECT_EQ(m.next_row_id(), 14);
  // Snapshots from before the upgrade keep no row lineage.
  EXPECT_FALSE(m.snapshots().front().first_row_id);
}

TEST_F(IcebergSnapshotBuilder, AReplacedDeletionVectorIsDeletedInTheSameSnapshotThroughMerges) {
  TableMetadata m = NewTableMetadata({{"commit.manifest.min-count-to-merge", "3"}}, 3);
  const DataFile data = File(0, 0);
  const auto vector = [&](int commit) {
    DataFile f = File(commit, 0);
    f.content = FileContent::kPositionDeletes;
    f.file_format = "PUFFIN";
    f.file_path = (dir_ / "data" / ("c" + std::to_string(commit) + "-dv.puffin")).string();
    f.partition = data.partition;
    f.record_count = commit;  // the vector of commit c holds c positions
    f.value_counts = {};
    f.referenced_data_file = data.file_path;
    f.content_offset = 4;
    f.content_size_in_bytes = 40;
    return f;
  };
  const auto type = *PartitionType(m.default_spec(), m.current_schema());
  std::vector<int> delete_manifests;
  for (int commit = 0; commit < 7; ++commit) {
    AppendRequest request;
    request.files = {File(commit, 1)};
    if (commit == 0) request.files.push_back(data);
    if (commit > 0) request.delete_files = {vector(commit)};
    if (commit > 1) {
      // The delete manifest of main's head that holds the data file's live vector.
      for (const ManifestFile& manifest : *ReadManifestList(io_, m.RefSnapshot()->manifest_list)) {
        if (manifest.content != ManifestContent::kDeletes) continue;
        for (const ManifestEntry& e : *ReadManifest(io_, manifest, type)) {
          if (e.status != EntryStatus::kDeleted) {
            request.replaced_dvs[manifest.manifest_path].insert(data.file_path);
          }
        }
      }
      ASSERT_EQ(request.replaced_dvs.size(), 1u);
    }
    request.now_ms = 10 + commit;
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
    const auto& summary = next.snapshot.summary;
    if (commit == 0) continue;
    EXPECT_EQ(summary.at("added-dvs"), "1");
    EXPECT_EQ(summary.at("added-position-deletes"), std::to_string(commit));
    EXPECT_EQ(summary.at("total-delete-files"), "1");
    EXPECT_EQ(summary.at("total-position-deletes"), std::to_string(commit));
    EXPECT_EQ(summary.count("removed-dvs"), commit > 1 ? 1u : 0u);
    if (commit > 1) {
      EXPECT_EQ(summary.at("removed-position-deletes"), std::to_string(commit - 1));
    }
    // One live vector, this commit's; the one it replaced is a DELETED entry of this snapshot.
    int live = 0, deleted_now = 0;
    for (const ManifestFile& manifest : next.manifests) {
      EXPECT_TRUE(std::filesystem::exists(manifest.manifest_path)) << manifest.manifest_path;
      if (manifest.content != ManifestContent::kDeletes) continue;
      for (const ManifestEntry& e : *ReadManifest(io_, manifest, type)) {
        if (e.status != EntryStatus::kDeleted) {
          ++live;
          EXPECT_EQ(e.data_file.file_path, vector(commit).file_path);
          EXPECT_EQ(e.data_file.content_offset, 4);
          EXPECT_EQ(*e.sequence_number, commit + 1);
        } else if (e.snapshot_id == next.snapshot.snapshot_id) {
          ++deleted_now;
          EXPECT_EQ(e.data_file.file_path, vector(commit - 1).file_path);
        }
      }
    }
    EXPECT_EQ(live, 1) << commit;
    EXPECT_EQ(deleted_now, commit > 1 ? 1 : 0) << commit;
    delete_manifests.push_back(static_cast<int>(std::count_if(
        next.manifests.begin(), next.manifests.end(),
        [](const ManifestFile& f) { return f.content == ManifestContent::kDeletes; })));
  }
  // Merged at three: the new manifest, the rewritten one and the others fold into one.
  EXPECT_EQ(delete_manifests, (std::vector<int>{1, 2, 1, 2, 1, 2}));
  AppendRequest missing;
  missing.replaced_dvs["nowhere.avro"] = {data.file_path};
  EXPECT_TRUE(BuildAppend(io_, m, missing, random_).status().IsInvalid());
}

}  // namespace
}  // namespace weir::lake::iceberg

namespace weir::lake::iceberg {
namespace {

TEST_F(IcebergSnapshotBuilder, UpsertsAddEqualityDeletesInDeleteManifestsMergedApart) {
  TableMetadata m = NewTableMetadata({{"commit.manifest.min-count-to-merge", "3"}});
  const auto equality_deletes = [&](int commit) {
    DataFile f = File(commit, 9);
    f.content = FileContent::kEqualityDeletes;
    f.file_path += "-eq-delete.parquet";
    f.record_count = 10;
    f.file_size_in_bytes = 7;
    f.equality_ids = {1};
    return f;
  };
  std::vector<std::string> operations;
  for (int commit = 0; commit < 7; ++commit) {
    AppendRequest request;
    if (commit != 4) request.files = {File(commit, 0)};  // commit 4: tombstones only
    if (commit > 0) request.delete_files = {equality_deletes(commit)};
    request.now_ms = 10 + commit;
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
    const auto& summary = next.snapshot.summary;
    operations.push_back(summary.at("operation"));
    EXPECT_EQ(summary.at("total-equality-deletes"), std::to_string(10 * commit));
    EXPECT_EQ(summary.at("total-delete-files"), std::to_string(commit));
    EXPECT_EQ(summary.at("total-position-deletes"), "0");
    if (commit > 0) {
      EXPECT_EQ(summary.at("added-delete-files"), "1");
      EXPECT_EQ(summary.at("added-equality-delete-files"), "1");
      EXPECT_EQ(summary.at("added-equality-deletes"), "10");
    } else {
      EXPECT_FALSE(summary.count("added-delete-files"));
    }
    // Data manifests first, then delete manifests; never a mix in one manifest.
    bool deletes_seen = false;
    for (const ManifestFile& manifest : next.manifests) {
      if (manifest.content == ManifestContent::kDeletes) deletes_seen = true;
      EXPECT_FALSE(deletes_seen && manifest.content == ManifestContent::kData);
    }
  }
  EXPECT_EQ(operations, (std::vector<std::string>{"append", "overwrite", "overwrite", "overwrite",
                                                  "delete", "overwrite", "overwrite"}));
  // Every delete file once, with the sequence number of the commit that added it (commit c is
  // sequence c + 1), and every data file once: through merges of both kinds.
  std::map<std::string, int64_t> deletes;
  int data = 0;
  for (const ManifestEntry& e : LiveEntries(m)) {
    if (e.data_file.content == FileContent::kEqualityDeletes) {
      EXPECT_EQ(e.data_file.equality_ids, std::vector<int>{1});
      deletes[e.data_file.file_path] = *e.sequence_number;
    } else {
      ++data;
    }
  }
  EXPECT_EQ(data, 6);
  ASSERT_EQ(deletes.size(), 6u);
  for (int commit = 1; commit < 7; ++commit) {
    EXPECT_EQ(deletes.at(equality_deletes(commit).file_path), commit + 1);
  }
  for (const ManifestFile& manifest : *ReadManifestList(io_, m.RefSnapshot()->manifest_list)) {
    EXPECT_TRUE(std::filesystem::exists(manifest.manifest_path)) << manifest.manifest_path;
    const auto type = *PartitionType(m.default_spec(), m.current_schema());
    for (const ManifestEntry& e : *ReadManifest(io_, manifest, type)) {
      EXPECT_EQ(e.data_file.content != FileContent::kData,
                manifest.content == ManifestContent::kDeletes);
    }
  }
}

}  // namespace
}  // namespace weir::lake::iceberg
