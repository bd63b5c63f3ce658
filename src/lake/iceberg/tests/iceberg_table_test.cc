// The Iceberg table layer on a temporary SQLite catalog: create from a spec (field ids, the
// partition spec), partition rows with Iceberg's transforms, commit with the ledger fence,
// recognise an earlier landing, evolve the schema, and refuse a different layout.
#include <filesystem>
#include <fstream>
#include <functional>
#include <utility>

#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/uuid_arrow.h"
#include "files/parquet_file_writer.h"
#include "lake/iceberg/deletion_vector.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/sql_catalog.h"

namespace weir::lake {
namespace {

class IcebergTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-iceberg-table-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    iceberg::IcebergLakeConfig config;
    config.sqlite_path = (dir_ / "catalog.db").string();
    config.warehouse = (dir_ / "warehouse").string();
    auto opened = iceberg::IcebergLakeCatalog::Open(config);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    catalog_ = std::move(*opened);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TableSpec Spec() const {
    TableSpec spec;
    spec.schema = "ns";
    spec.table = "events";
    spec.columns = {{"id", ColumnType::kBigint},
                    {"name", ColumnType::kVarchar},
                    {"_inserted_at", ColumnType::kTimestampTz}};
    spec.partitioning = {{"id", {TransformKind::kBucket, 4}},
                         {"_inserted_at", {TransformKind::kDay, 0}}};
    return spec;
  }

  // A batch of ids [from, to) with the table's field ids.
  std::shared_ptr<arrow::RecordBatch> Rows(const Table& table, int64_t from, int64_t to) {
    arrow::Int64Builder ids;
    arrow::StringBuilder names;
    arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                               arrow::default_memory_pool());
    for (int64_t i = from; i < to; ++i) {
      EXPECT_TRUE(ids.Append(i).ok());
      EXPECT_TRUE(names.Append("n" + std::to_string(i)).ok());
      EXPECT_TRUE(ts.Append(1'764'547'200'000'000 + i).ok());  // 2025-12-01
    }
    std::vector<std::shared_ptr<arrow::Array>> arrays(3);
    EXPECT_TRUE(ids.Finish(&arrays[0]).ok());
    EXPECT_TRUE(names.Finish(&arrays[1]).ok());
    EXPECT_TRUE(ts.Finish(&arrays[2]).ok());
    std::vector<std::shared_ptr<arrow::Field>> fields;
    std::vector<int> field_ids;
    for (size_t c = 0; c < 3; ++c) {
      fields.push_back(arrow::field(table.columns()[c].name, arrays[c]->type()));
      field_ids.push_back(static_cast<int>(table.columns()[c].id));
    }
    auto schema = files::WithFieldIds(*arrow::schema(fields), field_ids);
    EXPECT_TRUE(schema.ok());
    return arrow::RecordBatch::Make(*schema, to - from, arrays);
  }

  // Writes one file per partition group of the rows.
  std::vector<DataFile> Write(Table& table, const arrow::RecordBatch& rows) {
    auto groups = table.Partition(rows);
    EXPECT_TRUE(groups.ok()) << groups.status().ToString();
    std::vector<DataFile> out;
    for (const auto& group : *groups) {
      arrow::Int64Builder indices;
      EXPECT_TRUE(indices.AppendValues(group.rows).ok());
      std::shared_ptr<arrow::Array> index;
      EXPECT_TRUE(indices.Finish(&index).ok());
      std::vector<std::shared_ptr<arrow::Array>> columns;
      for (int c = 0; c < rows.num_columns(); ++c) {
        auto taken = arrow::compute::Take(*rows.column(c), *index);
        columns.push_back(*taken);
      }
      auto part = arrow::RecordBatch::Make(rows.schema(), group.rows.size(), columns);
      DataFile file;
      file.relative_path = table.NewFilePath(group.values);
      file.partition_values = group.values;
      auto writer = files::ParquetFileWriter::Create(
          table.filesystem(), table.DataDirectory() + file.relative_path, rows.schema(), {});
      EXPECT_TRUE(writer.ok()) << writer.status().ToString();
      EXPECT_TRUE((*writer)->Append(*part).ok());
      auto info = (*writer)->Finish();
      EXPECT_TRUE(info.ok());
      file.info = *info;
      out.push_back(std::move(file));
    }
    return out;
  }

  std::filesystem::path dir_;
  std::unique_ptr<iceberg::IcebergLakeCatalog> catalog_;
};

TEST_F(IcebergTableTest, CreatesTheTableWithFieldIdsAndThePartitionSpec) {
  ASSERT_OK_AND_ASSIGN(auto missing, catalog_->OpenTable(Spec(), OpenMode::kOpenOnly));
  EXPECT_EQ(missing.status, OpenStatus::kMissing);
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(Spec(), OpenMode::kOpenOrCreate));
  ASSERT_EQ(opened.status, OpenStatus::kOpened);
  const auto& columns = opened.table->columns();
  ASSERT_EQ(columns.size(), 3u);
  EXPECT_EQ(columns[0].id, 1);
  EXPECT_EQ(columns[2].name, "_inserted_at");
  EXPECT_EQ(columns[2].type, ColumnType::kTimestampTz);
  EXPECT_EQ(opened.table->partitioning(), Spec().partitioning);
  const auto& metadata = static_cast<iceberg::IcebergTable&>(*opened.table).metadata();
  ASSERT_EQ(metadata.default_spec().fields.size(), 2u);
  EXPECT_EQ(metadata.default_spec().fields[0].name, "id_bucket");
  EXPECT_EQ(metadata.default_spec().fields[1].name, "_inserted_at_day");
  EXPECT_TRUE(metadata.location().starts_with((dir_ / "warehouse" / "ns" / "events").string()));

