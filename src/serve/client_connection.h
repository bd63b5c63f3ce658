#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <optional>
#include <string_view>

#include "base/status.h"
#include "serve/pgwire/protocol.h"
#include "serve/tls_socket.h"

namespace weir::serve {

// Threading: belongs to its connection's thread; the flags it reads are the server's.
// One client connection of weir serve: a socket, optionally wrapped in TLS. No write raises
// SIGPIPE: plain sends use MSG_NOSIGNAL and TLS goes through the MSG_NOSIGNAL BIO of tls_socket.h.
// Neither reads nor writes block: each waits for the socket in 200 ms slices under its deadline and
// the server's flags. Before authentication every read and write (and the TLS handshake) runs
// under one deadline, the authentication timeout, fixed at accept; afterwards a read waits up
// to the idle timeout and a write that makes no progress for the send timeout fails.
struct ClientConnection {
  // Bytes read per recv before authentication: with the 10,000-byte message cap, what an
  // unauthenticated peer makes the server hold stays a few KiB (the session's reads use 64 KiB).
  static constexpr size_t kPreAuthenticationReadBytes = 4096;

  int fd = -1;
  TlsPtr ssl;
  bool tls_failed = false;  // an SSL call failed: no close_notify
  pgwire::FrameReader reader;
  bool authenticated = false;
  std::chrono::steady_clock::time_point authentication_deadline;
  std::chrono::milliseconds read_timeout{0};  // after authentication; 0 = none
  std::chrono::milliseconds send_timeout{0};  // after authentication; 0 = none
  bool timed_out = false;                     // the last read failed at its deadline
  bool send_timed_out = false;                // a write failed at its deadline
  const std::atomic<bool>* stopping = nullptr;
  const std::atomic<bool>* abort_writes = nullptr;
  const std::atomic<bool>* terminated = nullptr;  // pg_terminate_backend of this session
  ClientConnection(int socket, size_t max_message_bytes, const std::atomic<bool>* server_stopping,
                   const std::atomic<bool>* server_abort_writes,
                   std::chrono::steady_clock::time_point authentication_ends)
      : fd(socket),
        reader(max_message_bytes),
        authentication_deadline(authentication_ends),
        stopping(server_stopping),
        abort_writes(server_abort_writes) {}
  ~ClientConnection() {
    if (ssl != nullptr && !tls_failed) ShutdownTls(ssl.get());
    // The socket itself is closed by the connection's thread, after the connection is gone.
  }

  // The TLS handshake after the 'S' answer to an SSLRequest, under the authentication
  // deadline: the BIO never blocks, so a peer that stalls mid-handshake is waited for here,
  // where the deadline and the server stopping end the wait.
  bool StartTls(SSL_CTX* context) {
    auto made = NewServerTls(context, fd);
    if (!made.ok()) return false;
    ssl = std::move(*made);
    while (true) {
      ERR_clear_error();
      const int result = SSL_accept(ssl.get());
      if (result == 1) return true;
      const int error = SSL_get_error(ssl.get(), result);
      const bool waited = error == SSL_ERROR_WANT_READ    ? Await(POLLIN, ReadDeadline())
                          : error == SSL_ERROR_WANT_WRITE ? Await(POLLOUT, ReadDeadline())
                                                          : false;
      if (!waited) {
        tls_failed = true;
        ERR_clear_error();
        return false;
      }
    }
  }

