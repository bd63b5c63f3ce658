// Shared helpers of the WAL unit tests: batches of (id, team) rows, a scratch directory, and
// reading a Parquet file back.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

namespace weir::wal::testing {

// Rows with ids [first, first + count) and team `team`.
inline std::shared_ptr<arrow::RecordBatch> Rows(int64_t first, int64_t count,
                                                const std::string& team = "a") {
  arrow::Int64Builder ids;
  arrow::StringBuilder teams;
  for (int64_t i = 0; i < count; ++i) {
    EXPECT_TRUE(ids.Append(first + i).ok());
    EXPECT_TRUE(teams.Append(team).ok());
  }
  auto schema =
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("team", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, count, {*ids.Finish(), *teams.Finish()});
}

struct ReadBack {
  int64_t rows = 0;
  int row_groups = 0;
  std::vector<int64_t> ids;
  std::shared_ptr<const arrow::KeyValueMetadata> metadata;
};

inline ReadBack ReadParquet(const std::string& path) {
  ReadBack out;
  auto input = *arrow::io::ReadableFile::Open(path);
  auto reader = parquet::ParquetFileReader::Open(input);
  out.rows = reader->metadata()->num_rows();
  out.row_groups = reader->metadata()->num_row_groups();
  out.metadata = reader->metadata()->key_value_metadata();
  std::unique_ptr<parquet::arrow::FileReader> arrow_reader =
      *parquet::arrow::FileReader::Make(arrow::default_memory_pool(), std::move(reader));
  std::shared_ptr<arrow::Table> table = *arrow_reader->ReadTable();
  if (const auto column = table->GetColumnByName("id")) {
    for (const auto& chunk : column->chunks()) {
      const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
      for (int64_t i = 0; i < values.length(); ++i) out.ids.push_back(values.Value(i));
    }
  }
  return out;
}

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& what) {
    path_ = std::filesystem::temp_directory_path() /
            ("weir-wal-" + what + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::set<std::string> Names() const {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.insert(entry.path().filename().string());
    }
    return names;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace weir::wal::testing
