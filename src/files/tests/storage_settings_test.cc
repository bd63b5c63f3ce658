#include "files/storage_settings.h"

#include <gtest/gtest.h>

#include "files/object_store.h"

namespace weir::files {
namespace {

TEST(StorageSettingsTest, TheSchemeNamesTheStore) {
  EXPECT_EQ(*StorageKindOf("/var/lake"), StorageKind::kLocal);
  EXPECT_EQ(*StorageKindOf("relative/dir"), StorageKind::kLocal);
  EXPECT_EQ(*StorageKindOf("file:///var/lake"), StorageKind::kLocal);
  EXPECT_EQ(*StorageKindOf("s3://bucket/p"), StorageKind::kS3);
  for (const char* azure : {"abfss://c/p", "abfs://c/p", "wasbs://c@a.blob.core.windows.net/p",
                            "wasb://c/p", "az://c/p", "azure://c/p"}) {
    EXPECT_EQ(*StorageKindOf(azure), StorageKind::kAzure) << azure;
  }
  const auto gcs = StorageKindOf("gs://bucket/p");
  ASSERT_FALSE(gcs.ok());
  EXPECT_NE(gcs.status().message().find("scheme gs is not supported"), std::string::npos);
}

TEST(StorageSettingsTest, AzureLocationsInBothFormsGiveContainerAccountAndPath) {
  auto long_form = ParseAzureLocation("abfss://lake@acct.dfs.core.windows.net/wh/t");
  ASSERT_TRUE(long_form.ok());
  EXPECT_EQ(long_form->container, "lake");
  EXPECT_EQ(long_form->account, "acct");
  EXPECT_EQ(long_form->path, "wh/t");
  auto short_form = ParseAzureLocation("az://lake/wh/t/");
  ASSERT_TRUE(short_form.ok());
  EXPECT_EQ(short_form->container, "lake");
  EXPECT_EQ(short_form->account, "");
  EXPECT_EQ(short_form->path, "wh/t/");
  EXPECT_FALSE(ParseAzureLocation("abfss:///wh").ok());
  EXPECT_FALSE(ParseAzureLocation("abfss://@acct.dfs.core.windows.net/wh").ok());

  AzureSettings settings;
  EXPECT_EQ(AzureAccountOf(settings, "abfss://lake@acct.dfs.core.windows.net/wh"), "acct");
  settings.account_name = "configured";
  EXPECT_EQ(AzureAccountOf(settings, "abfss://lake@acct.dfs.core.windows.net/wh"), "configured");
}

TEST(StorageSettingsTest, AnEmulatorEndpointGivesHostAndScheme) {
  AzureSettings azure;
  EXPECT_EQ(ResolveAzureEndpoint(azure).host, "");
  EXPECT_EQ(ResolveAzureEndpoint(azure).scheme, "https");
  azure.endpoint = "http://127.0.0.1:10000/";
  EXPECT_EQ(ResolveAzureEndpoint(azure).host, "127.0.0.1:10000");
  EXPECT_EQ(ResolveAzureEndpoint(azure).scheme, "http");
}

TEST(StorageSettingsTest, AnAzureStoreMapsLocationsToContainerPaths) {
  StorageAccess access;
  access.azure.account_name = "devstoreaccount1";
  access.azure.account_key = "a2V5";  // base64 of "key"; nothing is contacted
  access.azure.endpoint = "http://127.0.0.1:1";
  auto store = ObjectStore::Locate("abfss://lake/wh", access);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->kind(), StorageKind::kAzure);
  EXPECT_FALSE(store->local());
  EXPECT_EQ(store->uri(), "abfss://lake/wh/");
  EXPECT_EQ(*store->PathOfUri("abfss://lake/wh/main/t/data/x.parquet"),
            "lake/wh/main/t/data/x.parquet");
  EXPECT_EQ(*store->PathOfUri("abfss://lake@devstoreaccount1.dfs.core.windows.net/other"),
            "lake/other");
  EXPECT_FALSE(store->PathOfUri("s3://bucket/x").ok());

  // Without an account anywhere the store names the setting.
  access.azure.account_name.clear();
  auto nameless = ObjectStore::Locate("az://lake/wh", access);
  ASSERT_FALSE(nameless.ok());
  EXPECT_NE(nameless.status().message().find("storage.azure_account_name"), std::string::npos);
  // ... and one named in the location is enough.
  EXPECT_TRUE(ObjectStore::Locate("abfss://lake@acct.dfs.core.windows.net/wh", access).ok());
}

}  // namespace
}  // namespace weir::files
