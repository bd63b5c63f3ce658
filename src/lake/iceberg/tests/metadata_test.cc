#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/iceberg/metadata.h"
#include "lake/iceberg/snapshot_ledger.h"

namespace weir::lake::iceberg {
namespace {

// Metadata in the shape Java's REST catalog and pyiceberg write: two schemas (nested types,
// a doc), an identity spec, a sort order, refs with retention, statistics and keys weir does
// not model.
constexpr char kForeignMetadata[] = R"json({
  "format-version": 2,
  "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "s3://bucket/wh/db/events",
  "last-sequence-number": 2,
  "last-updated-ms": 1602638573590,
  "last-column-id": 8,
  "current-schema-id": 1,
  "schemas": [
    {"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"}]},
    {"type": "struct", "schema-id": 1, "identifier-field-ids": [1], "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "price", "required": false, "type": "decimal(9, 2)", "doc": "cents"},
      {"id": 3, "name": "tags", "required": false,
       "type": {"type": "list", "element-id": 4, "element": "string", "element-required": false}},
      {"id": 5, "name": "attrs", "required": false,
       "type": {"type": "map", "key-id": 6, "key": "string", "value-id": 7, "value": "double",
                "value-required": true}},
      {"id": 8, "name": "ts", "required": false, "type": "timestamptz"}]}
  ],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": [
    {"name": "ts_day", "transform": "day", "source-id": 8, "field-id": 1000}]}],
  "last-partition-id": 1000,
  "default-sort-order-id": 1,
  "sort-orders": [{"order-id": 0, "fields": []}, {"order-id": 1, "fields": [
    {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"}]}],
  "properties": {"owner": "spark", "commit.manifest.min-count-to-merge": "5"},
  "current-snapshot-id": 22,
  "refs": {"main": {"snapshot-id": 22, "type": "branch", "max-ref-age-ms": 1000},
           "audit": {"snapshot-id": 11, "type": "tag"}},
  "snapshots": [
    {"snapshot-id": 11, "timestamp-ms": 1515100955770, "sequence-number": 1,
     "summary": {"operation": "append", "weir.commit-id": "c-1",
                 "weir.offsets.orders": "{\"0\":10,\"1\":20}"},
     "manifest-list": "s3://bucket/wh/db/events/metadata/snap-11.avro", "schema-id": 0},
    {"snapshot-id": 22, "parent-snapshot-id": 11, "timestamp-ms": 1555100955770,
     "sequence-number": 2, "summary": {"operation": "append", "spark.app.id": "x"},
     "manifest-list": "s3://bucket/wh/db/events/metadata/snap-22.avro", "schema-id": 1,
     "first-row-id": 0}
  ],
  "statistics": [{"snapshot-id": 22, "statistics-path": "s3://bucket/stats.puffin",
                  "file-size-in-bytes": 413, "file-footer-size-in-bytes": 42,
                  "blob-metadata": []}],
  "partition-statistics": [],
  "snapshot-log": [{"snapshot-id": 11, "timestamp-ms": 1515100955770},
                   {"snapshot-id": 22, "timestamp-ms": 1555100955770}],
  "metadata-log": [{"metadata-file": "s3://bucket/wh/db/events/metadata/v1.metadata.json",
                    "timestamp-ms": 1515100955770}],
  "some-future-key": {"kept": true}
})json";

TEST(IcebergMetadata, ParsesWhatOtherEnginesWrite) {
  ASSERT_OK_AND_ASSIGN(const TableMetadata m, TableMetadata::Parse(kForeignMetadata));
  EXPECT_EQ(m.table_uuid(), "9c12d441-03fe-4693-9a96-a0705ddf69c1");
  EXPECT_EQ(m.last_sequence_number(), 2);
  EXPECT_EQ(m.current_snapshot_id(), 22);
  EXPECT_EQ(m.current_schema().fields().size(), 5u);
  EXPECT_EQ(m.current_schema().FindField(2)->type, Type::Decimal(9, 2));
  EXPECT_EQ(m.current_schema().FindField(7)->type, Type::Primitive(TypeId::kDouble));
  EXPECT_EQ(m.current_schema().FindTopLevel("TS")->id, 8);
  EXPECT_EQ(m.default_spec().fields[0].transform.kind, TransformKind::kDay);
  EXPECT_EQ(m.sort_orders()[1].fields[0].source_id, 1);
  EXPECT_EQ(*m.IntProperty("commit.manifest.min-count-to-merge", 100), 5);
  ASSERT_EQ(m.Ancestry().size(), 2u);
  EXPECT_EQ(m.Ancestry()[1]->snapshot_id, 11);
  EXPECT_EQ(m.RefSnapshot("audit")->snapshot_id, 11);
}

TEST(IcebergMetadata, RewritingKeepsEverythingItDoesNotModel) {
  ASSERT_OK_AND_ASSIGN(const TableMetadata m, TableMetadata::Parse(kForeignMetadata));
  nlohmann::json original = nlohmann::json::parse(kForeignMetadata);
  const nlohmann::json written = m.ToJson();
  // Types are written in their canonical form (readers accept the spaces).
  EXPECT_EQ(written["schemas"][1]["fields"][1]["type"], "decimal(9,2)");
  original["schemas"][1]["fields"][1]["type"] = "decimal(9,2)";
  EXPECT_EQ(written["statistics"], original["statistics"]);
  EXPECT_EQ(written["some-future-key"], original["some-future-key"]);
  EXPECT_EQ(written["refs"], original["refs"]);
  EXPECT_EQ(written["snapshots"], original["snapshots"]);
  EXPECT_EQ(written["schemas"], original["schemas"]);
  EXPECT_EQ(written["sort-orders"], original["sort-orders"]);
  EXPECT_EQ(written["partition-specs"], original["partition-specs"]);
  EXPECT_EQ(written["metadata-log"], original["metadata-log"]);
  // A second round trip is stable.
  ASSERT_OK_AND_ASSIGN(const TableMetadata again, TableMetadata::FromJson(written));
  EXPECT_EQ(again.ToJson(), written);
}

TEST(IcebergSchema, KeepsTypesOfNewerSpecVersionsAsText) {
  const auto json = nlohmann::json::parse(R"json({"type": "struct", "schema-id": 4, "fields": [
      {"id": 1, "name": "v", "required": false, "type": "variant"},
      {"id": 2, "name": "t", "required": true, "type": "timestamp_ns"},
      {"id": 3, "name": "f", "required": false, "type": "fixed[ 16 ]",
       "initial-default": "00", "write-default": "01"}]})json");
  ASSERT_OK_AND_ASSIGN(const Schema schema, Schema::FromJson(json));
  EXPECT_EQ(schema.FindField(1)->type.id, TypeId::kVariant);
  EXPECT_EQ(schema.FindField(2)->type.id, TypeId::kUnknown);
  EXPECT_EQ(FormatVersionFor(schema), 3);
  EXPECT_EQ(schema.FindField(3)->type, Type::Fixed(16));
  EXPECT_EQ(schema.ToJson()["fields"][0]["type"], "variant");
  EXPECT_EQ(schema.ToJson()["fields"][1]["type"], "timestamp_ns");
  EXPECT_EQ(schema.ToJson()["fields"][2]["write-default"], "01");
  EXPECT_FALSE(Transform::Identity().ResultType(schema.FindField(1)->type).ok());
  EXPECT_FALSE(ParsePrimitiveType("decimal(39,2)").ok());
  EXPECT_FALSE(ParsePrimitiveType("decimal(5,6)").ok());
  EXPECT_FALSE(ParsePrimitiveType("fixed[0]").ok());
  EXPECT_EQ(*ParsePrimitiveType("decimal( 38 , 0 )"), Type::Decimal(38, 0));
}

