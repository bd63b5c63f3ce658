#include "files/object_store.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <arrow/filesystem/localfs.h>
#include <gtest/gtest.h>

namespace weir::files {
namespace {

namespace stdfs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (stdfs::temp_directory_path() / "weir-store-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { stdfs::remove_all(path_); }
  const stdfs::path& path() const { return path_; }

 private:
  stdfs::path path_;
};

// A local file system whose reads, and optionally deletes, fail: a probe that fails halfway,
// after its marker was written.
class FailingFileSystem final : public arrow::fs::LocalFileSystem {
 public:
  explicit FailingFileSystem(bool deletes_fail) : deletes_fail_(deletes_fail) {}
  using arrow::fs::LocalFileSystem::OpenInputFile;
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(
      const std::string&) override {
    return arrow::Status::IOError("injected read failure");
  }
  arrow::Status DeleteFile(const std::string& path) override {
    if (deletes_fail_) return arrow::Status::IOError("injected delete failure");
    return arrow::fs::LocalFileSystem::DeleteFile(path);
  }

 private:
  bool deletes_fail_;
};

std::vector<std::string> Entries(const stdfs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : stdfs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(ObjectStoreTest, ProbeOfAWritableDirectoryLeavesNothingBehind) {
  TempDir dir;
  auto store = ObjectStore::Open(dir.path().string(), {});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const Status probed = store->Probe(".weir-probe-1");
  ASSERT_TRUE(probed.ok()) << probed.ToString();
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{});
}

TEST(ObjectStoreTest, ProbeThatFailsAfterWritingStillDeletesItsMarker) {
  TempDir dir;
  const ObjectStore store = ObjectStore::OnFileSystem(
      std::make_shared<FailingFileSystem>(/*deletes_fail=*/false), dir.path().string());
  const Status probed = store.Probe(".weir-probe-2");
  ASSERT_FALSE(probed.ok());
  EXPECT_EQ(probed.message(), "injected read failure");
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{});
}

TEST(ObjectStoreTest, ProbeNamesAMarkerItCouldNotDelete) {
  TempDir dir;
  const ObjectStore store = ObjectStore::OnFileSystem(
      std::make_shared<FailingFileSystem>(/*deletes_fail=*/true), dir.path().string());
  const Status probed = store.Probe(".weir-probe-3");
  ASSERT_FALSE(probed.ok());
  EXPECT_EQ(probed.message(), "injected read failure; and the marker " + store.uri() +
                                  ".weir-probe-3 could not be deleted: injected delete failure");
  EXPECT_EQ(Entries(dir.path()), std::vector<std::string>{".weir-probe-3"});
}

TEST(ObjectStoreTest, LocateCreatesNoDirectoryAndOpenDoes) {
  TempDir dir;
  const stdfs::path lake = dir.path() / "lake" / "data";
  auto located = ObjectStore::Locate(lake.string(), {});
  ASSERT_TRUE(located.ok()) << located.status().ToString();
  EXPECT_TRUE(located->local());
  EXPECT_EQ(located->uri(), lake.string() + "/");
  EXPECT_FALSE(stdfs::exists(dir.path() / "lake"));
  auto opened = ObjectStore::Open(lake.string(), {});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_TRUE(stdfs::is_directory(lake));
}

}  // namespace
}  // namespace weir::files