  TableSpec other = Spec();
  other.partitioning = {{"id", {TransformKind::kBucket, 8}}};
  auto refused = catalog_->OpenTable(other, OpenMode::kOpenOrCreate);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("bucket[4](id)"), std::string::npos);
  EXPECT_NE(refused.status().message().find("bucket[8](id)"), std::string::npos);
}

TEST_F(IcebergTableTest, CommitsWithTheFenceAndRecognisesItsOwnLanding) {
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(Spec(), OpenMode::kOpenOrCreate));
  Table& table = *opened.table;
  auto files = Write(table, *Rows(table, 0, 100));
  EXPECT_EQ(files.size(), 4u);  // four buckets, one day
  CommitRequest request;
  request.files = files;
  request.offsets = {{"events", 0, 0, 100}, {"events", 3, 10, 20}};
  request.writer = "test/1";
  ASSERT_OK_AND_ASSIGN(auto committed, table.Commit(request));
  EXPECT_EQ(committed.status, CommitStatus::kCommitted);
  ASSERT_OK_AND_ASSIGN(auto ledger, table.ReadLedger("events"));
  EXPECT_EQ(ledger, (std::map<int32_t, int64_t>{{0, 100}, {3, 20}}));

  ASSERT_OK_AND_ASSIGN(auto again, table.Commit(request));
  EXPECT_EQ(again.status, CommitStatus::kAlreadyCommitted);
  EXPECT_EQ(again.snapshot_id, committed.snapshot_id);
  ASSERT_OK_AND_ASSIGN(auto found, table.FindCommit(request));
  EXPECT_EQ(found, std::optional<int64_t>(committed.snapshot_id));

  CommitRequest stale = request;
  stale.writer = "test/2";
  stale.files = Write(table, *Rows(table, 50, 60));
  stale.offsets = {{"events", 0, 50, 60}};
  ASSERT_OK_AND_ASSIGN(auto fenced, table.Commit(stale));
  EXPECT_EQ(fenced.status, CommitStatus::kFenced);
  ASSERT_EQ(fenced.fenced_ranges.size(), 1u);

  // A second handle of the same table continues where the first stopped.
  ASSERT_OK_AND_ASSIGN(auto second, catalog_->OpenTable(Spec(), OpenMode::kOpenOnly));
  CommitRequest next;
  next.files = Write(*second.table, *Rows(*second.table, 100, 150));
  next.offsets = {{"events", 0, 100, 150}};
  next.writer = "test/3";
  ASSERT_OK_AND_ASSIGN(auto landed, second.table->Commit(next));
  EXPECT_EQ(landed.status, CommitStatus::kCommitted);
  ASSERT_OK_AND_ASSIGN(ledger, table.ReadLedger("events"));
  EXPECT_EQ(ledger.at(0), 150);
  const auto& metadata = static_cast<iceberg::IcebergTable&>(table).metadata();
  ASSERT_NE(metadata.RefSnapshot(), nullptr);
  EXPECT_EQ(*metadata.RefSnapshot()->SummaryValue("total-records"), "150");
}

