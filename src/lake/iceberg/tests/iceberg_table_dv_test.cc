// Deletion vector upserts on the Iceberg table layer (iceberg_table_dv.cc): one vector per data
// file, merged with its current one, replanned when a stale attempt loses the race, dropped with
// its data file by a repair; a format 2 table refused.
#include <filesystem>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "iceberg_table_fixture.h"
#include "lake/iceberg/deletion_vector.h"

namespace weir::lake {
namespace {

// The whole file at `path` (read through Arrow: an ifstream's istreambuf_iterator trips
// GCC 12's -Wnull-dereference at -O2).
std::string FileBytes(const std::string& path) {
  arrow::fs::LocalFileSystem fs;
  auto file = fs.OpenInputFile(path).ValueOrDie();
  return file->ReadAt(0, file->GetSize().ValueOrDie()).ValueOrDie()->ToString();
}

// The live delete entries of the table's current snapshot (and how many DELETED ones it made).
std::vector<iceberg::DataFile> LiveDeletes(const iceberg::IcebergTable& table, int& deleted_now) {
  const iceberg::TableIo io{std::make_shared<arrow::fs::LocalFileSystem>()};
  const auto& metadata = table.metadata();
  auto list = iceberg::ReadManifestList(io, metadata.RefSnapshot()->manifest_list);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  auto type = iceberg::PartitionType(metadata.default_spec(), metadata.current_schema());
  std::vector<iceberg::DataFile> out;
  deleted_now = 0;
  for (const auto& m : *list) {
    if (m.content != iceberg::ManifestContent::kDeletes) continue;
    auto entries = iceberg::ReadManifest(io, m, *type);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    for (const auto& e : *entries) {
      if (e.status != iceberg::EntryStatus::kDeleted) {
        out.push_back(e.data_file);
      } else if (e.snapshot_id == metadata.RefSnapshot()->snapshot_id) {
        ++deleted_now;
      }
    }
  }
  return out;
}

TEST_F(IcebergTableTest, DeletionVectorUpsertsKeepOneMergedVectorPerDataFile) {
  TableSpec spec = Spec();
  spec.partitioning.clear();
  spec.deletion_vectors = true;
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(spec, OpenMode::kOpenOrCreate));
  auto& table = static_cast<iceberg::IcebergTable&>(*opened.table);
  EXPECT_EQ(table.metadata().format_version(), 3);
  CommitRequest first;
  first.files = Write(table, *Rows(table, 0, 100));
  ASSERT_EQ(first.files.size(), 1u);
  first.offsets = {{"events", 0, 0, 100}};
  first.writer = "test/1";
  ASSERT_OK_AND_ASSIGN(auto landed, table.Commit(first));
  ASSERT_EQ(landed.status, CommitStatus::kCommitted);
  const std::string data_file =
      table.metadata().location() + "/data/" + first.files[0].relative_path;

