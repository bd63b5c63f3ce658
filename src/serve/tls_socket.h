// TLS over a connected socket for `weir serve`, through a BIO of our own whose writes are
// send(..., MSG_NOSIGNAL) and whose reads are recv(): OpenSSL's socket BIO writes with write(),
// which raises SIGPIPE (and by default ends the process) when the peer has closed. With this
// BIO a closed peer fails the handshake, SSL_write or SSL_shutdown of its connection only.
// Reads never block (recv with MSG_DONTWAIT): SSL_accept and SSL_read return
// SSL_ERROR_WANT_READ until the peer's bytes are there, so the caller waits for readability
// itself, under its own deadline; a peer that stalls mid-record cannot hold the thread. Writes
// block as on any socket.
//
// Threading: NewServerTls may be called from any thread; the SSL it returns belongs to the
// connection's thread. The socket is borrowed: freeing the SSL never closes it.
#pragma once

#include <openssl/types.h>

#include <memory>

#include "base/status.h"

namespace weir::serve {

struct TlsDeleter {
  void operator()(SSL* ssl) const;
};
using TlsPtr = std::unique_ptr<SSL, TlsDeleter>;

// A server-side SSL of `context` reading and writing the connected socket `fd` (which must
// outlive it), not yet handshaken.
Result<TlsPtr> NewServerTls(SSL_CTX* context, int fd);

// Sends close_notify after a completed handshake, without waiting for the peer's. Call it only
// when no SSL call on `ssl` failed (OpenSSL forbids SSL_shutdown after a fatal error).
void ShutdownTls(SSL* ssl);

}  // namespace weir::serve
