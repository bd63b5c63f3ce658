#include "serve/auth/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <charconv>
#include <climits>
#include <utility>
#include <vector>

#include "serve/auth/base64.h"
#include "serve/auth/openssl_error.h"

namespace weir::serve::auth {
namespace {

constexpr std::string_view kVerifierPrefix = "SCRAM-SHA-256$";
constexpr size_t kKeyLength = SHA256_DIGEST_LENGTH;
constexpr size_t kSaltLength = 16;
constexpr int kServerNonceBytes = 18;

Status ScramError(const char* sqlstate, std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "scram", sqlstate, std::move(message));
}

Status ProtocolViolation(std::string message) {
  return ScramError("08P01", "malformed SCRAM message: " + std::move(message));
}

Status InvalidParameter(std::string message) { return ScramError("22023", std::move(message)); }

Status AuthenticationFailed() { return ScramError("28P01", "password authentication failed"); }

const unsigned char* Bytes(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

// Zeroes a string holding key material before it is freed.
class Secret {
 public:
  explicit Secret(std::string value) : value_(std::move(value)) {}
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;
  ~Secret() { OPENSSL_cleanse(value_.data(), value_.size()); }
  const std::string& value() const { return value_; }

 private:
  std::string value_;
};

Result<std::string> HmacSha256(std::string_view key, std::string_view data) {
  std::string out(kKeyLength, '\0');
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), Bytes(data), data.size(),
           reinterpret_cast<unsigned char*>(out.data()), &length) == nullptr ||
      length != kKeyLength) {
    return OpenSslError("HMAC-SHA-256 failed");
  }
  return out;
}

std::string Sha256(std::string_view data) {
  std::string out(kKeyLength, '\0');
  SHA256(Bytes(data), data.size(), reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

bool IsAscii(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// RFC 5802: a nonce is printable ASCII other than ','.
bool IsValidNonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (const char c : nonce) {
    if (c < 0x21 || c > 0x7E || c == ',') return false;
  }
  return true;
}

// RFC 5802 saslname: no NUL, ',' or '=' other than in "=2C" and "=3D". May be empty.
bool IsValidSaslName(std::string_view name) {
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '\0' || name[i] == ',') return false;
    if (name[i] == '=') {
      const std::string_view escape = name.substr(i + 1, 2);
      if (escape != "2C" && escape != "3D") return false;
      i += 2;
    }
  }
  return true;
}

struct Attribute {
  char name;
  std::string_view value;
};

// Splits "a=x,b=y" into attributes; false when a part is not "<letter>=...".
bool SplitAttributes(std::string_view text, std::vector<Attribute>* attributes) {
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    if (part.size() < 2 || part[1] != '=') return false;
    const char name = part[0];
    if (!((name >= 'a' && name <= 'z') || (name >= 'A' && name <= 'Z'))) return false;
    attributes->push_back({name, part.substr(2)});
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

bool IsUsable(const ScramVerifier& verifier) {
  return verifier.iterations > 0 && !verifier.salt.empty() &&
         verifier.stored_key.size() == kKeyLength && verifier.server_key.size() == kKeyLength;
}

Result<std::string> RandomBytes(int count) {
  std::string out(static_cast<size_t>(count), '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), count) != 1) {
    return OpenSslError("RAND_bytes failed");
  }
  return out;
}

}  // namespace

Result<ScramVerifier> MakeVerifier(std::string_view password, int iterations) {
  WEIR_ASSIGN_OR_RAISE(std::string salt, RandomBytes(kSaltLength));
  return MakeVerifierWithSalt(password, salt, iterations);
}

Result<ScramVerifier> MakeVerifierWithSalt(std::string_view password, std::string_view salt,
                                           int iterations) {
  if (password.empty()) return InvalidParameter("the password is empty");
  if (!IsAscii(password)) {
    return InvalidParameter(
        "the password is not ASCII (SASLprep, which PostgreSQL clients apply to other "
        "passwords, is not implemented)");
  }
  if (password.size() > INT_MAX || salt.size() > INT_MAX) {
    return InvalidParameter("the password or salt is too long");
  }
  if (iterations < 1) return InvalidParameter("SCRAM iterations must be at least 1");
  if (salt.empty()) return InvalidParameter("the SCRAM salt is empty");

  std::string salted(kKeyLength, '\0');
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), Bytes(salt),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(),
                        static_cast<int>(kKeyLength),
                        reinterpret_cast<unsigned char*>(salted.data())) != 1) {
    OPENSSL_cleanse(salted.data(), salted.size());
    return OpenSslError("PBKDF2-HMAC-SHA-256 failed");
  }
  const Secret salted_password(std::move(salted));
  WEIR_ASSIGN_OR_RAISE(std::string client_key_bytes,
                       HmacSha256(salted_password.value(), "Client Key"));
  const Secret client_key(std::move(client_key_bytes));
  ScramVerifier verifier;
  verifier.iterations = iterations;
  verifier.salt = std::string(salt);
  verifier.stored_key = Sha256(client_key.value());
  WEIR_ASSIGN_OR_RAISE(verifier.server_key, HmacSha256(salted_password.value(), "Server Key"));
  return verifier;
}