TEST_F(IcebergTableTest, EvolvesAddingColumnsAndRefusesANarrowing) {
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(Spec(), OpenMode::kOpenOrCreate));
  Table& table = *opened.table;
  ASSERT_OK_AND_ASSIGN(auto evolved, table.Evolve({{{"amount", ColumnType::kDouble}}, {}}));
  EXPECT_EQ(evolved.status, EvolveStatus::kEvolved);
  ASSERT_EQ(table.columns().size(), 4u);
  EXPECT_EQ(table.columns()[3].name, "amount");
  EXPECT_EQ(table.columns()[3].id, 4);
  ASSERT_OK_AND_ASSIGN(auto same, table.Evolve({{{"amount", ColumnType::kDouble}}, {}}));
  EXPECT_EQ(same.status, EvolveStatus::kEvolved);
  EXPECT_EQ(table.columns().size(), 4u);
  ASSERT_OK_AND_ASSIGN(auto refused, table.Evolve({{}, {{"amount", ColumnType::kBigint}}}));
  EXPECT_EQ(refused.status, EvolveStatus::kRefused);
}

// A store that lets a racer commit first (once), or reports a landed commit as unknown (once).
class ScriptedStore final : public iceberg::MetadataStore {
 public:
  ScriptedStore(std::unique_ptr<iceberg::MetadataStore> inner, std::function<void()> racer,
                bool unknown)
      : inner_(std::move(inner)), racer_(std::move(racer)), unknown_(unknown) {}
  Status EnsureNamespace(const std::vector<std::string>& levels) override {
    return inner_->EnsureNamespace(levels);
  }
  Result<std::optional<iceberg::CurrentMetadata>> Load(const iceberg::TableIdent& ident) override {
    return inner_->Load(ident);
  }
  Result<bool> Create(const iceberg::TableIdent& ident,
                      const iceberg::TableMetadata& metadata) override {
    return inner_->Create(ident, metadata);
  }
  Result<iceberg::StoreCommit> Commit(const iceberg::TableIdent& ident,
                                      const iceberg::CurrentMetadata& base,
                                      const iceberg::TableMetadata& next,
                                      const iceberg::MetadataChange& change,
                                      std::vector<std::string>& written) override {
    if (racer_) std::exchange(racer_, nullptr)();
    auto result = inner_->Commit(ident, base, next, change, written);
    if (result.ok() && unknown_) {
      unknown_ = false;
      result->outcome = iceberg::CommitOutcome::kUnknown;
      result->current.reset();
    }
    return result;
  }

 private:
  std::unique_ptr<iceberg::MetadataStore> inner_;
  std::function<void()> racer_;
  bool unknown_;
};

size_t FilesIn(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    n += entry.is_regular_file() ? 1 : 0;
  }
  return n;
}

