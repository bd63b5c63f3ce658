// Fuzz target: the SASL exchange of `weir serve` — SASLInitialResponse, SCRAM-SHA-256's
// client-first and client-final messages (serve/auth/scram.h) — and the verifier text of the
// users file.
//
// Input: byte 0 bit 0 makes the user unknown (ScramServer::ForUnknownUser); bit 1 makes the
// rest a verifier's text instead. Otherwise the rest is what the client sends after
// AuthenticationSASL: 'p' messages, read and answered in the order Server::Serve does
// (SASLInitialResponse, then SASLResponse), then any further messages given to the exchange
// out of order. The user is RFC 7677's ("pencil", its salt and nonces), so a seed holding the
// RFC's messages authenticates and the fuzzer mutates a successful exchange.
//
// Checks, besides the sanitizers: only the RFC's exact messages (with its proof) authenticate;
// an unknown user never does; a server-first message carries the client's nonce and the
// server's; an error is 08P01, 28P01 or 22023 and never contains the proof; messages out of
// order fail without changing the outcome; a verifier that parses prints back to text that
// parses to the same verifier.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "serve/auth/base64.h"
#include "serve/auth/scram.h"
#include "serve/pgwire/protocol.h"

namespace auth = weir::serve::auth;
namespace pgwire = weir::serve::pgwire;

namespace {

// RFC 7677 section 3.
constexpr std::string_view kClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr std::string_view kFinalWithoutProof =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=";
constexpr std::string_view kProof = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "fuzz_scram: invariant broken: %s\n", what);
  std::abort();
}

const auth::ScramVerifier& Verifier() {
  static const auth::ScramVerifier verifier = [] {
    auto salt = auth::Base64Decode("W22ZaJ0SNY7soEsUEjb6gQ==");
    auto made = auth::MakeVerifierWithSalt("pencil", *salt, 4096);
    if (!made.ok()) Fail("the RFC 7677 verifier");
    return *made;
  }();
  return verifier;
}

auth::ScramServer::NonceSource FixedNonce() {
  return []() -> weir::Result<std::string> { return std::string(kServerNonce); };
}

void ExpectError(const weir::Status& status, std::string_view client_message) {
  const weir::ErrorDetail* detail = weir::GetErrorDetail(status);
  const std::string code = detail != nullptr ? detail->code() : "";
  if (code != "08P01" && code != "28P01" && code != "22023") Fail("an unexpected error code");
  // A proof is 44 characters of base64; 16 of them in an error would be a leak, not chance.
  const size_t p = client_message.rfind("p=");
  if (p != std::string_view::npos && client_message.size() - p >= 2 + 16) {
    const std::string_view proof = client_message.substr(p + 2, 16);
    for (char c : proof) {  // only what could be a proof (the error texts have no such run)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/') return;
    }
    if (status.message().find(proof) != std::string::npos) Fail("an error shows the proof");
  }
}

// Whether `final` is the RFC's client-final message (its proof possibly spelt differently in
// base64, if the decoder takes such spellings).
bool IsRfcFinal(std::string_view final_message) {
  if (!final_message.starts_with(kFinalWithoutProof)) return false;
  auto proof = auth::Base64Decode(final_message.substr(kFinalWithoutProof.size()));
  auto expected = auth::Base64Decode(kProof);
  return proof.ok() && *proof == *expected;
}

void Verifiers(std::string_view text) {
  auto parsed = auth::ParseVerifier(text);
  if (!parsed.ok()) {
    ExpectError(parsed.status(), "");
    return;
  }
  auto again = auth::ParseVerifier(auth::ToString(*parsed));
  if (!again.ok() || !(*again == *parsed)) Fail("a verifier does not survive its text form");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool unknown_user = (data[0] & 1) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 2) != 0) {
    Verifiers(rest);
    return 0;
  }
  auth::ScramServer scram = unknown_user
                                ? auth::ScramServer::ForUnknownUser("user", "mock", FixedNonce())
                                : auth::ScramServer(Verifier(), FixedNonce());
  pgwire::FrameReader reader(pgwire::kMaxStartupPacketBytes);
  reader.Feed(rest);
  // As Server::Serve: a 'p' message holding SASLInitialResponse for SCRAM-SHA-256.
  auto first = reader.Next();
  if (!first.ok() || !*first || (**first).type != 'p') return 0;
  auto initial = pgwire::ParseSaslInitialResponse((**first).body);
  if (!initial.ok()) {
    if (weir::GetErrorDetail(initial.status())->code() != "08P01") Fail("SASLInitialResponse");
    return 0;
  }
  if (initial->mechanism != "SCRAM-SHA-256" || !initial->data) return 0;
  const std::string client_first = *initial->data;
  auto server_first = scram.HandleClientFirst(client_first);
  if (!server_first.ok()) {
    ExpectError(server_first.status(), client_first);
    if (scram.authenticated()) Fail("authenticated after a failed client-first message");
    return 0;
  }
  if (!server_first->starts_with("r=") ||
      server_first->find(std::string(kServerNonce) + ",s=") == std::string::npos) {
    Fail("a server-first message without the nonces");
  }
  // Then SASLResponse: the client-final message.
  auto final_frame = reader.Next();
  if (!final_frame.ok() || !*final_frame || (**final_frame).type != 'p') return 0;
  const std::string client_final = (**final_frame).body;
  auto server_final = scram.HandleClientFinal(client_final);
  if (server_final.ok() != scram.authenticated()) Fail("a final answer without authentication");
  if (!server_final.ok()) ExpectError(server_final.status(), client_final);
  const bool authenticated = scram.authenticated();
  if (authenticated && unknown_user) Fail("an unknown user authenticated");
  if (authenticated && (client_first != kClientFirst || !IsRfcFinal(client_final))) {
    Fail("authenticated without the password's proof");
  }
  // Anything more is out of order: it fails and changes nothing.
  while (true) {
    auto more = reader.Next();
    if (!more.ok() || !*more) break;
    const std::string& body = (**more).body;
    if (scram.HandleClientFirst(body).ok() || scram.HandleClientFinal(body).ok()) {
      Fail("a message out of order was accepted");
    }
    if (scram.authenticated() != authenticated) Fail("a message out of order changed the outcome");
  }
  return 0;
}
