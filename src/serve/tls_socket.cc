#include "serve/tls_socket.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace weir::serve {
namespace {

int SocketOf(BIO* bio) { return static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio))); }

// Interrupted or would-block calls are retried by OpenSSL's callers; anything else is an error
// (EPIPE and ECONNRESET included: the peer is gone).
bool Retriable(int error) { return error == EINTR || error == EAGAIN || error == EWOULDBLOCK; }

int SocketWrite(BIO* bio, const char* data, int length) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(SocketOf(bio), data, static_cast<size_t>(length), MSG_NOSIGNAL);
  if (n < 0 && Retriable(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int SocketRead(BIO* bio, char* data, int length) {
  BIO_clear_retry_flags(bio);
  // Never blocks: a peer that stalls mid-record must not hold the thread past its deadline
  // or the server's stop, so the caller polls and retries on SSL_ERROR_WANT_READ.
  const ssize_t n = ::recv(SocketOf(bio), data, static_cast<size_t>(length), MSG_DONTWAIT);
  if (n < 0 && Retriable(errno)) BIO_set_retry_read(bio);
  if (n == 0) BIO_set_flags(bio, BIO_FLAGS_IN_EOF);  // the peer closed: OpenSSL asks BIO_eof
  return static_cast<int>(n);
}

long SocketControl(BIO* bio, int command, long, void*) {  // NOLINT(runtime/int): OpenSSL's type
  switch (command) {
    case BIO_CTRL_FLUSH:  // unbuffered: nothing to flush
      return 1;
    case BIO_CTRL_EOF:  // as OpenSSL's socket BIO: an end of stream without close_notify
      return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0 ? 1 : 0;
    default:  // KTLS, pending bytes, descriptors: not offered
      return 0;
  }
}

int SocketCreate(BIO*) { return 1; }
int SocketDestroy(BIO*) { return 1; }  // the socket is borrowed

// Built once, kept for the process (OpenSSL holds no resource per method beyond its memory).
const BIO_METHOD* NoSignalSocketMethod() {
  static const BIO_METHOD* const method = [] {
    BIO_METHOD* made =
        BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "weir socket (MSG_NOSIGNAL)");
    if (made == nullptr) return static_cast<BIO_METHOD*>(nullptr);
    BIO_meth_set_write(made, SocketWrite);
    BIO_meth_set_read(made, SocketRead);
    BIO_meth_set_ctrl(made, SocketControl);
    BIO_meth_set_create(made, SocketCreate);
    BIO_meth_set_destroy(made, SocketDestroy);
    return made;
  }();
  return method;
}

// OpenSSL's constructors fail only for want of memory: this connection fails, a later one may
// not.
Status OutOfMemory(const char* code, const char* what) {
  ERR_clear_error();
  return ClassifiedError(ErrorClass::kRetriable, "openssl", code,
                         std::string("OpenSSL cannot create ") + what);
}

}  // namespace

void TlsDeleter::operator()(SSL* ssl) const { SSL_free(ssl); }

Result<TlsPtr> NewServerTls(SSL_CTX* context, int fd) {
  const BIO_METHOD* method = NoSignalSocketMethod();
  if (method == nullptr) return OutOfMemory("bio_method", "the socket BIO method");
  TlsPtr ssl(SSL_new(context));
  if (ssl == nullptr) return OutOfMemory("ssl_new", "a TLS connection");
  BIO* bio = BIO_new(method);
  if (bio == nullptr) return OutOfMemory("bio_new", "a socket BIO");
  // The descriptor is the BIO's only state, kept in its data pointer.
  BIO_set_data(bio, reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
                        static_cast<intptr_t>(fd)));
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl.get(), bio, bio);  // one reference, owned by the SSL from here on
  return ssl;
}

void ShutdownTls(SSL* ssl) {
  if (ssl == nullptr || SSL_in_init(ssl) != 0) return;  // no completed handshake to close
  const int state = SSL_get_shutdown(ssl);
  if ((state & SSL_SENT_SHUTDOWN) != 0) return;
  ERR_clear_error();
  SSL_shutdown(ssl);
  ERR_clear_error();
}

}  // namespace weir::serve
