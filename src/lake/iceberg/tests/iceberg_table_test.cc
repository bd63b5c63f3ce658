// The Iceberg table layer on a temporary SQLite catalog: create from a spec (field ids, the
// partition spec), partition rows with Iceberg's transforms, commit with the ledger fence,
// recognise an earlier landing, evolve the schema, and refuse a different layout. Deletion
// vector upserts: iceberg_table_dv_test.cc.
#include <filesystem>
#include <functional>
#include <utility>

#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "base/uuid_arrow.h"
#include "files/parquet_file_writer.h"
#include "iceberg_table_fixture.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/sql_catalog.h"

namespace weir::lake {
namespace {

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
