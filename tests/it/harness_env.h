// Connection settings of the harness components (tests/harness), passed to `it` tests in
// WEIR_TEST_* environment variables by `tests/harness/run -- ctest ...`.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace weir::testing {

// The value of a WEIR_TEST_* variable; an absent one fails the test (never skips it), saying
// how to provide it.
#define WEIR_HARNESS_SETTING(var, name)                                              \
  const char* var##_raw = std::getenv(name);                                         \
  ASSERT_NE(var##_raw, nullptr) << name << " is not set: run this test through "     \
                                << "scripts/test or tests/harness/run -- ctest ..."; \
  const std::string var(var##_raw)

// A fresh directory for one test's files: under WEIR_TEST_OUTPUT_DIR when set (so a later
// step can read them), else under the system temporary directory.
inline std::filesystem::path TestOutputDir(const std::string& name) {
  const char* base = std::getenv("WEIR_TEST_OUTPUT_DIR");
  std::filesystem::path dir = base != nullptr ? std::filesystem::path(base)
                                              : std::filesystem::temp_directory_path() / "weir-it";
  dir /= name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A name unique to this process, for topics, tables and buckets shared across test runs.
inline std::string UniqueName(const std::string& prefix) {
  return prefix + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000);
}

}  // namespace weir::testing
