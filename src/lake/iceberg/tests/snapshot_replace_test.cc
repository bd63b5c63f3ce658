#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/iceberg/snapshot_builder.h"
#include "snapshot_builder_fixture.h"

// BuildReplace (snapshot_replace.cc): compaction's `replace` snapshot and the deletes it
// applies.
namespace weir::lake::iceberg {
namespace {

TEST_F(IcebergSnapshotBuilder, ARewriteAppliesEqualityDeletesAndDropsThoseNoLiveFileNeeds) {
  // Partition p = 20000 + commit % 3. Equality deletes apply to the older data files of their
  // partition: e0 to none; e3 to c0; e4 to c1; e5 to c2; e8 to c2 and c5.
  TableMetadata m = NewTableMetadata();
  const auto equality_deletes = [&](int commit) {
    DataFile f = File(commit, 9);
    f.content = FileContent::kEqualityDeletes;
    f.file_path += "-eq-delete.parquet";
    f.record_count = 10;
    f.equality_ids = {1};
    return f;
  };
  const std::map<int, std::pair<bool, bool>> commits{
      // commit → data file, delete file
      {0, {true, true}},  {1, {true, false}}, {2, {true, false}}, {3, {true, true}},
      {4, {false, true}}, {5, {true, true}},  {8, {false, true}}};
  for (const auto& [commit, files] : commits) {
    AppendRequest request;
    if (files.first) request.files = {File(commit, 0)};
    if (files.second) request.delete_files = {equality_deletes(commit)};
    request.now_ms = 10 + commit;
    ASSERT_OK_AND_ASSIGN(PendingSnapshot next, BuildAppend(io_, m, request, random_));
    m = std::move(next.metadata);
  }
  const auto path = [](const DataFile& f) { return f.file_path; };
  const auto replace = [&](std::set<std::string> remove, std::set<std::string> equality,
                           int partition_commit, ReplaceCheck& check) {
    ReplaceRequest request;
    request.remove = std::move(remove);
    request.equality_deletes = std::move(equality);
    DataFile merged = File(partition_commit, 7);
    merged.file_path += "-merged.parquet";
    request.files = {merged};
    request.now_ms = 100;
    return BuildReplace(io_, m, request, random_, check);
  };

  ReplaceCheck check;
  ASSERT_OK_AND_ASSIGN(PendingSnapshot a, replace({path(File(0, 0)), path(File(3, 0))},
                                                  {path(equality_deletes(3))}, 0, check));
  EXPECT_EQ(check.blocked, "");
  EXPECT_EQ(check.found, 2u);
  // e3 applied; e0, of the partition rewritten, applies to nothing: both leave.
  EXPECT_EQ(check.found_equality, 1u);
  EXPECT_EQ(check.equality_files_dropped, 2);
  EXPECT_EQ(a.snapshot.summary.at("removed-equality-delete-files"), "2");
  EXPECT_EQ(a.snapshot.summary.at("removed-equality-deletes"), "20");
  EXPECT_EQ(a.snapshot.summary.at("removed-delete-files"), "2");
  EXPECT_EQ(a.snapshot.summary.at("total-equality-deletes"), "30");
  EXPECT_EQ(a.snapshot.summary.at("total-delete-files"), "3");
  EXPECT_FALSE(a.snapshot.summary.count("removed-position-delete-files"));
  std::set<std::string> live;
  for (const ManifestEntry& e : LiveEntries(a.metadata)) live.insert(e.data_file.file_path);
  EXPECT_FALSE(live.contains(path(equality_deletes(3))));
  EXPECT_FALSE(live.contains(path(equality_deletes(0))));
  EXPECT_FALSE(live.contains(path(File(0, 0))));
  for (const int c : {4, 5, 8}) EXPECT_TRUE(live.contains(path(equality_deletes(c)))) << c;

  // e5 applied to c2 alone: dropped; e8 applied to c2 and still needed by c5: kept.
  ASSERT_OK_AND_ASSIGN(PendingSnapshot b,
                       replace({path(File(2, 0))},
                               {path(equality_deletes(5)), path(equality_deletes(8))}, 2, check));
  EXPECT_EQ(check.blocked, "");
  EXPECT_EQ(check.found_equality, 2u);
  EXPECT_EQ(check.equality_files_dropped, 1);
  live.clear();
  for (const ManifestEntry& e : LiveEntries(b.metadata)) live.insert(e.data_file.file_path);
  EXPECT_FALSE(live.contains(path(equality_deletes(5))));
  EXPECT_TRUE(live.contains(path(equality_deletes(8))));
  EXPECT_TRUE(live.contains(path(File(5, 0))));

  // An equality delete file that applies and is not applied refuses the rewrite.
  ASSERT_OK(replace({path(File(2, 0))}, {path(equality_deletes(5))}, 2, check).status());
  EXPECT_NE(check.blocked.find(path(equality_deletes(8)) +
                               " (equality deletes the rewrite did not apply) applies to " +
                               path(File(2, 0))),
            std::string::npos)
      << check.blocked;
  ASSERT_OK(replace({path(File(1, 0))}, {}, 1, check).status());
  EXPECT_NE(check.blocked.find(path(equality_deletes(4))), std::string::npos) << check.blocked;
  EXPECT_EQ(check.found_equality, 0u);
}

// One Puffin file holds the vectors of two data files; a rewrite of one of them applies and
// drops its vector alone, the other stays live; without the Puffin file among the applied
// deletes the rewrite is refused.
TEST_F(IcebergSnapshotBuilder, ARewriteDropsTheVectorOfItsFileAndKeepsTheOthersOfThatPuffin) {
  TableMetadata m = NewTableMetadata({}, 3);
  const DataFile a = File(0, 0), b = File(0, 1);
  const std::string puffin = (dir_ / "data" / "c1-dv.puffin").string();
  const auto vector = [&](const DataFile& data, int64_t offset, int64_t cardinality) {
    DataFile f = data;
    f.content = FileContent::kPositionDeletes;
    f.file_format = "PUFFIN";
    f.file_path = puffin;
    f.record_count = cardinality;
    f.value_counts = {};
    f.referenced_data_file = data.file_path;
    f.content_offset = offset;
    f.content_size_in_bytes = 40;
    return f;
  };
  AppendRequest first;
  first.files = {a, b};
  first.now_ms = 10;
  ASSERT_OK_AND_ASSIGN(PendingSnapshot one, BuildAppend(io_, m, first, random_));
  m = std::move(one.metadata);
  AppendRequest second;
  second.delete_files = {vector(a, 4, 1), vector(b, 44, 2)};
  second.now_ms = 11;
  ASSERT_OK_AND_ASSIGN(PendingSnapshot two, BuildAppend(io_, m, second, random_));
  m = std::move(two.metadata);

  ReplaceRequest request;
  request.remove = {a.file_path};
  request.remove_deletes = {puffin};
  DataFile merged = File(0, 7);
  merged.record_count = a.record_count - 1;
  request.files = {merged};
  request.now_ms = 100;
  ReplaceCheck check;
  ASSERT_OK_AND_ASSIGN(PendingSnapshot replaced, BuildReplace(io_, m, request, random_, check));
  EXPECT_EQ(check.blocked, "");
  EXPECT_EQ(check.found, 1u);
  EXPECT_EQ(check.found_deletes, 1u);
  EXPECT_EQ(check.deleted_rows, 1);
  const auto& summary = replaced.snapshot.summary;
  EXPECT_EQ(summary.at("removed-dvs"), "1");
  EXPECT_EQ(summary.at("removed-delete-files"), "1");
  EXPECT_EQ(summary.at("total-delete-files"), "1");
  EXPECT_EQ(summary.at("total-position-deletes"), "2");
  std::vector<std::string> vectors_left;
  for (const ManifestEntry& e : LiveEntries(replaced.metadata)) {
    if (e.data_file.content == FileContent::kPositionDeletes) {
      vectors_left.push_back(*e.data_file.referenced_data_file);
    }
  }
  EXPECT_EQ(vectors_left, std::vector<std::string>{b.file_path});

  request.remove_deletes.clear();
  ASSERT_OK(BuildReplace(io_, m, request, random_, check).status());
  EXPECT_NE(
      check.blocked.find(puffin + " (a deletion vector the rewrite did not apply) applies to " +
                         a.file_path),
      std::string::npos)
      << check.blocked;
}

}  // namespace
}  // namespace weir::lake::iceberg
