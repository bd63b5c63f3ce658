// The fixture the DatasetWriter and RoutedWriter tests share: a fake catalog in the test's own
// output directory and a dataset "events" on topic "t" with 3 commit attempts and millisecond
// backoffs.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

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

  std::filesystem::path dir_;
  std::unique_ptr<lake::testing::FakeCatalog> catalog_;
  DatasetConfig config_;
};

}  // namespace weir::ingest
