// TLS for `weir serve`: a self-signed certificate when the operator provides none, and the
// server's SSL_CTX. Pure functions of their arguments and the files they name; callable from
// any thread (the SSL_CTX they return may be shared by connections once built).
#pragma once

#include <openssl/types.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace weir::serve::auth {

struct SslContextDeleter {
  void operator()(SSL_CTX* context) const;
};
using SslContextPtr = std::unique_ptr<SSL_CTX, SslContextDeleter>;

// Leaves existing files alone when both exist. When neither exists, writes a new EC P-256 key
// (PEM, mode 0600) and a self-signed X.509 v3 certificate for it (PEM, mode 0644; CN =
// `common_name`, subjectAltName DNS:localhost and IP:127.0.0.1, random serial, valid from an
// hour ago for 3650 days), each through a temporary file renamed into place. When only one
// exists it is an error: the other file was removed or misnamed, and overwriting the survivor
// could destroy a key the operator still needs.
Status EnsureSelfSignedCertificate(const std::string& cert_path, const std::string& key_path,
                                   const std::string& common_name);

// A server SSL_CTX (TLS 1.2 or newer) with the PEM certificate chain and private key loaded
// and checked to belong together.
Result<SslContextPtr> MakeServerContext(const std::string& cert_path, const std::string& key_path);

}  // namespace weir::serve::auth
