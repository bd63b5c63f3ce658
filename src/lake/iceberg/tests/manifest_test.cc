#include <filesystem>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "assert_status.h"
#include "lake/iceberg/avro_file.h"
#include "lake/iceberg/binary_value.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/manifest_avro.h"

namespace weir::lake::iceberg {
namespace {

class IcebergManifest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iceberg_manifest_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    io_.fs = std::make_shared<arrow::fs::LocalFileSystem>();
    schema_ = Schema(3, {NestedField{1, "id", false, Type::Primitive(TypeId::kLong), {}},
                         NestedField{2, "name", false, Type::Primitive(TypeId::kString), {}},
                         NestedField{3, "ts", false, Type::Primitive(TypeId::kTimestampTz), {}},
                         NestedField{4, "price", false, Type::Decimal(12, 2), {}}});
    spec_.spec_id = 2;
    spec_.fields = {{3, 1000, "ts_day", *Transform::Parse("day")},
                    {1, 1001, "id_bucket", *Transform::Parse("bucket[4]")},
                    {2, 1002, "name_trunc", *Transform::Parse("truncate[2]")},
                    {4, 1003, "price", Transform::Identity()}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  DataFile File(int i, Value day, Value name) {
    DataFile f;
    f.file_path = (dir_ / ("data/f" + std::to_string(i) + ".parquet")).string();
    f.partition = {std::move(day), int32_t{i % 4}, std::move(name), DecimalValue{-12345 + i}};
    f.record_count = 10 + i;
    f.file_size_in_bytes = 1000 + i;
    f.column_sizes = {{1, 80}, {2, 90}};
    f.value_counts = {{1, 10 + i}, {2, 10 + i}};
    f.null_value_counts = {{1, 0}, {2, 3}};
    f.nan_value_counts = {};
    f.lower_bounds = {{1, *ToBinary(int64_t{i}, Type::Primitive(TypeId::kLong))}};
    f.upper_bounds = {{1, *ToBinary(int64_t{i + 9}, Type::Primitive(TypeId::kLong))}};
    f.split_offsets = {4};
    f.sort_order_id = 0;
    return f;
  }

  std::filesystem::path dir_;
  TableIo io_;
  Schema schema_;
  PartitionSpec spec_;
};

TEST_F(IcebergManifest, WritesEntriesAndReadsThemBackWithInheritance) {
  std::vector<ManifestEntry> entries;
  entries.push_back({EntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt,
                     File(1, int32_t{20000}, std::string("ab"))});
  entries.push_back({EntryStatus::kExisting, 77, 3, 4, File(2, int32_t{19999}, Value())});
  entries.push_back({EntryStatus::kDeleted, 78, 2, 2, File(3, int32_t{20005}, std::string("zz"))});
  const std::string uri = (dir_ / "metadata/m1.avro").string();
  ASSERT_OK_AND_ASSIGN(const ManifestFile m,
                       WriteManifest(io_, uri, {&schema_, &spec_, 99, 5}, entries));
  EXPECT_EQ(m.manifest_length, static_cast<int64_t>(std::filesystem::file_size(uri)));
  EXPECT_EQ(m.partition_spec_id, 2);
  EXPECT_EQ(m.added_snapshot_id, 99);
  EXPECT_EQ(m.sequence_number, 5);
  EXPECT_EQ(m.min_sequence_number, 3);  // the existing entry's; the deleted one is not live
  EXPECT_EQ(m.added_files_count, 1);
  EXPECT_EQ(m.existing_files_count, 1);
  EXPECT_EQ(m.deleted_files_count, 1);
  EXPECT_EQ(m.added_rows_count, 11);
  EXPECT_EQ(m.existing_rows_count, 12);
  EXPECT_EQ(m.deleted_rows_count, 13);
  ASSERT_EQ(m.partitions.size(), 4u);
  EXPECT_FALSE(m.partitions[0].contains_null);
  EXPECT_EQ(*FromBinary(*m.partitions[0].lower_bound, Type::Primitive(TypeId::kDate)),
            Value(int32_t{19999}));
  EXPECT_EQ(*FromBinary(*m.partitions[0].upper_bound, Type::Primitive(TypeId::kDate)),
            Value(int32_t{20005}));
  EXPECT_TRUE(m.partitions[2].contains_null);
  EXPECT_EQ(*m.partitions[2].lower_bound, "ab");
  EXPECT_EQ(*m.partitions[2].upper_bound, "zz");
  EXPECT_FALSE(m.partitions[2].contains_nan.has_value());  // only float partitions carry it

  ASSERT_OK_AND_ASSIGN(const auto partition_type, PartitionType(spec_, schema_));
  ASSERT_OK_AND_ASSIGN(const std::vector<ManifestEntry> back, ReadManifest(io_, m, partition_type));
  ASSERT_EQ(back.size(), 3u);
  // The added entry inherits the snapshot id and both sequence numbers from the list entry.
  EXPECT_EQ(back[0].snapshot_id, 99);
  EXPECT_EQ(back[0].sequence_number, 5);
  EXPECT_EQ(back[0].file_sequence_number, 5);
  EXPECT_EQ(back[1].snapshot_id, 77);
  EXPECT_EQ(back[1].sequence_number, 3);
  EXPECT_EQ(back[1].file_sequence_number, 4);
  EXPECT_EQ(back[2].status, EntryStatus::kDeleted);
  for (size_t i = 0; i < 3; ++i) {
    const DataFile& want = entries[i].data_file;
    const DataFile& got = back[i].data_file;
    EXPECT_EQ(got.file_path, want.file_path);
    EXPECT_EQ(got.file_format, "PARQUET");
    EXPECT_EQ(got.partition, want.partition);
    EXPECT_EQ(got.record_count, want.record_count);
    EXPECT_EQ(got.file_size_in_bytes, want.file_size_in_bytes);
    EXPECT_EQ(got.column_sizes, want.column_sizes);
    EXPECT_EQ(got.value_counts, want.value_counts);
    EXPECT_EQ(got.null_value_counts, want.null_value_counts);
    EXPECT_EQ(got.lower_bounds, want.lower_bounds);
    EXPECT_EQ(got.upper_bounds, want.upper_bounds);
    EXPECT_EQ(got.split_offsets, want.split_offsets);
    EXPECT_EQ(got.sort_order_id, 0);
  }
}

TEST_F(IcebergManifest, DeletionVectorEntriesOfAFormat3DeleteManifestRoundTrip) {
  DataFile dv = File(1, int32_t{20000}, std::string("ab"));
  dv.content = FileContent::kPositionDeletes;
  dv.file_format = "PUFFIN";
  dv.file_path = (dir_ / "data/d1.puffin").string();
  dv.record_count = 3;  // the vector's cardinality
  dv.column_sizes = dv.value_counts = dv.null_value_counts = {};
  dv.lower_bounds = dv.upper_bounds = {};
  dv.split_offsets = {};
  dv.sort_order_id = std::nullopt;
  dv.referenced_data_file = (dir_ / "data/f1.parquet").string();
  dv.content_offset = 4;
  dv.content_size_in_bytes = 44;
  const std::string uri = (dir_ / "metadata/d1.avro").string();
  ASSERT_OK_AND_ASSIGN(
      const ManifestFile m,
      WriteManifest(io_, uri, {&schema_, &spec_, 99, 5, 3, ManifestContent::kDeletes},
                    {{EntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt, dv}}));
  EXPECT_EQ(m.content, ManifestContent::kDeletes);
  ASSERT_OK_AND_ASSIGN(const auto partition_type, PartitionType(spec_, schema_));
  ASSERT_OK_AND_ASSIGN(const std::vector<ManifestEntry> back, ReadManifest(io_, m, partition_type));
  ASSERT_EQ(back.size(), 1u);
  const DataFile& got = back[0].data_file;
  EXPECT_EQ(got.content, FileContent::kPositionDeletes);
  EXPECT_EQ(got.file_format, "PUFFIN");
  EXPECT_EQ(got.record_count, 3);
  EXPECT_EQ(got.referenced_data_file, dv.referenced_data_file);
  EXPECT_EQ(got.content_offset, 4);
  EXPECT_EQ(got.content_size_in_bytes, 44);
  EXPECT_FALSE(got.first_row_id.has_value());  // row ids are for data files

  // A data file of a format 3 manifest carries neither.
  ASSERT_OK_AND_ASSIGN(
      const ManifestFile data,
      WriteManifest(io_, (dir_ / "metadata/m3.avro").string(), {&schema_, &spec_, 99, 5, 3},
                    {{EntryStatus::kAdded, std::nullopt, std::nullopt, std::nullopt,
                      File(2, int32_t{20000}, std::string("ab"))}}));
  ASSERT_OK_AND_ASSIGN(const auto data_back, ReadManifest(io_, data, partition_type));
  ASSERT_EQ(data_back.size(), 1u);
  EXPECT_FALSE(data_back[0].data_file.content_offset.has_value());
  EXPECT_FALSE(data_back[0].data_file.content_size_in_bytes.has_value());
}

TEST_F(IcebergManifest, CarriesTheSpecsSchemasAndMetadataInTheAvroHeader) {
  const std::string uri = (dir_ / "metadata/m2.avro").string();
  ASSERT_OK(WriteManifest(io_, uri, {&schema_, &spec_, 1, 1},
                          {{EntryStatus::kAdded, {}, {}, {}, File(1, Value(), Value())}})
                .status());
  ASSERT_OK_AND_ASSIGN(const std::string bytes, ReadWholeFile(*io_.fs, uri));
  // The header is not compressed: its keys and the schema with field ids are there verbatim.
  for (const std::string needle :
       {"\"field-id\":102", "\"field-id\":1003", "\"name\":\"r102\"", "partition-spec-id",
        "format-version", "\"logicalType\":\"decimal\"", "\"logicalType\":\"date\"", "avro.codec",
        "deflate"}) {
    EXPECT_NE(bytes.find(needle), std::string::npos) << needle;
  }
  EXPECT_NE(bytes.find(schema_.ToJson().dump()), std::string::npos);
  EXPECT_NE(bytes.find(spec_.FieldsJson().dump()), std::string::npos);
}

TEST_F(IcebergManifest, ManifestListsRoundTrip) {
  ManifestFile a;
  a.manifest_path = "/t/metadata/a.avro";
  a.manifest_length = 4242;
  a.partition_spec_id = 2;
  a.sequence_number = 7;
  a.min_sequence_number = 3;
  a.added_snapshot_id = 123456789012345;
  a.added_files_count = 1;
  a.existing_files_count = 2;
  a.deleted_files_count = 0;
  a.added_rows_count = 10;
  a.existing_rows_count = 20;
  a.partitions = {{true, std::nullopt, std::string("\x01\0\0\0", 4), std::string("\x09\0\0\0", 4)},
                  {false, false, std::nullopt, std::nullopt}};
  ManifestFile b = a;
  b.manifest_path = "/t/metadata/b.avro";
  b.partitions.clear();
  const std::string uri = (dir_ / "metadata/snap-1.avro").string();
  ASSERT_OK_AND_ASSIGN(const int64_t length, WriteManifestList(io_, uri, {1, 0, 7}, {a, b}));
  EXPECT_EQ(length, static_cast<int64_t>(std::filesystem::file_size(uri)));
  ASSERT_OK_AND_ASSIGN(const std::vector<ManifestFile> back, ReadManifestList(io_, uri));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].manifest_path, a.manifest_path);
  EXPECT_EQ(back[0].manifest_length, 4242);
  EXPECT_EQ(back[0].partition_spec_id, 2);
  EXPECT_EQ(back[0].sequence_number, 7);
  EXPECT_EQ(back[0].min_sequence_number, 3);
  EXPECT_EQ(back[0].added_snapshot_id, 123456789012345);
  EXPECT_EQ(back[0].existing_files_count, 2);
  EXPECT_EQ(back[0].existing_rows_count, 20);
  ASSERT_EQ(back[0].partitions.size(), 2u);
  EXPECT_TRUE(back[0].partitions[0].contains_null);
  EXPECT_EQ(back[0].partitions[0].upper_bound, a.partitions[0].upper_bound);
  EXPECT_EQ(back[0].partitions[1].contains_nan, false);
  EXPECT_FALSE(back[0].partitions[1].lower_bound.has_value());
  EXPECT_TRUE(back[1].partitions.empty());
}