std::string ToString(const ScramVerifier& verifier) {
  return std::string(kVerifierPrefix) + std::to_string(verifier.iterations) + ":" +
         Base64Encode(verifier.salt) + "$" + Base64Encode(verifier.stored_key) + ":" +
         Base64Encode(verifier.server_key);
}

Result<ScramVerifier> ParseVerifier(std::string_view text) {
  if (text.substr(0, kVerifierPrefix.size()) != kVerifierPrefix) {
    return InvalidParameter("SCRAM verifier does not start with \"SCRAM-SHA-256$\"");
  }
  text.remove_prefix(kVerifierPrefix.size());
  const size_t dollar = text.find('$');
  if (dollar == std::string_view::npos || text.find('$', dollar + 1) != std::string_view::npos) {
    return InvalidParameter(
        "SCRAM verifier is not \"SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>\"");
  }
  const std::string_view parameters = text.substr(0, dollar);
  const std::string_view keys = text.substr(dollar + 1);
  const size_t parameters_colon = parameters.find(':');
  const size_t keys_colon = keys.find(':');
  if (parameters_colon == std::string_view::npos || keys_colon == std::string_view::npos) {
    return InvalidParameter(
        "SCRAM verifier is not \"SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>\"");
  }

  ScramVerifier verifier;
  const std::string_view iterations = parameters.substr(0, parameters_colon);
  const auto [end, error] = std::from_chars(
      iterations.data(), iterations.data() + iterations.size(), verifier.iterations);
  if (iterations.empty() || error != std::errc() || end != iterations.data() + iterations.size() ||
      verifier.iterations < 1) {
    return InvalidParameter("SCRAM verifier's iteration count is not a positive integer");
  }
  auto salt = Base64Decode(parameters.substr(parameters_colon + 1));
  if (!salt.ok() || salt->empty()) {
    return InvalidParameter("SCRAM verifier's salt is not non-empty base64");
  }
  verifier.salt = std::move(*salt);
  auto stored_key = Base64Decode(keys.substr(0, keys_colon));
  if (!stored_key.ok() || stored_key->size() != kKeyLength) {
    return InvalidParameter("SCRAM verifier's StoredKey is not base64 of 32 bytes");
  }
  verifier.stored_key = std::move(*stored_key);
  auto server_key = Base64Decode(keys.substr(keys_colon + 1));
  if (!server_key.ok() || server_key->size() != kKeyLength) {
    return InvalidParameter("SCRAM verifier's ServerKey is not base64 of 32 bytes");
  }
  verifier.server_key = std::move(*server_key);
  return verifier;
}

ScramServer::NonceSource ScramServer::RandomNonceSource() {
  return []() -> Result<std::string> {
    WEIR_ASSIGN_OR_RAISE(std::string bytes, RandomBytes(kServerNonceBytes));
    return Base64Encode(bytes);
  };
}

ScramServer::ScramServer(ScramVerifier verifier, NonceSource nonce_source)
    : ScramServer(std::move(verifier), /*doomed=*/false, std::move(nonce_source)) {}

ScramServer::ScramServer(ScramVerifier verifier, bool doomed, NonceSource nonce_source)
    : verifier_(std::move(verifier)), doomed_(doomed), nonce_source_(std::move(nonce_source)) {}

ScramServer::~ScramServer() {
  OPENSSL_cleanse(verifier_.stored_key.data(), verifier_.stored_key.size());
  OPENSSL_cleanse(verifier_.server_key.data(), verifier_.server_key.size());
}

ScramServer ScramServer::ForUnknownUser(std::string_view user_name, std::string_view mock_secret,
                                        NonceSource nonce_source, int iterations) {
  // Derived from the secret, so the same unknown user sees the same salt on every attempt.
  auto derive = [&](std::string_view purpose) {
    std::string data(purpose);
    data.append(user_name);
    auto mac = HmacSha256(mock_secret, data);
    return mac.ok() ? *std::move(mac) : Sha256(std::string(mock_secret) + data);
  };
  ScramVerifier verifier;
  verifier.iterations = iterations;
  verifier.salt = derive("salt:").substr(0, kSaltLength);
  verifier.stored_key = derive("stored key:");
  verifier.server_key = derive("server key:");
  return ScramServer(std::move(verifier), /*doomed=*/true, std::move(nonce_source));
}

Result<std::string> ScramServer::HandleClientFirst(std::string_view client_first) {
  if (state_ != State::kAwaitingClientFirst) {
    if (state_ != State::kAuthenticated) state_ = State::kFailed;
    return ProtocolViolation("client-first-message out of order");
  }
  auto result = ClientFirst(client_first);
  state_ = result.ok() ? State::kAwaitingClientFinal : State::kFailed;
  return result;
}

