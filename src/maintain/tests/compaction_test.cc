#include "maintain/compaction.h"

#include <filesystem>
#include <optional>

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"

#include "files/parquet_file_writer.h"
#include "maintain/equality_deletes.h"
#include "maintain/policy.h"
#include "maintain/sorted_merge.h"

namespace weir::maintain {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

lake::LakeFile File(const std::string& path, int64_t bytes, std::string partition,
                    bool rewritable = true) {
  return lake::LakeFile{
      path, lake::LakeFileKind::kData, bytes, 10, {partition}, rewritable, {}, 0, {}, {}};
}

TEST(PlanCompactionTest, MergesSmallFilesPerPartitionAndLeavesLargeOnesAlone) {
  lake::TableInspection inspection;
  CompactionOptions options;
  options.target_file_bytes = 128 * kMiB;  // small < 16 MiB, large >= 64 MiB
  inspection.live = {File("a/1", kMiB, "a"),       File("a/2", 2 * kMiB, "a"),
                     File("a/3", 100 * kMiB, "a"), File("b/1", kMiB, "b"),
                     File("c/1", kMiB, "c"),       File("c/2", kMiB, "c", /*rewritable=*/false)};
  const auto runs = PlanCompaction(inspection, options);
  // Partition a: its two small files (the large one never); b has one small file only; c's
  // second file is not rewritable.
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].partition_values, std::vector<std::optional<std::string>>{"a"});
  ASSERT_EQ(runs[0].inputs.size(), 2u);
  EXPECT_EQ(runs[0].inputs[0].path, "a/1");
  EXPECT_EQ(runs[0].inputs[1].path, "a/2");
  EXPECT_EQ(runs[0].input_rows, 20);
  EXPECT_FALSE(runs[0].medium);
}

TEST(PlanCompactionTest, MediumFilesOnlyOnceAPartitionHasManyOfThem) {
  lake::TableInspection inspection;
  CompactionOptions options;
  options.target_file_bytes = 128 * kMiB;
  for (int i = 0; i < 7; ++i)
    inspection.live.push_back(File("m" + std::to_string(i), 20 * kMiB, "p"));
  EXPECT_TRUE(PlanCompaction(inspection, options).empty());
  inspection.live.push_back(File("m7", 20 * kMiB, "p"));
  const auto runs = PlanCompaction(inspection, options);
  ASSERT_FALSE(runs.empty());
  EXPECT_TRUE(runs[0].medium);
  int64_t inputs = 0;
  for (const auto& run : runs) inputs += static_cast<int64_t>(run.inputs.size());
  EXPECT_EQ(inputs, 8);
}

TEST(PlanCompactionTest, TheScheduledSmallPassNeverTakesAMediumFileAndTheMediumPassTakesTwo) {
  const TablePolicy policy{
      .target_file_size = 128 * kMiB, .small_file_size = 4 * kMiB, .large_file_size = 32 * kMiB};
  lake::TableInspection inspection;
  inspection.live = {File("p/s1", kMiB, "p"),      File("p/s2", kMiB, "p"),
                     File("p/m1", 10 * kMiB, "p"), File("p/m2", 20 * kMiB, "p"),
                     File("p/l1", 40 * kMiB, "p"), File("q/m1", 10 * kMiB, "q")};
  const CompactionOptions small = TierOptions(policy, CompactionOptions{}, CompactionTier::kSmall);
  EXPECT_EQ(small.target_file_bytes, 128 * kMiB);
  auto runs = PlanCompaction(inspection, small);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].inputs.size(), 2u);
  EXPECT_EQ(runs[0].inputs[0].path, "p/s1");
  EXPECT_EQ(runs[0].inputs[1].path, "p/s2");
  EXPECT_FALSE(runs[0].medium);
  // The medium pass: every file of p below the large tier; q's single medium file stays.
  runs =
      PlanCompaction(inspection, TierOptions(policy, CompactionOptions{}, CompactionTier::kMedium));
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].inputs.size(), 4u);
  EXPECT_TRUE(runs[0].medium);
  EXPECT_EQ(runs[0].input_bytes, 32 * kMiB);
}

TEST(PlanCompactionTest, EachTierRunsOnItsIntervalAndTheSmallOnesZeroTurnsBothOff) {
  TablePolicy policy{.compact_interval_ms = 3600000, .compact_medium_interval_ms = 86400000};
  EXPECT_EQ(CompactAction(policy, {}, CompactionTier::kSmall).name, "compact");
  EXPECT_EQ(CompactAction(policy, {}, CompactionTier::kSmall).interval_ms, 3600000);
  EXPECT_EQ(CompactAction(policy, {}, CompactionTier::kMedium).name, "compact_medium");
  EXPECT_EQ(CompactAction(policy, {}, CompactionTier::kMedium).interval_ms, 86400000);
  policy.compact_interval_ms = 0;
  EXPECT_EQ(CompactAction(policy, {}, CompactionTier::kSmall).interval_ms, 0);
  EXPECT_EQ(CompactAction(policy, {}, CompactionTier::kMedium).interval_ms, 0);
}

