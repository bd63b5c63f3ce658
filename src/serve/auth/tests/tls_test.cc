#include "serve/auth/tls.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace weir::serve::auth {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-serve-auth-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    cert_ = (dir_ / "server.crt").string();
    key_ = (dir_ / "server.key").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string cert_;
  std::string key_;
};

TEST_F(TlsTest, GeneratesAKeyAndCertificateOnceWithPrivateKeyMode) {
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert_, key_, "weir-test").ok());
  EXPECT_EQ(ModeOf(key_), 0600u);
  EXPECT_EQ(ModeOf(cert_), 0644u);
  const std::string key_pem = ReadFile(key_);
  const std::string cert_pem = ReadFile(cert_);
  EXPECT_EQ(key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0), 0u);
  EXPECT_EQ(cert_pem.rfind("-----BEGIN CERTIFICATE-----", 0), 0u);
  // Only the two files: no temporary left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            2);

  ASSERT_TRUE(EnsureSelfSignedCertificate(cert_, key_, "other-name").ok());
  EXPECT_EQ(ReadFile(key_), key_pem);
  EXPECT_EQ(ReadFile(cert_), cert_pem);
}

TEST_F(TlsTest, ServerContextCarriesTheAskedNames) {
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert_, key_, "weir.example").ok());
  auto context = MakeServerContext(cert_, key_);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  X509* cert = SSL_CTX_get0_certificate(context->get());
  ASSERT_NE(cert, nullptr);

  char common_name[256] = {};
  ASSERT_GT(X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, common_name,
                                      sizeof(common_name)),
            0);
  EXPECT_STREQ(common_name, "weir.example");
  EXPECT_EQ(X509_NAME_cmp(X509_get_subject_name(cert), X509_get_issuer_name(cert)), 0);
  EXPECT_EQ(X509_get_version(cert), X509_VERSION_3);

  // subjectAltName: exactly DNS:localhost and IP:127.0.0.1.
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  ASSERT_NE(names, nullptr);
  ASSERT_EQ(sk_GENERAL_NAME_num(names), 2);
  EXPECT_EQ(sk_GENERAL_NAME_value(names, 0)->type, GEN_DNS);
  EXPECT_EQ(sk_GENERAL_NAME_value(names, 1)->type, GEN_IPADD);
  GENERAL_NAMES_free(names);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_NE(X509_check_host(cert, "example.com", 0, 0, nullptr), 1);

  // Valid now and for about ten years.
  EXPECT_LT(X509_cmp_current_time(X509_get0_notBefore(cert)), 0);
  EXPECT_GT(X509_cmp_current_time(X509_get0_notAfter(cert)), 0);
  int days = 0;
  int seconds = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert), X509_get0_notAfter(cert)),
            1);
  EXPECT_EQ(days, 3650);
  EXPECT_EQ(SSL_CTX_get_min_proto_version(context->get()), TLS1_2_VERSION);
}

// A client that trusts the generated certificate completes a handshake for "localhost".
TEST_F(TlsTest, ClientTrustingTheCertificateCompletesAHandshake) {
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert_, key_, "weir").ok());
  auto server_context = MakeServerContext(cert_, key_);
  ASSERT_TRUE(server_context.ok());

  SslContextPtr client_context(SSL_CTX_new(TLS_client_method()));
  ASSERT_NE(client_context, nullptr);
  ASSERT_EQ(SSL_CTX_load_verify_locations(client_context.get(), cert_.c_str(), nullptr), 1);
  SSL_CTX_set_verify(client_context.get(), SSL_VERIFY_PEER, nullptr);

  std::unique_ptr<SSL, decltype(&SSL_free)> server_ssl(SSL_new(server_context->get()), SSL_free);
  std::unique_ptr<SSL, decltype(&SSL_free)> client_ssl(SSL_new(client_context.get()), SSL_free);
  SSL* server = server_ssl.get();
  SSL* client = client_ssl.get();
  ASSERT_EQ(SSL_set1_host(client, "localhost"), 1);
  BIO* server_bio = nullptr;
  BIO* client_bio = nullptr;
  ASSERT_EQ(BIO_new_bio_pair(&server_bio, 0, &client_bio, 0), 1);
  SSL_set_bio(server, server_bio, server_bio);
  SSL_set_bio(client, client_bio, client_bio);
  SSL_set_accept_state(server);
  SSL_set_connect_state(client);

  bool server_done = false;
  bool client_done = false;
  for (int round = 0; round < 100 && !(server_done && client_done); ++round) {
    if (!client_done) {
      const int rc = SSL_do_handshake(client);
      client_done = rc == 1;
      if (rc <= 0) {
        ASSERT_EQ(SSL_get_error(client, rc), SSL_ERROR_WANT_READ);
      }
    }
    if (!server_done) {
      const int rc = SSL_do_handshake(server);
      server_done = rc == 1;
      if (rc <= 0) {
        ASSERT_EQ(SSL_get_error(server, rc), SSL_ERROR_WANT_READ);
      }
    }
  }
  EXPECT_TRUE(server_done && client_done);
  EXPECT_EQ(SSL_get_verify_result(client), X509_V_OK);
}

TEST_F(TlsTest, MismatchedKeyAndCertificateNameBothFiles) {
  const std::string other_cert = (dir_ / "other.crt").string();
  const std::string other_key = (dir_ / "other.key").string();
  ASSERT_TRUE(EnsureSelfSignedCertificate(cert_, key_, "one").ok());
  ASSERT_TRUE(EnsureSelfSignedCertificate(other_cert, other_key, "two").ok());
  auto context = MakeServerContext(cert_, other_key);
  ASSERT_FALSE(context.ok());
  const std::string message = context.status().message();
  EXPECT_NE(message.find(cert_), std::string::npos) << message;
  EXPECT_NE(message.find(other_key), std::string::npos) << message;
  const ErrorDetail* detail = GetErrorDetail(context.status());
  ASSERT_NE(detail, nullptr);
  EXPECT_EQ(detail->source(), "openssl");
  EXPECT_EQ(detail->error_class(), ErrorClass::kFatal);
  EXPECT_EQ(ERR_peek_error(), 0u);  // the queue was drained into the status
}

TEST_F(TlsTest, MissingOrGarbageFilesAreErrors) {
  EXPECT_FALSE(MakeServerContext(cert_, key_).ok());
  {
    std::ofstream(cert_) << "not a certificate\n";
    std::ofstream(key_) << "not a key\n";
  }
  auto context = MakeServerContext(cert_, key_);
  ASSERT_FALSE(context.ok());
  EXPECT_NE(context.status().message().find(cert_), std::string::npos);
}

TEST_F(TlsTest, OneFileWithoutTheOtherIsLeftAloneAndReported) {
  { std::ofstream(key_) << "operator's key\n"; }
  const Status status = EnsureSelfSignedCertificate(cert_, key_, "weir");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(key_), std::string::npos);
  EXPECT_NE(status.message().find(cert_), std::string::npos);
  EXPECT_EQ(ReadFile(key_), "operator's key\n");
  EXPECT_FALSE(std::filesystem::exists(cert_));
}

TEST_F(TlsTest, UnwritableDirectoryIsAnError) {
  const std::string cert = (dir_ / "missing" / "server.crt").string();
  const std::string key = (dir_ / "missing" / "server.key").string();
  const Status status = EnsureSelfSignedCertificate(cert, key, "weir");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(key), std::string::npos) << status.message();
}

}  // namespace
}  // namespace weir::serve::auth