TEST_F(IcebergTableTest, ALostRaceIsAConflictThatLeavesNoFilesAndAnUnknownOutcomeIsFound) {
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(Spec(), OpenMode::kOpenOrCreate));
  Table& racer = *opened.table;
  const iceberg::TableIdent ident{{"ns"}, "events"};
  const auto open_scripted = [&](std::function<void()> race,
                                 bool unknown) -> std::unique_ptr<iceberg::IcebergTable> {
    auto sql = iceberg::SqlCatalog::OpenSqlite((dir_ / "catalog.db").string());
    EXPECT_TRUE(sql.ok());
    iceberg::TableIo io{racer.filesystem()};
    auto inner = iceberg::MakeSqlMetadataStore(std::move(*sql), io);
    auto current = inner->Load(ident);
    EXPECT_TRUE(current.ok() && current->has_value());
    auto store = std::make_unique<ScriptedStore>(std::move(inner), std::move(race), unknown);
    return std::make_unique<iceberg::IcebergTable>(std::move(store), io, ident,
                                                   std::move(**current));
  };
  // The racer commits between our reload and our swap.
  CommitRequest theirs;
  theirs.files = Write(racer, *Rows(racer, 0, 10));
  theirs.offsets = {{"events", 1, 0, 10}};
  theirs.writer = "racer/1";
  auto table = open_scripted(
      [&] {
        auto landed = racer.Commit(theirs);
        ASSERT_TRUE(landed.ok() && landed->status == CommitStatus::kCommitted);
      },
      false);
  CommitRequest ours;
  ours.files = Write(*table, *Rows(*table, 10, 20));
  ours.offsets = {{"events", 0, 0, 10}};
  ours.writer = "ours/1";
  const auto metadata_dir = dir_ / "warehouse" / "ns" / "events" / "metadata";
  const size_t before = FilesIn(metadata_dir);
  ASSERT_OK_AND_ASSIGN(auto lost, table->Commit(ours));
  EXPECT_EQ(lost.status, CommitStatus::kConflict);
  // The racer's commit added a manifest, a list and a metadata file; ours left none behind.
  EXPECT_EQ(FilesIn(metadata_dir), before + 3);
  ASSERT_OK_AND_ASSIGN(auto retried, table->Commit(ours));
  EXPECT_EQ(retried.status, CommitStatus::kCommitted);
  ASSERT_OK_AND_ASSIGN(auto ledger, table->ReadLedger("events"));
  EXPECT_EQ(ledger, (std::map<int32_t, int64_t>{{0, 10}, {1, 10}}));

  // A commit that landed but reported no answer is found by its writer id, and its retry is
  // recognised as already committed.
  auto unsure = open_scripted(nullptr, true);
  CommitRequest next;
  next.files = Write(*unsure, *Rows(*unsure, 20, 30));
  next.offsets = {{"events", 0, 10, 20}};
  next.writer = "ours/2";
  ASSERT_OK_AND_ASSIGN(auto unknown, unsure->Commit(next));
  EXPECT_EQ(unknown.status, CommitStatus::kOutcomeUnknown);
  ASSERT_OK_AND_ASSIGN(auto found, unsure->FindCommit(next));
  ASSERT_TRUE(found.has_value());
  ASSERT_OK_AND_ASSIGN(auto again, unsure->Commit(next));
  EXPECT_EQ(again.status, CommitStatus::kAlreadyCommitted);
  EXPECT_EQ(again.snapshot_id, *found);
  const auto& metadata = unsure->metadata();
  EXPECT_EQ(*metadata.RefSnapshot()->SummaryValue("total-records"), "30");
}

