#include "serve/auth/scram.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <string>
#include <vector>

#include "serve/auth/base64.h"

namespace weir::serve::auth {
namespace {

// RFC 7677 section 3.
constexpr char kClientFirst[] = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr char kServerNonce[] = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr char kServerFirst[] =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr char kClientFinal[] =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr char kServerFinal[] = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

ScramServer::NonceSource FixedNonce(std::string nonce) {
  return [nonce]() -> Result<std::string> { return nonce; };
}

ScramVerifier Rfc7677Verifier() {
  auto salt = Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ==");
  EXPECT_TRUE(salt.ok());
  auto verifier = MakeVerifierWithSalt("pencil", *salt, 4096);
  EXPECT_TRUE(verifier.ok()) << verifier.status().ToString();
  return *verifier;
}

std::string CodeOf(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail == nullptr ? "" : detail->source() + "/" + detail->code();
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
  return std::string(reinterpret_cast<const char*>(out), length);
}

std::string Sha256(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<const char*>(out), sizeof(out));
}

std::string Xor(std::string a, std::string_view b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(a[i] ^ b[i]);
  return a;
}

TEST(ScramTest, Rfc7677Vector) {
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  auto server_first = server.HandleClientFirst(kClientFirst);
  ASSERT_TRUE(server_first.ok()) << server_first.status().ToString();
  EXPECT_EQ(*server_first, kServerFirst);
  EXPECT_FALSE(server.authenticated());
  auto server_final = server.HandleClientFinal(kClientFinal);
  ASSERT_TRUE(server_final.ok()) << server_final.status().ToString();
  EXPECT_EQ(*server_final, kServerFinal);
  EXPECT_TRUE(server.authenticated());
}

TEST(ScramTest, VerifierRoundTripsThroughPostgresText) {
  const ScramVerifier verifier = Rfc7677Verifier();
  const std::string text = ToString(verifier);
  EXPECT_EQ(text.rfind("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$", 0), 0u) << text;
  auto parsed = ParseVerifier(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, verifier);

  auto random = MakeVerifier("correct horse battery staple");
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(random->salt.size(), 16u);
  EXPECT_EQ(random->iterations, 4096);
  auto parsed_random = ParseVerifier(ToString(*random));
  ASSERT_TRUE(parsed_random.ok());
  EXPECT_EQ(*parsed_random, *random);
  auto again = MakeVerifier("correct horse battery staple");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->salt, random->salt);
}

TEST(ScramTest, MatchesAVerifierWrittenByPostgres) {
  // PostgreSQL 15: SET password_encryption = 'scram-sha-256'; CREATE ROLE r PASSWORD
  // 'Zebra pass!9'; SELECT rolpassword FROM pg_authid WHERE rolname = 'r';
  constexpr char kFromPostgres[] =
      "SCRAM-SHA-256$4096:GQjEOhuRnnWUTEGZoloAmw==$aXTsKII+JR3AtKHs3puICRH0zEZI6JIXb/9ZqpS8yfg=:"
      "q9veTUbF2eEYCvaDB0o57+EXlsYj5zt+iNoohq+OQ78=";
  auto parsed = ParseVerifier(kFromPostgres);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(ToString(*parsed), kFromPostgres);
  auto ours = MakeVerifierWithSalt("Zebra pass!9", parsed->salt, parsed->iterations);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(*ours, *parsed);
  auto other = MakeVerifierWithSalt("Zebra pass!8", parsed->salt, parsed->iterations);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *parsed);
}