  bool Write(std::string_view bytes) {
    size_t sent = 0;
    auto deadline = WriteDeadline();
    while (sent < bytes.size()) {
      short wanted = 0;  // NOLINT(runtime/int): poll's type
      int n = 0;
      if (ssl != nullptr) {
        ERR_clear_error();
        n = SSL_write(ssl.get(), bytes.data() + sent, static_cast<int>(bytes.size() - sent));
        if (n <= 0) {
          const int error = SSL_get_error(ssl.get(), n);
          wanted = error == SSL_ERROR_WANT_WRITE  ? POLLOUT
                   : error == SSL_ERROR_WANT_READ ? POLLIN
                                                  : 0;
          if (wanted == 0) {
            tls_failed = true;
            ERR_clear_error();
            return false;
          }
        }
      } else {
        const ssize_t written =
            ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (written < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        if (written < 0 && errno != EINTR) wanted = POLLOUT;
        n = static_cast<int>(written);
      }
      if (n > 0) {
        sent += static_cast<size_t>(n);
        deadline = WriteDeadline();  // progress: the send timeout starts again
        continue;
      }
      if (wanted == 0) continue;  // EINTR
      // Past the shutdown grace a peer that does not read is not waited for any more.
      if (abort_writes != nullptr && abort_writes->load()) return Abandon();
      if (!Await(wanted, deadline, /*writing=*/true)) return Abandon();
    }
    return true;
  }
  bool Write(pgwire::MessageWriter& writer) { return Write(writer.Take()); }

  // A write given up half-way: the stream is cut mid-message, so no close_notify after it.
  bool Abandon() {
    if (ssl != nullptr) tls_failed = true;
    ERR_clear_error();
    return false;
  }

  std::chrono::steady_clock::time_point ReadDeadline() const {
    if (!authenticated) return authentication_deadline;
    return read_timeout.count() > 0 ? std::chrono::steady_clock::now() + read_timeout
                                    : std::chrono::steady_clock::time_point::max();
  }
  std::chrono::steady_clock::time_point WriteDeadline() const {
    if (!authenticated) return authentication_deadline;
    return send_timeout.count() > 0 ? std::chrono::steady_clock::now() + send_timeout
                                    : std::chrono::steady_clock::time_point::max();
  }

  // Waits until the socket is ready for `events`, in 200 ms slices; false on an error, at the
  // deadline (sets timed_out or send_timed_out), when the server stops (reads only: a write
  // in progress is the end of a result the grace period lets finish) or once writes are
  // abandoned.
  bool Await(short events,  // NOLINT(runtime/int): poll's type
             std::chrono::steady_clock::time_point deadline, bool writing = false) {
    while (true) {
      pollfd waiting{fd, events, 0};
      const int ready = ::poll(&waiting, 1, 200);
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return false;
      if (!writing && stopping != nullptr && stopping->load()) return false;
      if (!writing && terminated != nullptr && terminated->load()) return false;
      if (writing && abort_writes != nullptr && abort_writes->load()) return false;
      if (std::chrono::steady_clock::now() >= deadline) {
        (writing ? send_timed_out : timed_out) = true;
        return false;
      }
    }
  }

  // Reads more bytes into the frame reader; false on EOF, error, the read deadline, or the
  // server stopping. A TLS record that arrives in pieces is waited for like any silence.
  bool Fill() {
    const auto deadline = ReadDeadline();
    char buffer[65536];
    const size_t wanted = authenticated ? sizeof buffer : kPreAuthenticationReadBytes;
    while (true) {
      if ((ssl == nullptr || SSL_pending(ssl.get()) == 0) && !Await(POLLIN, deadline)) {
        return false;
      }
      if (ssl == nullptr) {
        const ssize_t n = ::recv(fd, buffer, wanted, MSG_DONTWAIT);
        if (n > 0) {
          reader.Feed(std::string_view(buffer, static_cast<size_t>(n)));
          return true;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        return false;
      }
      ERR_clear_error();
      const int n = SSL_read(ssl.get(), buffer, static_cast<int>(wanted));
      if (n > 0) {
        reader.Feed(std::string_view(buffer, static_cast<size_t>(n)));
        return true;
      }
      const int error = SSL_get_error(ssl.get(), n);
      if (error == SSL_ERROR_WANT_READ) continue;  // part of a record: wait for the rest
      if (error == SSL_ERROR_WANT_WRITE) {         // a TLS 1.3 key update answer that must go first
        if (!Await(POLLOUT, deadline)) return false;
        continue;
      }
      // A clean close_notify from the peer still allows ours; anything else does not.
      tls_failed = error != SSL_ERROR_ZERO_RETURN;
      ERR_clear_error();
      return false;
    }
  }

  // The next message (typed or startup); nullopt when the peer went away.
  Result<std::optional<pgwire::Frame>> Read(bool startup) {
    while (true) {
      WEIR_ASSIGN_OR_RAISE(auto frame, startup ? reader.NextStartup() : reader.Next());
      if (frame) return frame;
      if (!Fill()) return std::optional<pgwire::Frame>();
    }
  }

  // From here on: the session's message limit, its idle timeout and the send timeout.
  void Authenticated(size_t max_message_bytes, std::chrono::milliseconds send) {
    authenticated = true;
    reader.set_max_message_bytes(max_message_bytes);
    send_timeout = send;
    SetReadTimeout(std::chrono::milliseconds(0));
  }

  // 0 = no deadline (after authentication only).
  void SetReadTimeout(std::chrono::milliseconds timeout) {
    read_timeout = timeout;
    timed_out = false;
  }
};

}  // namespace weir::serve