// After its own commit a handle commits on the catalog's answer without reading the table back;
// when another handle committed meanwhile, the swap on that stale base is refused and the
// attempt is made again on a fresh read, in the same Commit: it lands, or is fenced by the
// fresh ledger. Refused attempts leave no files.
TEST_F(IcebergTableTest, CommitsOnItsOwnAnswerAndRetriesAStaleBaseOnAFreshRead) {
  ASSERT_OK_AND_ASSIGN(auto a_opened, catalog_->OpenTable(Spec(), OpenMode::kOpenOrCreate));
  ASSERT_OK_AND_ASSIGN(auto b_opened, catalog_->OpenTable(Spec(), OpenMode::kOpenOnly));
  Table& a = *a_opened.table;
  Table& b = *b_opened.table;
  const auto metadata_dir = dir_ / "warehouse" / "ns" / "events" / "metadata";
  const size_t before = FilesIn(metadata_dir);
  const auto commit = [&](Table& t, int32_t partition, int64_t from, int64_t to,
                          const std::string& writer) {
    CommitRequest request;
    request.files = Write(t, *Rows(t, 1000 * partition + from, 1000 * partition + to));
    request.offsets = {{"events", partition, from, to}};
    request.writer = writer;
    auto result = t.Commit(request);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : CommitResult{};
  };
  EXPECT_EQ(commit(a, 0, 0, 10, "a/1").status, CommitStatus::kCommitted);
  EXPECT_EQ(commit(b, 1, 0, 10, "b/1").status, CommitStatus::kCommitted);
  // a's own answer says partition 0 is at 10 and main is a/1; main is b/1 now.
  EXPECT_EQ(commit(a, 0, 10, 20, "a/2").status, CommitStatus::kCommitted);
  EXPECT_EQ(commit(b, 0, 20, 30, "b/2").status, CommitStatus::kCommitted);
  // a's unread state passes 20..30 (its ledger says 20); the fresh read says 30: fenced.
  const CommitResult fenced = commit(a, 0, 20, 30, "a/3");
  EXPECT_EQ(fenced.status, CommitStatus::kFenced);
  ASSERT_EQ(fenced.fenced_ranges.size(), 1u);
  EXPECT_EQ(fenced.fenced_ranges[0].start, 20);
  EXPECT_EQ(commit(a, 1, 10, 15, "a/4").status, CommitStatus::kCommitted);

  ASSERT_OK_AND_ASSIGN(auto ledger, b.ReadLedger("events"));
  EXPECT_EQ(ledger, (std::map<int32_t, int64_t>{{0, 30}, {1, 15}}));
  const auto& metadata = static_cast<iceberg::IcebergTable&>(b).metadata();
  EXPECT_EQ(metadata.snapshots().size(), 5u);  // a/1 b/1 a/2 b/2 a/4
  const auto ancestry = metadata.Ancestry();
  ASSERT_EQ(ancestry.size(), 5u);
  const std::vector<std::string> order = {"a/4", "b/2", "a/2", "b/1", "a/1"};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(*ancestry[i]->SummaryValue("weir.commit-id"), order[i]);
  }
  EXPECT_EQ(*metadata.RefSnapshot()->SummaryValue("total-records"), "45");
  // Each landed commit wrote a manifest, a list and a metadata file; the refused ones none.
  EXPECT_EQ(FilesIn(metadata_dir), before + 5 * 3);
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
  std::ifstream in(puffin, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

TEST_F(IcebergTableTest, CheckSpecNamesTheSetting) {
  TableSpec spec = Spec();
  spec.partitioning = {{"_inserted_at", {TransformKind::kTruncate, 4}}};
  const Status refused = catalog_->CheckSpec(spec, "datasets[events].partition_by");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("datasets[events].partition_by"), std::string::npos);
  EXPECT_TRUE(catalog_->CheckSpec(Spec(), "datasets[events].partition_by").ok());
}

TEST_F(IcebergTableTest, SortKeysAreDeclaredAsTheSortOrderAndADifferentOrderIsRefused) {
  TableSpec spec = Spec();
  spec.sort_keys = {{"name", false, false}, {"id", false, false}};
  ASSERT_OK(catalog_->CheckSpec(spec, "datasets[events].sort_by"));
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(spec, OpenMode::kOpenOrCreate));
  ASSERT_EQ(opened.status, OpenStatus::kOpened);
  const auto& metadata = static_cast<iceberg::IcebergTable&>(*opened.table).metadata();
  const iceberg::SortOrder order = metadata.default_sort_order();
  EXPECT_EQ(order.order_id, 1);
  ASSERT_EQ(order.fields.size(), 2u);
  EXPECT_EQ(order.fields[0].source_id, 2);  // name
  EXPECT_EQ(order.fields[1].source_id, 1);  // id
  EXPECT_EQ(order.fields[0].direction, iceberg::SortDirection::kAsc);
  EXPECT_EQ(order.fields[0].null_order, iceberg::NullOrder::kNullsLast);
  // The same keys open it again; other keys (or none) are a layout mismatch naming both.
  ASSERT_OK(catalog_->OpenTable(spec, OpenMode::kOpenOnly).status());
  spec.sort_keys = {{"id", false, false}};
  const auto other = catalog_->OpenTable(spec, OpenMode::kOpenOnly);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "table ns.events is sorted by name ASC NULLS LAST, id ASC NULLS LAST but the "
            "configuration asks for id ASC NULLS LAST; set sort_by to match or point the "
            "dataset at a new table");
  spec.sort_keys.clear();
  EXPECT_FALSE(catalog_->OpenTable(spec, OpenMode::kOpenOnly).ok());
}