TEST(PlanCompactionTest, RunsAreCappedByInputsAndMemoryBudget) {
  lake::TableInspection inspection;
  CompactionOptions options;
  options.target_file_bytes = 128 * kMiB;
  options.max_merge_inputs = 3;
  for (int i = 0; i < 7; ++i) inspection.live.push_back(File("f" + std::to_string(i), kMiB, "p"));
  auto runs = PlanCompaction(inspection, options);
  ASSERT_EQ(runs.size(), 2u);  // 3 + 3, the seventh alone is no run
  EXPECT_EQ(runs[0].inputs.size(), 3u);
  EXPECT_EQ(runs[1].inputs.size(), 3u);
  options.max_merge_inputs = 1000;
  options.memory_budget_bytes = 8 * kMiB;  // half of it: 4 inputs of 1 MiB
  runs = PlanCompaction(inspection, options);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].inputs.size(), 4u);
  EXPECT_EQ(runs[1].inputs.size(), 3u);
}

class SortedMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "weir-merge-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A file of ids (sorted by the caller) as field 1, and names as field 2 when given.
  std::string Write(const std::string& name, const std::vector<int32_t>& ids, bool with_names) {
    arrow::Int32Builder id_builder;
    EXPECT_TRUE(id_builder.AppendValues(ids).ok());
    std::vector<std::shared_ptr<arrow::Field>> fields = {arrow::field("id", arrow::int32())};
    std::vector<std::shared_ptr<arrow::Array>> columns = {*id_builder.Finish()};
    std::vector<int> field_ids = {1};
    if (with_names) {
      arrow::StringBuilder names;
      for (const int32_t id : ids) EXPECT_TRUE(names.Append("n" + std::to_string(id)).ok());
      fields.push_back(arrow::field("name", arrow::utf8()));
      columns.push_back(*names.Finish());
      field_ids.push_back(2);
    }
    auto schema = *files::WithFieldIds(*arrow::schema(fields), field_ids);
    const std::string path = dir_ + "/" + name;
    auto writer = *files::ParquetFileWriter::Create(fs_, path, schema, files::FileConfig{});
    EXPECT_TRUE(
        writer->Append(*arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()), columns))
            .ok());
    EXPECT_TRUE(writer->Finish().ok());
    return path;
  }

  std::string dir_;
  std::shared_ptr<arrow::fs::FileSystem> fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
};

TEST_F(SortedMergeTest, MergesSortedInputsInKeyOrderFillingMissingColumnsWithNull) {
  const std::vector<MergeInput> inputs = {{Write("a.parquet", {1, 4, 7, 10}, true), {}},
                                          {Write("b.parquet", {2, 5, 8}, false), {}},
                                          {Write("c.parquet", {3, 6, 9, 11, 12}, true), {}}};
  const std::vector<lake::Column> columns = {{1, "id", lake::ColumnType::kInteger},
                                             {2, "name", lake::ColumnType::kVarchar},
                                             {3, "gone", lake::ColumnType::kBigint}};
  auto merge = *SortedMerge::Open(fs_, inputs, columns,
                                  MergeOptions{{lake::SortKey{"ID", false, false}}, 4});
  EXPECT_TRUE(merge->sorted());
  ASSERT_EQ(merge->schema()->num_fields(), 2);  // no input holds column 3
  std::vector<int32_t> ids;
  int64_t null_names = 0;
  while (true) {
    auto batch = *merge->Next();
    if (batch == nullptr) break;
    EXPECT_LE(batch->num_rows(), 4);
    const auto& id = static_cast<const arrow::Int32Array&>(*batch->column(0));
    for (int64_t i = 0; i < batch->num_rows(); ++i) ids.push_back(id.Value(i));
    null_names += batch->column(1)->null_count();
  }
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(null_names, 3);  // b's rows
  EXPECT_EQ(merge->rows_read(), 12);
}

TEST_F(SortedMergeTest, WithoutSortKeysConcatenatesInOrder) {
  const std::vector<MergeInput> inputs = {{Write("a.parquet", {5, 6}, true), {}},
                                          {Write("b.parquet", {1, 2}, true), {}}};
  auto merge = *SortedMerge::Open(fs_, inputs, {{1, "id", lake::ColumnType::kInteger}},
                                  MergeOptions{{}, 100});
  EXPECT_FALSE(merge->sorted());
  std::vector<int32_t> ids;
  while (auto batch = *merge->Next()) {
    const auto& id = static_cast<const arrow::Int32Array&>(*batch->column(0));
    for (int64_t i = 0; i < batch->num_rows(); ++i) ids.push_back(id.Value(i));
  }
  EXPECT_EQ(ids, (std::vector<int32_t>{5, 6, 1, 2}));
}