Result<std::string> ScramServer::HandleClientFinal(std::string_view client_final) {
  if (state_ != State::kAwaitingClientFinal) {
    if (state_ != State::kAuthenticated) state_ = State::kFailed;
    return ProtocolViolation("client-final-message out of order");
  }
  auto result = ClientFinal(client_final);
  state_ = result.ok() ? State::kAuthenticated : State::kFailed;
  return result;
}

Result<std::string> ScramServer::ClientFirst(std::string_view client_first) {
  if (!IsUsable(verifier_)) return InvalidParameter("the user's SCRAM verifier is unusable");
  // gs2-header: cbind-flag "," [authzid] ","
  if (client_first.empty()) return ProtocolViolation("client-first-message is empty");
  const char flag = client_first[0];
  if (flag == 'p') {
    return ScramError("08P01",
                      "the client requested SCRAM channel binding, but the server offers only "
                      "SCRAM-SHA-256 without it");
  }
  if (flag != 'n' && flag != 'y') {
    return ProtocolViolation("unexpected channel-binding flag");
  }
  if (client_first.size() < 3 || client_first[1] != ',') {
    return ProtocolViolation("expected ',' after the channel-binding flag");
  }
  if (client_first[2] == 'a') {
    return ScramError("08P01", "SCRAM authorization identity is not supported");
  }
  if (client_first[2] != ',') return ProtocolViolation("malformed gs2 header");
  const std::string_view gs2_header = client_first.substr(0, 3);
  const std::string_view bare = client_first.substr(3);

  std::vector<Attribute> attributes;
  if (!SplitAttributes(bare, &attributes)) {
    return ProtocolViolation("client-first-message has a malformed attribute");
  }
  if (attributes[0].name == 'm') {
    return ScramError("08P01", "the client requires an unsupported SCRAM extension");
  }
  // The user name ("n=") is ignored: PostgreSQL takes it from the startup message.
  if (attributes[0].name != 'n') return ProtocolViolation("expected attribute 'n'");
  if (!IsValidSaslName(attributes[0].value)) return ProtocolViolation("invalid user name");
  if (attributes.size() < 2 || attributes[1].name != 'r') {
    return ProtocolViolation("expected attribute 'r'");
  }
  if (!IsValidNonce(attributes[1].value)) return ProtocolViolation("invalid client nonce");

  WEIR_ASSIGN_OR_RAISE(std::string server_nonce, nonce_source_());
  if (!IsValidNonce(server_nonce)) {
    return ScramError("XX000", "the server nonce source produced an invalid nonce");
  }
  gs2_header_ = std::string(gs2_header);
  client_first_bare_ = std::string(bare);
  nonce_ = std::string(attributes[1].value) + server_nonce;
  server_first_ = "r=" + nonce_ + ",s=" + Base64Encode(verifier_.salt) +
                  ",i=" + std::to_string(verifier_.iterations);
  return server_first_;
}

Result<std::string> ScramServer::ClientFinal(std::string_view client_final) {
  std::vector<Attribute> attributes;
  if (!SplitAttributes(client_final, &attributes)) {
    return ProtocolViolation("client-final-message has a malformed attribute");
  }
  if (attributes[0].name != 'c') return ProtocolViolation("expected attribute 'c'");
  if (attributes.size() < 2 || attributes[1].name != 'r') {
    return ProtocolViolation("expected attribute 'r'");
  }
  if (attributes.size() < 3 || attributes.back().name != 'p') {
    return ProtocolViolation("expected attribute 'p' last");
  }
  auto binding = Base64Decode(attributes[0].value);
  if (!binding.ok()) return ProtocolViolation("channel binding is not base64");
  if (*binding != gs2_header_) {
    return ScramError("08P01", "SCRAM channel binding check failed");
  }
  if (attributes[1].value != nonce_) return ScramError("08P01", "SCRAM nonce mismatch");
  auto proof = Base64Decode(attributes.back().value);
  if (!proof.ok() || proof->size() != kKeyLength) {
    return ProtocolViolation("client proof is not base64 of 32 bytes");
  }

  const std::string_view without_proof = client_final.substr(0, client_final.rfind(','));
  const std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + std::string(without_proof);
  WEIR_ASSIGN_OR_RAISE(std::string client_signature,
                       HmacSha256(verifier_.stored_key, auth_message));
  std::string client_key_bytes(kKeyLength, '\0');
  for (size_t i = 0; i < kKeyLength; ++i) {
    client_key_bytes[i] = static_cast<char>((*proof)[i] ^ client_signature[i]);
  }
  const Secret client_key(std::move(client_key_bytes));
  const std::string computed_stored_key = Sha256(client_key.value());
  const bool matches =
      CRYPTO_memcmp(computed_stored_key.data(), verifier_.stored_key.data(), kKeyLength) == 0;
  if (!matches || doomed_) return AuthenticationFailed();

  WEIR_ASSIGN_OR_RAISE(std::string server_signature,
                       HmacSha256(verifier_.server_key, auth_message));
  return "v=" + Base64Encode(server_signature);
}

}  // namespace weir::serve::auth
