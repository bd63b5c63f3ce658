#include "lake/duckdb_s3.h"

#include <stdlib.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lake/duckdb_engine.h"

namespace weir::lake {
namespace {

files::S3Settings Moto() {
  files::S3Settings s3;
  s3.access_key_id = "AKIA'X";  // a quote, to see it doubled
  s3.secret_access_key = "s3cr3t";
  s3.region = "us-east-1";
  s3.endpoint = "http://127.0.0.1:9000";
  s3.use_ssl = true;  // the endpoint's scheme decides
  return s3;
}

TEST(DuckDbS3Test, KeysGoIntoTheSecretAndTheEndpointDecidesSchemeAndStyle) {
  EXPECT_EQ(CreateS3SecretSql("weir_s3", Moto()),
            "CREATE SECRET \"weir_s3\" (TYPE s3, KEY_ID 'AKIA''X', SECRET 's3cr3t', "
            "REGION 'us-east-1', ENDPOINT '127.0.0.1:9000', USE_SSL false, URL_STYLE 'path')");
  EXPECT_EQ(S3Extensions(Moto()), std::vector<std::string>{"httpfs"});
}

TEST(DuckDbS3Test, EmptyKeysMeanTheDefaultCredentialChain) {
  files::S3Settings s3;
  s3.region = "eu-west-1";
  EXPECT_EQ(CreateS3SecretSql("weir_lake_s3", s3),
            "CREATE SECRET \"weir_lake_s3\" (TYPE s3, PROVIDER credential_chain, "
            "REGION 'eu-west-1', USE_SSL true, URL_STYLE 'vhost')");
  EXPECT_EQ(S3Extensions(s3), (std::vector<std::string>{"httpfs", "aws"}));
  s3.path_style = true;
  s3.endpoint = "https://minio.internal:9000";
  s3.use_ssl = false;
  EXPECT_EQ(CreateS3SecretSql("s", s3),
            "CREATE SECRET \"s\" (TYPE s3, PROVIDER credential_chain, REGION 'eu-west-1', "
            "ENDPOINT 'minio.internal:9000', USE_SSL true, URL_STYLE 'path')");
}

TEST(DuckDbAzureTest, AKeyGoesIntoAConnectionStringWithTheEmulatorsEndpoints) {
  files::AzureSettings azure;
  azure.account_key = "k'ey";
  azure.endpoint = "http://127.0.0.1:10000";
  EXPECT_EQ(CreateAzureSecretSql("weir_azure", azure, "devstoreaccount1"),
            "CREATE SECRET \"weir_azure\" (TYPE azure, CONNECTION_STRING "
            "'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=k''ey;"
            "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"
            "DfsEndpoint=http://127.0.0.1:10000/devstoreaccount1;')");
  azure.endpoint.clear();
  EXPECT_EQ(CreateAzureSecretSql("a", azure, "acct"),
            "CREATE SECRET \"a\" (TYPE azure, CONNECTION_STRING "
            "'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=k''ey;')");
  azure.account_key.clear();
  EXPECT_EQ(CreateAzureSecretSql("a", azure, "acct"),
            "CREATE SECRET \"a\" (TYPE azure, PROVIDER credential_chain, ACCOUNT_NAME 'acct')");
}

// The statements run in DuckDB 1.5 with the build's extensions, and the secret is what they say.
class DuckDbS3SecretTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DuckDbOptions options;
    options.extension_directory = DefaultExtensionDirectory();
    auto opened = DuckDbEngine::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    engine_ = std::move(*opened);
  }
  Status Create(const files::S3Settings& s3) {
    for (const auto& extension : S3Extensions(s3))
      WEIR_RETURN_NOT_OK(engine_->Run("LOAD " + extension));
    return engine_->Run(CreateS3SecretSql("weir_s3", s3));
  }
  std::vector<std::optional<std::string>> Secret() {
    auto rows = engine_->Query(
        "SELECT name, type, provider, scope::VARCHAR FROM duckdb_secrets() WHERE name = 'weir_s3'");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows->size(), 1u);
    return rows->empty() ? std::vector<std::optional<std::string>>{} : rows->front();
  }
  std::unique_ptr<DuckDbEngine> engine_;
};

TEST_F(DuckDbS3SecretTest, WithKeysTheProviderIsConfig) {
  ASSERT_TRUE(Create(Moto()).ok());
  const auto secret = Secret();
  ASSERT_EQ(secret.size(), 4u);
  EXPECT_EQ(secret[1], "s3");
  EXPECT_EQ(secret[2], "config");
}

TEST_F(DuckDbS3SecretTest, WithoutKeysTheChainFindsTheEnvironmentsCredentials) {
  setenv("AWS_ACCESS_KEY_ID", "from-the-environment", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "chain-secret", 1);
  files::S3Settings s3 = Moto();
  s3.access_key_id.clear();
  s3.secret_access_key.clear();
  const Status created = Create(s3);
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  ASSERT_TRUE(created.ok()) << created.ToString();
  const auto secret = Secret();
  ASSERT_EQ(secret.size(), 4u);
  EXPECT_EQ(secret[2], "credential_chain");
  // The key the chain found is the environment's (DuckDB shows key ids unredacted).
  auto key = engine_->Query(
      "SELECT secret_string LIKE '%key_id=from-the-environment%' FROM duckdb_secrets() "
      "WHERE name = 'weir_s3'");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  EXPECT_EQ(key->at(0).at(0), "true");
}

}  // namespace
}  // namespace weir::lake