  const auto upsert = [&](int64_t id, int64_t offset) {
    CommitRequest request;
    request.files = Write(table, *Rows(table, id, id + 1));
    request.offsets = {{"events", 0, offset, offset + 1}};
    request.writer = "test/" + std::to_string(offset);
    auto deletes = std::make_shared<KeyDeletes>();
    deletes->columns = {"id"};
    arrow::Int64Builder keys;
    EXPECT_TRUE(keys.AppendValues({id, 5000}).ok());  // 5000: a key no row has
    std::shared_ptr<arrow::Array> key_array;
    EXPECT_TRUE(keys.Finish(&key_array).ok());
    deletes->keys = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), 2,
                                             {key_array});
    request.key_deletes = deletes;
    return table.Commit(request);
  };
  ASSERT_OK_AND_ASSIGN(auto one, upsert(10, 100));
  ASSERT_EQ(one.status, CommitStatus::kCommitted);
  EXPECT_EQ(one.rows_deleted, 1);
  EXPECT_EQ(one.delete_files, 1);
  EXPECT_EQ(one.keys_deleted, 0);
  int deleted_now = 0;
  auto live = LiveDeletes(table, deleted_now);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(deleted_now, 0);
  EXPECT_EQ(live[0].content, iceberg::FileContent::kPositionDeletes);
  EXPECT_EQ(live[0].file_format, "PUFFIN");
  EXPECT_EQ(live[0].referenced_data_file, data_file);
  EXPECT_EQ(live[0].record_count, 1);
  const auto* summary = table.metadata().RefSnapshot();
  EXPECT_EQ(*summary->SummaryValue("operation"), "overwrite");
  EXPECT_EQ(*summary->SummaryValue("added-dvs"), "1");
  EXPECT_EQ(*summary->SummaryValue("added-position-deletes"), "1");

  // Key 20 is in the same data file: its vector is merged with the current one, which leaves.
  ASSERT_OK_AND_ASSIGN(auto two, upsert(20, 101));
  ASSERT_EQ(two.status, CommitStatus::kCommitted);
  EXPECT_EQ(two.rows_deleted, 1);
  live = LiveDeletes(table, deleted_now);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(deleted_now, 1);
  EXPECT_EQ(live[0].referenced_data_file, data_file);
  EXPECT_EQ(live[0].record_count, 2);
  const iceberg::TableIo io{std::make_shared<arrow::fs::LocalFileSystem>()};
  ASSERT_OK_AND_ASSIGN(const std::string puffin, io.PathOf(live[0].file_path));
  const std::string bytes = FileBytes(puffin);
  EXPECT_EQ(static_cast<int64_t>(bytes.size()), live[0].file_size_in_bytes);
  ASSERT_OK_AND_ASSIGN(const auto dv,
                       iceberg::DeletionVector::DecodeBlob(std::string_view(bytes).substr(
                           *live[0].content_offset, *live[0].content_size_in_bytes)));
  EXPECT_EQ(dv.Positions(), (std::vector<int64_t>{10, 20}));
  summary = table.metadata().RefSnapshot();
  EXPECT_EQ(*summary->SummaryValue("removed-dvs"), "1");
  EXPECT_EQ(*summary->SummaryValue("total-delete-files"), "1");
  EXPECT_EQ(*summary->SummaryValue("total-position-deletes"), "2");

  // Key 10 again: its live row is now in the first upsert's file, which gets its own vector.
  ASSERT_OK_AND_ASSIGN(auto three, upsert(10, 102));
  EXPECT_EQ(three.rows_deleted, 1);
  live = LiveDeletes(table, deleted_now);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(deleted_now, 0);
  ASSERT_OK_AND_ASSIGN(auto ledger, table.ReadLedger("events"));
  EXPECT_EQ(ledger.at(0), 103);

  // A repair dropping the first data file drops its vector with it.
  ASSERT_OK_AND_ASSIGN(const std::string first_path, io.PathOf(data_file));
  ASSERT_OK_AND_ASSIGN(const auto dropped, table.DropDataFiles({first_path}, "test"));
  EXPECT_EQ(dropped.files, 1);
  ASSERT_OK(table.ReadLedger("events").status());  // reads the table again
  live = LiveDeletes(table, deleted_now);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(deleted_now, 1);
  EXPECT_NE(live[0].referenced_data_file, data_file);
  EXPECT_EQ(*table.metadata().RefSnapshot()->SummaryValue("total-delete-files"), "1");
}

std::shared_ptr<const KeyDeletes> IdDeletes(int64_t id) {
  auto deletes = std::make_shared<KeyDeletes>();
  deletes->columns = {"id"};
  arrow::Int64Builder keys;
  EXPECT_TRUE(keys.Append(id).ok());
  std::shared_ptr<arrow::Array> key_array;
  EXPECT_TRUE(keys.Finish(&key_array).ok());
  deletes->keys =
      arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64())}), 1, {key_array});
  return deletes;
}

