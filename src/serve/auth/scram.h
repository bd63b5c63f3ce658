// Server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it in its SASL
// authentication messages, without channel binding (only "SCRAM-SHA-256" is offered, never
// "SCRAM-SHA-256-PLUS").
//
// Errors are ClassifiedError(kFatal, "scram", <SQLSTATE>, ...): "28P01" for a wrong password
// (message "password authentication failed"), "08P01" for a malformed or out-of-order
// message, "22023" for a bad password or verifier given to MakeVerifier/ParseVerifier.
// OpenSSL failures are ClassifiedError(kFatal, "openssl", <packed error code in hex>, ...).
// No error message contains a password, a proof or a key.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace weir::serve::auth {

// What the server stores per user: never the password, only what is needed to check a proof.
struct ScramVerifier {
  int iterations = 0;
  std::string salt;        // raw bytes
  std::string stored_key;  // raw 32 bytes: SHA-256(HMAC(SaltedPassword, "Client Key"))
  std::string server_key;  // raw 32 bytes: HMAC(SaltedPassword, "Server Key")

  friend bool operator==(const ScramVerifier&, const ScramVerifier&) = default;
};

inline constexpr int kDefaultScramIterations = 4096;

// A verifier for `password` with 16 fresh random salt bytes. The password is used as its
// bytes; it must be non-empty ASCII, for which PostgreSQL's SASLprep is the identity (SASLprep
// of other text is not implemented, so such passwords are refused rather than mismatching).
Result<ScramVerifier> MakeVerifier(std::string_view password,
                                   int iterations = kDefaultScramIterations);

// As MakeVerifier, with the salt given (for tests and known vectors).
Result<ScramVerifier> MakeVerifierWithSalt(std::string_view password, std::string_view salt,
                                           int iterations = kDefaultScramIterations);

// PostgreSQL's text form: "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>" with
// the byte strings in base64.
std::string ToString(const ScramVerifier& verifier);

// Parses ToString's form (as found in pg_authid.rolpassword).
Result<ScramVerifier> ParseVerifier(std::string_view text);

// One SCRAM exchange with one client: HandleClientFirst, then HandleClientFinal, each at most
// once and in that order; any error ends the exchange. Not thread-safe: one instance per
// connection's authentication attempt, used by that connection's thread only.
class ScramServer {
 public:
  // Returns the server's nonce part: printable ASCII without ','.
  using NonceSource = std::function<Result<std::string>()>;

  // 18 bytes from RAND_bytes, base64-encoded (24 characters).
  static NonceSource RandomNonceSource();

  // An exchange for a user whose verifier is known.
  explicit ScramServer(ScramVerifier verifier, NonceSource nonce_source = RandomNonceSource());

  // An exchange for a user that does not exist: it runs the same steps and answers with a
  // salt derived from `user_name` and `mock_secret` (the same for the same user across
  // attempts, as a real user's salt would be), then fails HandleClientFinal with 28P01 exactly
  // as a wrong password does. `mock_secret` should be random per server and kept private.
  // `iterations` should match what real users' verifiers use.
  static ScramServer ForUnknownUser(std::string_view user_name, std::string_view mock_secret,
                                    NonceSource nonce_source = RandomNonceSource(),
                                    int iterations = kDefaultScramIterations);

  ScramServer(ScramServer&&) = default;
  ScramServer& operator=(ScramServer&&) = default;
  ~ScramServer();

  // Takes client-first-message ("n,,n=,r=<client nonce>") and returns server-first-message
  // ("r=<client nonce><server nonce>,s=<salt>,i=<iterations>").
  Result<std::string> HandleClientFirst(std::string_view client_first);

  // Takes client-final-message ("c=biws,r=<nonce>,p=<proof>"), checks the proof and returns
  // server-final-message ("v=<server signature>").
  Result<std::string> HandleClientFinal(std::string_view client_final);

  // True once HandleClientFinal has accepted the proof (later out-of-order calls fail without
  // changing it).
  bool authenticated() const { return state_ == State::kAuthenticated; }

 private:
  enum class State { kAwaitingClientFirst, kAwaitingClientFinal, kAuthenticated, kFailed };

  ScramServer(ScramVerifier verifier, bool doomed, NonceSource nonce_source);
  Result<std::string> ClientFirst(std::string_view client_first);
  Result<std::string> ClientFinal(std::string_view client_final);

  ScramVerifier verifier_;
  bool doomed_ = false;  // unknown user: the proof is refused whatever it is
  NonceSource nonce_source_;
  State state_ = State::kAwaitingClientFirst;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;  // client nonce followed by server nonce
};

}  // namespace weir::serve::auth