TEST(IcebergMetadata, RefusesOtherFormatVersionsAndBrokenReferences) {
  nlohmann::json json = nlohmann::json::parse(kForeignMetadata);
  json["format-version"] = 4;
  EXPECT_TRUE(TableMetadata::FromJson(json).status().IsNotImplemented());
  json["format-version"] = 3;  // format 3 needs next-row-id
  EXPECT_NE(TableMetadata::FromJson(json).status().message().find("next-row-id"),
            std::string::npos);
  json["next-row-id"] = 12;
  ASSERT_OK_AND_ASSIGN(const TableMetadata v3, TableMetadata::FromJson(json));
  EXPECT_EQ(v3.next_row_id(), 12);
  EXPECT_EQ(v3.ToJson()["format-version"], 3);
  json.erase("next-row-id");
  json["format-version"] = 2;
  json["current-schema-id"] = 9;
  EXPECT_NE(TableMetadata::FromJson(json).status().message().find("current-schema-id 9"),
            std::string::npos);
  json["current-schema-id"] = 1;
  json.erase("location");
  EXPECT_NE(TableMetadata::FromJson(json).status().message().find("\"location\""),
            std::string::npos);
  EXPECT_FALSE(TableMetadata::Parse("{not json").ok());
}

Schema WeirSchema() {
  return Schema(0,
                {NestedField{1, "id", false, Type::Primitive(TypeId::kLong), {}},
                 NestedField{2, "_inserted_at", false, Type::Primitive(TypeId::kTimestampTz), {}}});
}

