// The fixture the DatasetWriter and RoutedWriter tests share: a fake catalog in the test's own
// output directory and a dataset "events" on topic "t" with 3 commit attempts and millisecond
// backoffs.
#pragma once

#include <algorithm>
#include <chrono>
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

#include "harness_env.h"
#include "ingest/dataset_writer.h"
#include "lake/testing/fake_table.h"

namespace weir::ingest {

class WriterFixture : public ::testing::Test {
 protected:
  // `prefix` names the test binary's part of the output directory.
  void SetUpWriter(const std::string& prefix) {
    dir_ = testing::TestOutputDir(prefix +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    catalog_ = std::make_unique<lake::testing::FakeCatalog>(dir_.string());
    config_.name = "events";
    config_.topic = "t";
    config_.table = "events";
    config_.commit_max_attempts = 3;
    config_.backoff =
        BackoffPolicy{.initial = std::chrono::milliseconds(1), .cap = std::chrono::milliseconds(4)};
  }

  lake::testing::FakeTableState& events() { return catalog_->state("main.events"); }

  // Parquet files on disk under the lake directory.
  std::set<std::string> FilesOnDisk() const {
    std::set<std::string> out;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
      if (entry.path().extension() == ".parquet") out.insert(entry.path().string());
    }
    return out;
  }

  // The files the landed snapshots of main.events reference.
  std::set<std::string> FilesLanded() {
    std::set<std::string> out;
    for (const auto& snapshot : events().snapshots) {
      for (const auto& file : snapshot.files) out.insert(file.info.path);
    }
    return out;
  }

  // The int64 `column` of every file `state`'s landed snapshots reference, in landing order.
  static std::vector<int64_t> LandedInt64s(const lake::testing::FakeTableState& state,
                                           const std::string& column) {
    std::vector<int64_t> out;
    for (const auto& snapshot : state.snapshots) {
      for (const auto& file : snapshot.files) {
        auto input = arrow::io::ReadableFile::Open(file.info.path).ValueOrDie();
        auto reader = parquet::arrow::OpenFile(input, arrow::default_memory_pool()).ValueOrDie();
        const auto table = reader->ReadTable().ValueOrDie();
        for (const auto& chunk : table->GetColumnByName(column)->chunks()) {
          const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
          for (int64_t i = 0; i < values.length(); ++i) out.push_back(values.Value(i));
        }
      }
    }
    return out;
  }
  static std::vector<int64_t> Sorted(std::vector<int64_t> values) {
    std::sort(values.begin(), values.end());
    return values;
  }

  std::filesystem::path dir_;
  std::unique_ptr<lake::testing::FakeCatalog> catalog_;
  DatasetConfig config_;
};

}  // namespace weir::ingest
