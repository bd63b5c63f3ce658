// The snapshot builder tests' fixture: a table in a temporary directory, data files by commit
// number, and main's live entries read back.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

#include "lake/iceberg/snapshot_builder.h"

namespace weir::lake::iceberg {

class IcebergSnapshotBuilder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iceberg_snapshot_builder_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    io_.fs = std::make_shared<arrow::fs::LocalFileSystem>();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TableMetadata NewTableMetadata(std::map<std::string, std::string> properties = {},
                                 int format_version = 2) {
    NewTable table;
    table.format_version = format_version;
    table.location = dir_.string();
    table.schema = Schema(
        0, {NestedField{1, "id", false, Type::Primitive(TypeId::kLong), {}},
            NestedField{2, "_inserted_at", false, Type::Primitive(TypeId::kTimestampTz), {}}});
    table.partition_fields = {{2, 0, "_inserted_at_day", *Transform::Parse("day")}};
    table.properties = std::move(properties);
    table.table_uuid = "01890a5d-ac96-774b-bcce-b302099a8057";
    table.now_ms = 1;
    return *TableMetadata::Create(table);
  }

  DataFile File(int commit, int i) {
    DataFile f;
    f.file_path =
        (dir_ / "data" / ("c" + std::to_string(commit) + "-" + std::to_string(i) + ".parquet"))
            .string();
    f.partition = {int32_t{20000 + commit % 3}};
    f.record_count = commit + 1;
    f.file_size_in_bytes = 100;
    f.value_counts = {{1, commit + 1}};
    return f;
  }

  // Every live file of main's head, read back through the manifest list and the manifests.
  std::vector<ManifestEntry> LiveEntries(const TableMetadata& m) {
    std::vector<ManifestEntry> out;
    auto manifests = ReadManifestList(io_, m.RefSnapshot()->manifest_list);
    EXPECT_TRUE(manifests.ok()) << manifests.status().ToString();
    const auto type = *PartitionType(m.default_spec(), m.current_schema());
    for (const ManifestFile& manifest : *manifests) {
      auto entries = ReadManifest(io_, manifest, type);
      EXPECT_TRUE(entries.ok()) << entries.status().ToString();
      for (ManifestEntry& e : *entries) {
        if (e.status != EntryStatus::kDeleted) out.push_back(std::move(e));
      }
    }
    return out;
  }

  std::filesystem::path dir_;
  TableIo io_;
  std::mt19937_64 random_{42};
};

}  // namespace weir::lake::iceberg