TEST(IcebergMetadata, CreatesANewTableWithSpecIdsFrom1000) {
  NewTable table{"s3://b/wh/t/",
                 WeirSchema(),
                 {{2, 0, "_inserted_at_day", *Transform::Parse("day")},
                  {1, 0, "id_bucket", *Transform::Parse("bucket[8]")}},
                 {{"write.format.default", "parquet"}},
                 "01890a5d-ac96-774b-bcce-b302099a8057",
                 1000};
  ASSERT_OK_AND_ASSIGN(const TableMetadata m, TableMetadata::Create(table));
  EXPECT_EQ(m.location(), "s3://b/wh/t");
  EXPECT_EQ(m.last_column_id(), 2);
  EXPECT_EQ(m.last_partition_id(), 1001);
  EXPECT_EQ(m.default_spec().fields[1].field_id, 1001);
  EXPECT_EQ(m.current_snapshot_id(), std::nullopt);
  EXPECT_EQ(m.ToJson()["current-snapshot-id"], -1);
  ASSERT_OK_AND_ASSIGN(const TableMetadata back, TableMetadata::Parse(m.ToJsonText()));
  EXPECT_EQ(back.ToJson(), m.ToJson());
  // A spec over a column the schema lacks, or a transform the column's type refuses.
  table.partition_fields = {{9, 0, "x", Transform::Identity()}};
  EXPECT_FALSE(TableMetadata::Create(table).ok());
  table.partition_fields = {{1, 0, "x", *Transform::Parse("day")}};
  EXPECT_FALSE(TableMetadata::Create(table).ok());
}

TEST(IcebergMetadata, EvolvesTheSchemaWithNewIdsAndAllowedPromotions) {
  NewTable table{"/t", WeirSchema(), {}, {}, "01890a5d-ac96-774b-bcce-b302099a8057", 1};
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::Create(table));
  Schema base(0, {NestedField{1, "n", false, Type::Primitive(TypeId::kInt), {}},
                  NestedField{2, "f", false, Type::Primitive(TypeId::kFloat), {}}});
  int last = 2;
  ASSERT_OK_AND_ASSIGN(
      const Schema next,
      EvolveSchema(base, {{"name", Type::Primitive(TypeId::kString)}},
                   {{1, Type::Primitive(TypeId::kLong)}, {2, Type::Primitive(TypeId::kDouble)}},
                   last));
  EXPECT_EQ(last, 3);
  EXPECT_EQ(next.FindField(3)->name, "name");
  EXPECT_EQ(next.FindField(1)->type.id, TypeId::kLong);
  EXPECT_FALSE(EvolveSchema(base, {{"N", Type::Primitive(TypeId::kString)}}, {}, last).ok());
  EXPECT_FALSE(EvolveSchema(base, {}, {{1, Type::Primitive(TypeId::kString)}}, last).ok());
  EXPECT_FALSE(EvolveSchema(next, {}, {{1, Type::Primitive(TypeId::kInt)}}, last).ok());

  ASSERT_OK_AND_ASSIGN(const int id, m.AddSchema(next, 5));
  EXPECT_EQ(id, 1);
  EXPECT_EQ(m.last_column_id(), 3);
  ASSERT_OK_AND_ASSIGN(const int same, m.AddSchema(next, 6));
  EXPECT_EQ(same, 1);
  ASSERT_OK(m.SetCurrentSchema(1, 7));
  EXPECT_EQ(m.current_schema().fields().size(), 3u);
  EXPECT_FALSE(m.SetCurrentSchema(4, 8).ok());
}

Snapshot NewSnapshot(int64_t id, std::optional<int64_t> parent, int64_t seq) {
  Snapshot s;
  s.snapshot_id = id;
  s.parent_snapshot_id = parent;
  s.sequence_number = seq;
  s.timestamp_ms = seq * 10;
  s.manifest_list = "/t/metadata/snap-" + std::to_string(id) + ".avro";
  s.summary["operation"] = "append";
  return s;
}