TEST_F(IcebergManifest, RefusesFilesThatAreNotAvro) {
  const std::string uri = (dir_ / "metadata/bad.avro").string();
  ASSERT_OK(WriteWholeFile(*io_.fs, uri, "not avro at all"));
  EXPECT_FALSE(ReadManifestList(io_, uri).ok());
  ASSERT_OK(WriteWholeFile(*io_.fs, uri, std::string("Obj\x01\x02garbage", 12)));
  EXPECT_FALSE(ReadManifestList(io_, uri).ok());
}

TEST(IcebergAvroNames, AreMadeCompatibleAsJavaDoes) {
  EXPECT_EQ(AvroCompatibleName("ts_day"), "ts_day");
  EXPECT_EQ(AvroCompatibleName("ts-day"), "ts_x2Dday");
  EXPECT_EQ(AvroCompatibleName("1st"), "_1st");
  EXPECT_EQ(AvroCompatibleName(""), "_");
}

TEST_F(IcebergManifest, PartitionFieldsWithAnyNameRoundTrip) {
  spec_.fields[0].name = "ts-day";
  spec_.fields[1].name = "9 buckets";
  const std::string uri = (dir_ / "metadata/names.avro").string();
  ASSERT_OK_AND_ASSIGN(
      const ManifestFile m,
      WriteManifest(io_, uri, {&schema_, &spec_, 1, 1},
                    {{EntryStatus::kAdded, {}, {}, {}, File(2, int32_t{5}, std::string("ab"))}}));
  ASSERT_OK_AND_ASSIGN(const auto type, PartitionType(spec_, schema_));
  ASSERT_OK_AND_ASSIGN(const auto back, ReadManifest(io_, m, type));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].data_file.partition[0], Value(int32_t{5}));
  EXPECT_EQ(back[0].data_file.partition[1], Value(int32_t{2}));
  // Read with a spec of another arity: refused, not misread.
  auto shorter = type;
  shorter.pop_back();
  EXPECT_FALSE(ReadManifest(io_, m, shorter).ok());
}

TEST(IcebergTableIo, MapsLocationsToPathsVerbatim) {
  const TableIo io{std::make_shared<arrow::fs::LocalFileSystem>()};
  EXPECT_EQ(*io.PathOf("s3://b/t/data/name=h%C3%A9/f.parquet"), "b/t/data/name=h%C3%A9/f.parquet");
  EXPECT_EQ(*io.PathOf("abfss://c@acct.dfs.core.windows.net/t/f"), "c/t/f");
  EXPECT_EQ(*io.PathOf("file:///tmp/t/f"), "/tmp/t/f");
  EXPECT_EQ(*io.PathOf("file:/tmp/t/f"), "/tmp/t/f");
  EXPECT_EQ(*io.PathOf("/tmp/t/a%20b"), "/tmp/t/a%20b");
  EXPECT_FALSE(io.PathOf("ftp://host/f").ok());
}

}  // namespace
}  // namespace weir::lake::iceberg