// Deleted positions are file positions: they hold across batch boundaries, a batch whose every
// row is deleted is skipped, and the counts say how many were read and dropped.
TEST_F(SortedMergeTest, SkipsDeletedPositionsAcrossBatches) {
  const std::vector<MergeInput> inputs = {
      {Write("a.parquet", {1, 3, 5, 7, 9, 11}, true), {0, 2, 3, 5}},  // 1, 5, 7, 11 deleted
      {Write("b.parquet", {2, 4, 6, 8}, true), {0, 1}}};              // 2, 4 deleted
  auto merge = *SortedMerge::Open(fs_, inputs, {{1, "id", lake::ColumnType::kInteger}},
                                  MergeOptions{{lake::SortKey{"id", false, false}}, 2});
  std::vector<int32_t> ids;
  while (auto batch = *merge->Next()) {
    const auto& id = static_cast<const arrow::Int32Array&>(*batch->column(0));
    for (int64_t i = 0; i < batch->num_rows(); ++i) ids.push_back(id.Value(i));
  }
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 6, 8, 9}));
  EXPECT_EQ(merge->rows_read(), 10);
  EXPECT_EQ(merge->rows_deleted(), 6);
}

// Equality deletes by value: each delete file's key columns (by field id) against the data
// file's, across integer widths, a key column the data file lacks reading as null (a null equal
// to a null), several delete files unioned; a delete file without one of its equality columns
// is an error naming it.
TEST_F(SortedMergeTest, EqualityDeletesDeleteTheRowsWhoseKeysMatchByValue) {
  const auto write = [&](const std::string& name, std::vector<std::shared_ptr<arrow::Field>> fields,
                         std::vector<std::shared_ptr<arrow::Array>> columns,
                         const std::vector<int>& ids) {
    auto schema = *files::WithFieldIds(*arrow::schema(fields), ids);
    const std::string path = dir_ + "/" + name;
    auto writer = *files::ParquetFileWriter::Create(fs_, path, schema, files::FileConfig{});
    const int64_t rows = columns.front()->length();
    EXPECT_TRUE(writer->Append(*arrow::RecordBatch::Make(schema, rows, columns)).ok());
    EXPECT_TRUE(writer->Finish().ok());
    return path;
  };
  const auto longs = [](const std::vector<std::optional<int64_t>>& values) {
    arrow::Int64Builder b;
    for (const auto& v : values) EXPECT_TRUE((v ? b.Append(*v) : b.AppendNull()).ok());
    return *b.Finish();
  };
  const auto strings = [](const std::vector<std::string>& values) {
    arrow::StringBuilder b;
    EXPECT_TRUE(b.AppendValues(values).ok());
    return *b.Finish();
  };
  lake::LakeFile data;
  data.path = Write("data.parquet", {1, 2, 3, 4, 5}, true);  // int32 ids (1), names n1.. (2)
  data.record_count = 5;
  const std::string by_id =
      write("by_id.parquet", {arrow::field("id", arrow::int64())}, {longs({2, 5, 99})}, {1});
  const std::string by_name =
      write("by_name.parquet", {arrow::field("name", arrow::utf8())}, {strings({"n4"})}, {2});
  // Field 3 is not in the data file: its rows read null there, so (3, null) deletes id 3 and
  // (1, 7) deletes nothing.
  const std::string with_missing = write(
      "missing.parquet", {arrow::field("id", arrow::int64()), arrow::field("x", arrow::int64())},
      {longs({3, 1}), longs({std::nullopt, 7})}, {1, 3});
  data.equality_deletes = {{by_id, {1}}, {by_name, {2}}, {with_missing, {1, 3}}};
  EqualityDeletes deletes(fs_);
  ASSERT_OK_AND_ASSIGN(const auto positions, deletes.DeletedPositions(data));
  EXPECT_EQ(positions, (std::vector<int64_t>{1, 2, 3, 4}));
  // The key sets are kept: a second file of the run reads no delete file again.
  std::filesystem::remove(by_id);
  lake::LakeFile other = data;
  other.path = Write("other.parquet", {2, 6}, true);
  other.equality_deletes = {{by_id, {1}}};
  ASSERT_OK_AND_ASSIGN(const auto again, deletes.DeletedPositions(other));
  EXPECT_EQ(again, (std::vector<int64_t>{0}));

  lake::LakeFile bad = data;
  bad.equality_deletes = {{by_name, {1}}};
  const auto refused = EqualityDeletes(fs_).DeletedPositions(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(by_name + " has no column of field id 1"),
            std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace weir::maintain