TEST(IcebergMetadata, AddsSnapshotsOnlyOnTopOfTheBranchHead) {
  NewTable table{"/t", WeirSchema(), {}, {}, "01890a5d-ac96-774b-bcce-b302099a8057", 1};
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::Create(table));
  ASSERT_OK(m.AddSnapshot(NewSnapshot(5, std::nullopt, 1), kMainBranch, 100));
  EXPECT_FALSE(m.AddSnapshot(NewSnapshot(6, std::nullopt, 2), kMainBranch, 101).ok());
  EXPECT_FALSE(m.AddSnapshot(NewSnapshot(6, 5, 3), kMainBranch, 101).ok());
  EXPECT_FALSE(m.AddSnapshot(NewSnapshot(5, 5, 2), kMainBranch, 101).ok());
  ASSERT_OK(m.AddSnapshot(NewSnapshot(6, 5, 2), kMainBranch, 102));
  EXPECT_EQ(m.current_snapshot_id(), 6);
  EXPECT_EQ(m.last_sequence_number(), 2);
  EXPECT_EQ(m.snapshot_log().size(), 2u);
  EXPECT_EQ(m.last_updated_ms(), 102);
  std::mt19937_64 random(7);
  const int64_t fresh = m.NewSnapshotId(random);
  EXPECT_GT(fresh, 0);
  EXPECT_EQ(m.SnapshotById(fresh), nullptr);
}

TEST(IcebergMetadata, KeepsABoundedMetadataLog) {
  NewTable table{"/t",
                 WeirSchema(),
                 {},
                 {{"write.metadata.previous-versions-max", "3"}},
                 "01890a5d-ac96-774b-bcce-b302099a8057",
                 1};
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::Create(table));
  std::vector<std::string> dropped;
  for (int v = 1; v <= 5; ++v) {
    ASSERT_OK_AND_ASSIGN(
        auto fell_off,
        m.RecordPreviousMetadata("/t/metadata/v" + std::to_string(v) + ".metadata.json", v));
    dropped.insert(dropped.end(), fell_off.begin(), fell_off.end());
  }
  ASSERT_EQ(m.metadata_log().size(), 3u);
  EXPECT_EQ(dropped, (std::vector<std::string>{"/t/metadata/v1.metadata.json",
                                               "/t/metadata/v2.metadata.json"}));
  EXPECT_EQ(m.metadata_log()[0].metadata_file, "/t/metadata/v3.metadata.json");
}

TEST(IcebergLedger, IsReadFromTheNewestWeirSnapshotInMainsAncestry) {
  ASSERT_OK_AND_ASSIGN(TableMetadata m, TableMetadata::Parse(kForeignMetadata));
  // Snapshot 22 (Spark's) carries no ledger: 11's is the table's.
  ASSERT_OK_AND_ASSIGN(auto newest, NewestWeirCommit(m));
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->snapshot->snapshot_id, 11);
  EXPECT_EQ(newest->commit_id, "c-1");
  EXPECT_EQ(newest->ledger, (OffsetLedger{{"orders", {{0, 10}, {1, 20}}}}));

  Snapshot next = NewSnapshot(33, 22, 3);
  OffsetLedger ledger = newest->ledger;
  ledger["orders"][1] = 25;
  ledger["dotted.topic"][0] = 7;
  WriteLedger("c-2", ledger, next.summary);
  EXPECT_EQ(next.summary["weir.offsets.orders"], R"({"0":10,"1":25})");
  ASSERT_OK(m.AddSnapshot(next, kMainBranch, 5));
  ASSERT_OK_AND_ASSIGN(newest, NewestWeirCommit(m));
  EXPECT_EQ(newest->commit_id, "c-2");
  EXPECT_EQ(newest->ledger, ledger);
  EXPECT_EQ(FindCommit(m, "c-1")->snapshot_id, 11);
  EXPECT_EQ(FindCommit(m, "c-2")->snapshot_id, 33);
  EXPECT_EQ(FindCommit(m, "c-3"), nullptr);
  // The tag's history does not contain c-2.
  EXPECT_EQ(FindCommit(m, "c-2", "audit"), nullptr);
}

TEST(IcebergLedger, RefusesAMalformedLedgerNamingTheKey) {
  Snapshot s = NewSnapshot(1, std::nullopt, 1);
  s.summary["weir.commit-id"] = "c";
  s.summary["weir.offsets.t"] = R"({"0": "x"})";
  const Status status = ReadLedger(s).status();
  EXPECT_NE(status.message().find("weir.offsets.t"), std::string::npos) << status.message();
  s.summary["weir.offsets.t"] = "[1]";
  EXPECT_FALSE(ReadLedger(s).ok());
}

}  // namespace
}  // namespace weir::lake::iceberg