TEST_F(IcebergTableTest, AStaleDeletionVectorAttemptLosesTheRaceAndIsPlannedAgainOnAFreshRead) {
  TableSpec spec = Spec();
  spec.partitioning.clear();
  spec.deletion_vectors = true;
  ASSERT_OK_AND_ASSIGN(auto opened_a, catalog_->OpenTable(spec, OpenMode::kOpenOrCreate));
  ASSERT_OK_AND_ASSIGN(auto opened_b, catalog_->OpenTable(spec, OpenMode::kOpenOnly));
  auto& a = static_cast<iceberg::IcebergTable&>(*opened_a.table);
  auto& b = static_cast<iceberg::IcebergTable&>(*opened_b.table);
  CommitRequest rows;
  rows.files = Write(a, *Rows(a, 0, 100));
  rows.offsets = {{"events", 0, 0, 100}};
  rows.writer = "a/1";
  ASSERT_OK_AND_ASSIGN(auto landed, a.Commit(rows));
  ASSERT_EQ(landed.status, CommitStatus::kCommitted);
  // B commits once (another topic), so its next attempt starts on its own, unread answer.
  CommitRequest other;
  other.offsets = {{"other", 0, 0, 1}};
  other.writer = "b/1";
  ASSERT_OK_AND_ASSIGN(landed, b.Commit(other));
  ASSERT_EQ(landed.status, CommitStatus::kCommitted);
  // A deletes key 10 from the data file; B, not knowing A's vector, then deletes key 20.
  CommitRequest upsert_a;
  upsert_a.files = Write(a, *Rows(a, 10, 11));
  upsert_a.offsets = {{"events", 0, 100, 101}};
  upsert_a.writer = "a/2";
  upsert_a.key_deletes = IdDeletes(10);
  ASSERT_OK_AND_ASSIGN(landed, a.Commit(upsert_a));
  ASSERT_EQ(landed.status, CommitStatus::kCommitted);
  EXPECT_EQ(landed.rows_deleted, 1);
  CommitRequest upsert_b;
  upsert_b.files = Write(b, *Rows(b, 20, 21));
  upsert_b.offsets = {{"events", 0, 101, 102}};
  upsert_b.writer = "b/2";
  upsert_b.key_deletes = IdDeletes(20);
  ASSERT_OK_AND_ASSIGN(landed, b.Commit(upsert_b));
  ASSERT_EQ(landed.status, CommitStatus::kCommitted);
  EXPECT_EQ(landed.rows_deleted, 1);
  // B's vector holds A's position too and replaced A's: one live vector of both positions.
  int deleted_now = 0;
  const auto live = LiveDeletes(b, deleted_now);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(deleted_now, 1);
  EXPECT_EQ(live[0].record_count, 2);
  const iceberg::TableIo io{std::make_shared<arrow::fs::LocalFileSystem>()};
  ASSERT_OK_AND_ASSIGN(const std::string puffin, io.PathOf(live[0].file_path));
  const std::string bytes = FileBytes(puffin);
  ASSERT_OK_AND_ASSIGN(const auto dv,
                       iceberg::DeletionVector::DecodeBlob(std::string_view(bytes).substr(
                           *live[0].content_offset, *live[0].content_size_in_bytes)));
  EXPECT_EQ(dv.Positions(), (std::vector<int64_t>{10, 20}));
  // The losing attempt's Puffin file was deleted: A's and B's landed ones remain.
  int puffins = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    puffins += entry.path().extension() == ".puffin";
  }
  EXPECT_EQ(puffins, 2);
}

TEST_F(IcebergTableTest, DeletionVectorsRefuseAFormat2TableNamingTheSettingAndTheTable) {
  TableSpec spec = Spec();
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(spec, OpenMode::kOpenOrCreate));
  EXPECT_EQ(static_cast<iceberg::IcebergTable&>(*opened.table).metadata().format_version(), 2);
  spec.deletion_vectors = true;
  auto refused = catalog_->OpenTable(spec, OpenMode::kOpenOnly);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("upsert.iceberg_deletes"), std::string::npos);
  EXPECT_NE(refused.status().message().find("ns.events is format version 2"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(ClassOf(refused.status()), ErrorClass::kFatal);
}

}  // namespace
}  // namespace weir::lake
