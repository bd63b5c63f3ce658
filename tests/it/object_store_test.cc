// Arrow's object-store filesystems against the harness emulators: S3 (moto) and Azure Blob
// (azurite). Write objects, read them back byte for byte, list, delete.
#include <arrow/buffer.h>
#include <arrow/filesystem/azurefs.h>
#include <arrow/filesystem/s3fs.h>
#include <arrow/io/interfaces.h>

#include <random>
#include <string>

#include <gtest/gtest.h>

#include "harness_env.h"

namespace weir {
namespace {

std::string RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xFF);
  return bytes;
}

// Writes two objects under `root`, reads them back, lists and deletes them.
void ExerciseFilesystem(arrow::fs::FileSystem& fs, const std::string& root) {
  const std::string big = RandomBytes(3 * 1024 * 1024 + 17, 11);  // several upload parts
  const std::string small = "{\"weir\":\"marker\"}\n";
  const std::string big_path = root + "/data/part-0.parquet";
  const std::string small_path = root + "/_weir_marker";

  for (const auto& [path, content] : {std::pair{big_path, big}, std::pair{small_path, small}}) {
    auto out = fs.OpenOutputStream(path);
    ASSERT_TRUE(out.ok()) << path << ": " << out.status().ToString();
    ASSERT_TRUE((*out)->Write(content.data(), static_cast<int64_t>(content.size())).ok());
    ASSERT_TRUE((*out)->Close().ok());
  }
  for (const auto& [path, content] : {std::pair{big_path, big}, std::pair{small_path, small}}) {
    auto info = fs.GetFileInfo(path);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->type(), arrow::fs::FileType::File);
    EXPECT_EQ(info->size(), static_cast<int64_t>(content.size()));
    auto in = fs.OpenInputFile(path);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    auto buffer = (*in)->ReadAt(0, static_cast<int64_t>(content.size()));
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    EXPECT_TRUE((*buffer)->ToString() == content) << path << " differs";
  }

  arrow::fs::FileSelector selector;
  selector.base_dir = root;
  selector.recursive = true;
  auto listed = fs.GetFileInfo(selector);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  int files = 0;
  for (const auto& info : *listed) files += info.type() == arrow::fs::FileType::File;
  EXPECT_EQ(files, 2);

  ASSERT_TRUE(fs.DeleteFile(small_path).ok());
  auto gone = fs.GetFileInfo(small_path);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->type(), arrow::fs::FileType::NotFound);
}

TEST(ObjectStoreTest, S3InMoto) {
  WEIR_HARNESS_SETTING(endpoint, "WEIR_TEST_S3_ENDPOINT");
  WEIR_HARNESS_SETTING(access_key, "WEIR_TEST_S3_ACCESS_KEY");
  WEIR_HARNESS_SETTING(secret_key, "WEIR_TEST_S3_SECRET_KEY");
  WEIR_HARNESS_SETTING(region, "WEIR_TEST_S3_REGION");

  ASSERT_TRUE(arrow::fs::EnsureS3Initialized().ok());
  {
    auto options = arrow::fs::S3Options::FromAccessKey(access_key, secret_key);
    options.endpoint_override = endpoint;
    options.scheme = "http";
    options.region = region;
    options.force_virtual_addressing = false;
    options.allow_bucket_creation = true;
    auto fs = arrow::fs::S3FileSystem::Make(options);
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    const std::string bucket = testing::UniqueName("weir-it");
    ASSERT_TRUE((*fs)->CreateDir(bucket).ok());
    ExerciseFilesystem(**fs, bucket + "/lake");
  }
  ASSERT_TRUE(arrow::fs::FinalizeS3().ok());
}

TEST(ObjectStoreTest, AzureBlobInAzurite) {
  WEIR_HARNESS_SETTING(authority, "WEIR_TEST_AZURE_BLOB_AUTHORITY");
  WEIR_HARNESS_SETTING(account, "WEIR_TEST_AZURE_ACCOUNT");
  WEIR_HARNESS_SETTING(key, "WEIR_TEST_AZURE_KEY");

  arrow::fs::AzureOptions options;
  options.account_name = account;
  options.blob_storage_authority = authority;  // host:port: the account follows in the path
  options.dfs_storage_authority = authority;
  options.blob_storage_scheme = "http";
  options.dfs_storage_scheme = "http";
  ASSERT_TRUE(options.ConfigureAccountKeyCredential(key).ok());
  auto fs = arrow::fs::AzureFileSystem::Make(options);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  const std::string container = testing::UniqueName("weir-it");
  ASSERT_TRUE((*fs)->CreateDir(container).ok());
  ExerciseFilesystem(**fs, container + "/lake");
}

}  // namespace
}  // namespace weir