TEST_F(IcebergTableTest, ASortKeyTheFirstColumnsLackLeavesTheOrderUndeclared) {
  TableSpec spec = Spec();
  spec.sort_keys = {{"absent", false, false}};
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(spec, OpenMode::kOpenOrCreate));
  ASSERT_EQ(opened.status, OpenStatus::kOpened);
  const auto& metadata = static_cast<iceberg::IcebergTable&>(*opened.table).metadata();
  EXPECT_EQ(metadata.default_sort_order_id(), 0);
  EXPECT_TRUE(metadata.default_sort_order().fields.empty());
}

TEST_F(IcebergTableTest, AUuidColumnIsAnIcebergUuidPartitionedByItsCanonicalText) {
  TableSpec spec = Spec();
  spec.columns = {{"u", ColumnType::kUuid}, {"_inserted_at", ColumnType::kTimestampTz}};
  spec.partitioning = {{"u", {TransformKind::kTruncate, 4}}};
  const auto truncated = catalog_->OpenTable(spec, OpenMode::kOpenOrCreate);
  ASSERT_FALSE(truncated.ok());  // truncate has no meaning for uuids (the spec's Appendix A)
  EXPECT_NE(truncated.status().message().find("column u is uuid"), std::string::npos)
      << truncated.status().message();
  spec.partitioning = {{"u", {TransformKind::kIdentity, 0}}};
  ASSERT_OK_AND_ASSIGN(auto opened, catalog_->OpenTable(spec, OpenMode::kOpenOrCreate));
  Table& table = *opened.table;
  EXPECT_EQ(table.columns()[0].type, ColumnType::kUuid);
  const auto& schema = static_cast<iceberg::IcebergTable&>(table).metadata().current_schema();
  EXPECT_EQ(iceberg::ToString(schema.FindTopLevel("u")->type), "uuid");

  arrow::FixedSizeBinaryBuilder storage(arrow::fixed_size_binary(16));
  const std::string a = "0123abcd-4567-89ef-0123-456789abcdef";
  const std::string b = "ffffffff-0000-0000-0000-000000000001";
  for (const auto& text : {a, b, a}) ASSERT_OK(storage.Append(Uuid::Parse(text)->bytes.data()));
  ASSERT_OK(storage.AppendNull());
  ASSERT_OK_AND_ASSIGN(auto uuids, UuidArrayOf(storage.Finish().ValueOrDie()));
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (int i = 0; i < 4; ++i) ASSERT_OK(ts.Append(1'764'547'200'000'000));
  ASSERT_OK_AND_ASSIGN(auto times, ts.Finish());
  ASSERT_OK_AND_ASSIGN(
      auto fields,
      files::WithFieldIds(*arrow::schema({arrow::field("u", uuids->type()),
                                          arrow::field("_inserted_at", times->type())}),
                          {1, 2}));
  const auto rows = arrow::RecordBatch::Make(fields, 4, {uuids, times});
  ASSERT_OK_AND_ASSIGN(auto groups, table.Partition(*rows));
  std::map<PartitionValue, std::vector<int64_t>> by_value;
  for (const auto& group : groups) by_value[group.values.at(0)] = group.rows;
  EXPECT_EQ(by_value, (std::map<PartitionValue, std::vector<int64_t>>{
                          {a, {0, 2}}, {b, {1}}, {std::nullopt, {3}}}));
  EXPECT_TRUE(table.NewFilePath({a}).starts_with("u=" + a + "/")) << table.NewFilePath({a});
  CommitRequest request;
  request.files = Write(table, *rows);
  request.offsets = {{"events", 0, 0, 4}};
  request.writer = "test/uuid";
  ASSERT_OK_AND_ASSIGN(auto committed, table.Commit(request));
  EXPECT_EQ(committed.status, CommitStatus::kCommitted);
}

}  // namespace
}  // namespace weir::lake
