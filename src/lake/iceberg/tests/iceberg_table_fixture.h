// The fixture of the Iceberg table layer's tests: a temporary SQLite catalog, a table spec, and
// batches of rows written as one file per partition group.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include "files/parquet_file_writer.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "lake/iceberg/iceberg_table.h"

namespace weir::lake {

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

}  // namespace weir::lake