TEST(ScramTest, ParsedVerifierRunsTheRfcExchange) {
  auto parsed = ParseVerifier(ToString(Rfc7677Verifier()));
  ASSERT_TRUE(parsed.ok());
  ScramServer server(*parsed, FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
  auto server_final = server.HandleClientFinal(kClientFinal);
  ASSERT_TRUE(server_final.ok());
  EXPECT_EQ(*server_final, kServerFinal);
}

TEST(ScramTest, ParseVerifierRefusesMalformedTextWithoutEchoingIt) {
  const std::string good = ToString(Rfc7677Verifier());
  const std::string keys = good.substr(good.rfind('$') + 1);
  for (const std::string& text : std::vector<std::string>{
           std::string(""),
           std::string("md5abcdef"),
           std::string("SCRAM-SHA-1$4096:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys,
           std::string("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==") + keys,
           std::string("SCRAM-SHA-256$0:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys,
           std::string("SCRAM-SHA-256$-1:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys,
           std::string("SCRAM-SHA-256$4096x:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys,
           std::string("SCRAM-SHA-256$99999999999:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys,
           std::string("SCRAM-SHA-256$4096:$") + keys,
           std::string("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ=$") + keys,
           std::string("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys.substr(4),
           std::string("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys + "AAAA",
           std::string("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$") + keys + "$",
           std::string("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$AAAA:AAAA"),
       }) {
    auto parsed = ParseVerifier(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(CodeOf(parsed.status()), "scram/22023");
    EXPECT_EQ(parsed.status().message().find(keys.substr(0, 8)), std::string::npos);
    EXPECT_EQ(parsed.status().message().find("W22ZaJ0"), std::string::npos);
  }
}

TEST(ScramTest, MakeVerifierRefusesUnusablePasswords) {
  EXPECT_EQ(CodeOf(MakeVerifier("").status()), "scram/22023");
  EXPECT_EQ(CodeOf(MakeVerifier("p\xC3\xA4ssword").status()), "scram/22023");
  EXPECT_EQ(CodeOf(MakeVerifier("pencil", 0).status()), "scram/22023");
  EXPECT_EQ(CodeOf(MakeVerifierWithSalt("pencil", "", 4096).status()), "scram/22023");
}

TEST(ScramTest, WrongProofFailsWithInvalidPassword) {
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
  auto result = server.HandleClientFinal(
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVU=");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(CodeOf(result.status()), "scram/28P01");
  EXPECT_EQ(result.status().message(), "password authentication failed");
  EXPECT_FALSE(server.authenticated());
}

TEST(ScramTest, OtherPasswordFailsWithInvalidPassword) {
  auto salt = Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ==");
  auto verifier = MakeVerifierWithSalt("pencil2", *salt, 4096);
  ASSERT_TRUE(verifier.ok());
  ScramServer server(*verifier, FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
  EXPECT_EQ(CodeOf(server.HandleClientFinal(kClientFinal).status()), "scram/28P01");
}

TEST(ScramTest, NonceMismatchIsRefused) {
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
  auto result = server.HandleClientFinal(
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k1,"
      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(CodeOf(result.status()), "scram/08P01");
  EXPECT_FALSE(server.authenticated());
}

TEST(ScramTest, ChannelBindingRequestIsRefused) {
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  auto result = server.HandleClientFirst("p=tls-server-end-point,,n=,r=rOprNGfwEbeRWgbNEkqO");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(CodeOf(result.status()), "scram/08P01");
  EXPECT_NE(result.status().message().find("channel binding"), std::string::npos);
}

TEST(ScramTest, ClientThatSupportsBindingButSawNoneIsAccepted) {
  // "y,,": the client could bind but the server did not offer -PLUS; c= then carries "y,,".
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst("y,,n=us=2Cer=3D,r=rOprNGfwEbeRWgbNEkqO").ok());
  // The RFC proof was computed over "c=biws" (n,,), so "c=eSws" is right but the proof is not.
  auto result = server.HandleClientFinal(
      "c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  EXPECT_EQ(CodeOf(result.status()), "scram/28P01");
}

TEST(ScramTest, ChannelBindingMustRepeatTheGs2Header) {
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst("y,,n=user,r=rOprNGfwEbeRWgbNEkqO").ok());
  EXPECT_EQ(CodeOf(server.HandleClientFinal(kClientFinal).status()), "scram/08P01");
}

TEST(ScramTest, MalformedClientFirstIsAProtocolViolation) {
  for (const std::string& message : std::vector<std::string>{
           std::string(""),
           std::string("n"),
           std::string("n,"),
           std::string("x,,n=,r=abc"),
           std::string("n,a=admin,n=,r=abc"),
           std::string("n,,"),
           std::string("n,,r=abc"),
           std::string("n,,n=user"),
           std::string("n,,n=user,"),
           std::string("n,,n=user,r="),
           std::string("n,,n=user,r=a b"),
           std::string("n,,n=user,r=abc,,"),
           std::string("n,,n=user,r=abc,=x"),
           std::string("n,,m=ext,n=user,r=abc"),
           std::string("n,,n=user,r=abc\x01"),
           std::string("n,,n=user,r=abc\xFF"),
           std::string("n,,n=user\0,r=abc", 16),
           std::string("n,,n=us=er,r=abc"),
           std::string("n,,n=user=2,r=abc"),
       }) {
    ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
    auto result = server.HandleClientFirst(message);
    ASSERT_FALSE(result.ok()) << message;
    EXPECT_EQ(CodeOf(result.status()), "scram/08P01") << message;
  }
}

TEST(ScramTest, MalformedClientFinalIsAProtocolViolation) {
  const std::string nonce = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
  const std::string proof = "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
  for (const std::string& message : std::vector<std::string>{
           std::string(""),
           std::string("c=biws"),
           "c=biws," + nonce,
           "c=biws," + proof,
           nonce + ",c=biws," + proof,
           "c=biws," + proof + "," + nonce,
           "c=bi!s," + nonce + "," + proof,
           "c=biw," + nonce + "," + proof,
           "c=biws," + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ",
           "c=biws," + nonce + ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7A=",
           "c=biws," + nonce + ",p=",
           "c=biws," + nonce + "," + proof + ",",
           "c=biws," + nonce + ",," + proof,
           "c=biws,r=," + proof,
       }) {
    ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
    ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
    auto result = server.HandleClientFinal(message);
    ASSERT_FALSE(result.ok()) << message;
    EXPECT_EQ(CodeOf(result.status()), "scram/08P01") << message;
  }
}

TEST(ScramTest, ExtensionsBeforeTheProofAreCoveredByIt) {
  // An extension attribute is part of client-final-message-without-proof, so the RFC proof
  // no longer matches; the message is still well-formed.
  ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
  ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
  auto result = server.HandleClientFinal(
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,x=ext,"
      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  EXPECT_EQ(CodeOf(result.status()), "scram/28P01");
}

TEST(ScramTest, CallsOutOfOrderAreRefused) {
  {
    ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
    EXPECT_EQ(CodeOf(server.HandleClientFinal(kClientFinal).status()), "scram/08P01");
    // The exchange is over after an error.
    EXPECT_EQ(CodeOf(server.HandleClientFirst(kClientFirst).status()), "scram/08P01");
  }
  {
    ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
    ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
    EXPECT_EQ(CodeOf(server.HandleClientFirst(kClientFirst).status()), "scram/08P01");
    EXPECT_EQ(CodeOf(server.HandleClientFinal(kClientFinal).status()), "scram/08P01");
  }
  {
    ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
    ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
    ASSERT_TRUE(server.HandleClientFinal(kClientFinal).ok());
    EXPECT_EQ(CodeOf(server.HandleClientFinal(kClientFinal).status()), "scram/08P01");
    EXPECT_TRUE(server.authenticated());
  }
  {
    // A failed proof cannot be retried on the same exchange.
    ScramServer server(Rfc7677Verifier(), FixedNonce(kServerNonce));
    ASSERT_TRUE(server.HandleClientFirst(kClientFirst).ok());
    ASSERT_FALSE(server.HandleClientFinal("c=biws,r=x,p=AAAA").ok());
    EXPECT_EQ(CodeOf(server.HandleClientFinal(kClientFinal).status()), "scram/08P01");
    EXPECT_FALSE(server.authenticated());
  }
}

TEST(ScramTest, DefaultNonceIsRandomBase64) {
  ScramServer a(Rfc7677Verifier());
  ScramServer b(Rfc7677Verifier());
  auto first_a = a.HandleClientFirst(kClientFirst);
  auto first_b = b.HandleClientFirst(kClientFirst);
  ASSERT_TRUE(first_a.ok() && first_b.ok());
  const std::string prefix = "r=rOprNGfwEbeRWgbNEkqO";
  ASSERT_EQ(first_a->rfind(prefix, 0), 0u);
  const std::string nonce_a = first_a->substr(prefix.size(), first_a->find(',') - prefix.size());
  const std::string nonce_b = first_b->substr(prefix.size(), first_b->find(',') - prefix.size());
  EXPECT_EQ(nonce_a.size(), 24u);
  EXPECT_NE(nonce_a, nonce_b);
  auto decoded = Base64Decode(nonce_a);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->size(), 18u);
}

TEST(ScramTest, UnknownUserLooksLikeAKnownOneAndAlwaysFails) {
  ScramServer a = ScramServer::ForUnknownUser("mallory", "secret", FixedNonce(kServerNonce));
  ScramServer b = ScramServer::ForUnknownUser("mallory", "secret", FixedNonce(kServerNonce));
  ScramServer c = ScramServer::ForUnknownUser("trudy", "secret", FixedNonce(kServerNonce));
  auto first_a = a.HandleClientFirst(kClientFirst);
  auto first_b = b.HandleClientFirst(kClientFirst);
  auto first_c = c.HandleClientFirst(kClientFirst);
  ASSERT_TRUE(first_a.ok() && first_b.ok() && first_c.ok());
  EXPECT_EQ(*first_a, *first_b);  // the same salt for the same user on every attempt
  EXPECT_NE(*first_a, *first_c);
  // Same shape as a real answer: 16-byte salt, default iterations.
  const std::string salt = first_a->substr(first_a->find(",s=") + 3, 24);
  auto salt_bytes = Base64Decode(salt);
  ASSERT_TRUE(salt_bytes.ok());
  EXPECT_EQ(salt_bytes->size(), 16u);
  EXPECT_EQ(first_a->substr(first_a->size() - 7), ",i=4096");

  auto result = a.HandleClientFinal(kClientFinal);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(CodeOf(result.status()), "scram/28P01");
  EXPECT_EQ(result.status().message(), "password authentication failed");
}

// A SCRAM client as libpq implements it, over a random password.
TEST(ScramTest, FullExchangeWithARandomPassword) {
  unsigned char raw[24];
  ASSERT_EQ(RAND_bytes(raw, sizeof(raw)), 1);
  const std::string password = Base64Encode(std::string(reinterpret_cast<char*>(raw), 24));
  auto verifier = MakeVerifier(password, 1000);
  ASSERT_TRUE(verifier.ok());
  auto stored = ParseVerifier(ToString(*verifier));
  ASSERT_TRUE(stored.ok());

  ScramServer server(*stored);
  const std::string client_nonce = "fyko+d2lbbFgONRv9qkxdawL";
  const std::string client_first_bare = "n=,r=" + client_nonce;
  auto server_first = server.HandleClientFirst("n,," + client_first_bare);
  ASSERT_TRUE(server_first.ok()) << server_first.status().ToString();

  // Client: parse r=, s=, i=.
  const std::string& sf = *server_first;
  ASSERT_EQ(sf.rfind("r=" + client_nonce, 0), 0u);
  const size_t s_at = sf.find(",s=");
  const size_t i_at = sf.find(",i=");
  ASSERT_NE(s_at, std::string::npos);
  ASSERT_NE(i_at, std::string::npos);
  const std::string nonce = sf.substr(2, s_at - 2);
  auto salt = Base64Decode(sf.substr(s_at + 3, i_at - s_at - 3));
  ASSERT_TRUE(salt.ok());
  const int iterations = std::stoi(sf.substr(i_at + 3));
  EXPECT_EQ(iterations, 1000);

  unsigned char salted[SHA256_DIGEST_LENGTH];
  ASSERT_EQ(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                              reinterpret_cast<const unsigned char*>(salt->data()),
                              static_cast<int>(salt->size()), iterations, EVP_sha256(),
                              sizeof(salted), salted),
            1);
  const std::string salted_password(reinterpret_cast<char*>(salted), sizeof(salted));
  const std::string client_key = Hmac(salted_password, "Client Key");
  const std::string server_key = Hmac(salted_password, "Server Key");
  const std::string without_proof = "c=biws,r=" + nonce;
  const std::string auth_message = client_first_bare + "," + sf + "," + without_proof;
  const std::string proof = Xor(client_key, Hmac(Sha256(client_key), auth_message));

  auto server_final = server.HandleClientFinal(without_proof + ",p=" + Base64Encode(proof));
  ASSERT_TRUE(server_final.ok()) << server_final.status().ToString();
  EXPECT_EQ(*server_final, "v=" + Base64Encode(Hmac(server_key, auth_message)));
  EXPECT_TRUE(server.authenticated());
}

}  // namespace
}  // namespace weir::serve::auth
