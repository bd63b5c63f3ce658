#include "serve/tls_socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "serve/auth/tls.h"

namespace weir::serve {
namespace {

// A connected pair of sockets, the server's end and the client's, closed on destruction.
struct SocketPair {
  int server = -1;
  int client = -1;
  SocketPair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    server = fds[0];
    client = fds[1];
  }
  ~SocketPair() {
    if (server >= 0) ::close(server);
    CloseClient();
  }
  void CloseClient() {
    if (client >= 0) ::close(client);
    client = -1;
  }
};

class TlsSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The default disposition: a write that raises SIGPIPE ends this test binary.
    ::signal(SIGPIPE, SIG_DFL);
    dir_ = std::filesystem::temp_directory_path() /
           ("weir-serve-tls-socket-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const std::string cert = (dir_ / "server.crt").string(), key = (dir_ / "server.key").string();
    ASSERT_TRUE(auth::EnsureSelfSignedCertificate(cert, key, "weir-test").ok());
    auto made = auth::MakeServerContext(cert, key);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    server_context_ = std::move(*made);
    client_context_ = SSL_CTX_new(TLS_client_method());
    ASSERT_NE(client_context_, nullptr);
    SSL_CTX_set_verify(client_context_, SSL_VERIFY_NONE, nullptr);
  }
  void TearDown() override {
    SSL_CTX_free(client_context_);
    std::filesystem::remove_all(dir_);
  }

  // Handshakes both ends (the client on a thread of its own); the client's SSL. The server's
  // reads never block, so it waits for the client's bytes itself, as the server does.
  SSL* Handshake(SSL* server, int server_fd, int client_fd, int* accepted) {
    SSL* client = SSL_new(client_context_);
    SSL_set_fd(client, client_fd);
    std::thread connecting([client] { SSL_connect(client); });
    while ((*accepted = SSL_accept(server)) != 1 &&
           SSL_get_error(server, *accepted) == SSL_ERROR_WANT_READ) {
      pollfd readable{server_fd, POLLIN, 0};
      ::poll(&readable, 1, 1000);
    }
    connecting.join();
    return client;
  }

  std::filesystem::path dir_;
  auth::SslContextPtr server_context_;
  SSL_CTX* client_context_ = nullptr;
};

TEST_F(TlsSocketTest, HandshakesAndCarriesBytesBothWays) {
  SocketPair sockets;
  auto server = NewServerTls(server_context_.get(), sockets.server);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  int accepted = 0;
  SSL* client = Handshake(server->get(), sockets.server, sockets.client, &accepted);
  ASSERT_EQ(accepted, 1);
  ASSERT_EQ(SSL_write(client, "ping", 4), 4);
  char buffer[16] = {};
  ASSERT_EQ(SSL_read(server->get(), buffer, sizeof buffer), 4);
  EXPECT_EQ(std::string(buffer, 4), "ping");
  ASSERT_EQ(SSL_write(server->get(), "pong!", 5), 5);
  ASSERT_EQ(SSL_read(client, buffer, sizeof buffer), 5);
  EXPECT_EQ(std::string(buffer, 5), "pong!");
  // The client's close_notify reads as a clean end, and ours can still be sent.
  SSL_shutdown(client);
  EXPECT_EQ(SSL_read(server->get(), buffer, sizeof buffer), 0);
  EXPECT_EQ(SSL_get_error(server->get(), 0), SSL_ERROR_ZERO_RETURN);
  ShutdownTls(server->get());
  EXPECT_NE(SSL_get_shutdown(server->get()) & SSL_SENT_SHUTDOWN, 0);
  SSL_free(client);
}

TEST_F(TlsSocketTest, WritesToAClosedPeerFailWithoutSigpipe) {
  SocketPair sockets;
  auto server = NewServerTls(server_context_.get(), sockets.server);
  ASSERT_TRUE(server.ok());
  int accepted = 0;
  SSL* client = Handshake(server->get(), sockets.server, sockets.client, &accepted);
  ASSERT_EQ(accepted, 1);
  SSL_free(client);
  sockets.CloseClient();
  // With OpenSSL's own socket BIO this write is write(2) on a closed peer: SIGPIPE.
  const std::string chunk(16384, 'x');
  ERR_clear_error();
  EXPECT_LE(SSL_write(server->get(), chunk.data(), static_cast<int>(chunk.size())), 0);
  EXPECT_EQ(SSL_get_error(server->get(), -1), SSL_ERROR_SYSCALL);
  EXPECT_EQ(errno, EPIPE);
  ERR_clear_error();
}

TEST_F(TlsSocketTest, AHandshakeWithAClosedPeerFailsWithoutSigpipe) {
  SocketPair sockets;
  // A ClientHello the peer sent before closing: the server's answer goes to a closed socket.
  {
    ASSERT_EQ(::fcntl(sockets.client, F_SETFL, O_NONBLOCK), 0);
    SSL* client = SSL_new(client_context_);
    SSL_set_fd(client, sockets.client);
    SSL_set_connect_state(client);
    // Sends the ClientHello, then would block waiting for the answer.
    EXPECT_EQ(SSL_do_handshake(client), -1);
    EXPECT_EQ(SSL_get_error(client, -1), SSL_ERROR_WANT_READ);
    SSL_free(client);
  }
  sockets.CloseClient();
  auto server = NewServerTls(server_context_.get(), sockets.server);
  ASSERT_TRUE(server.ok());
  ERR_clear_error();
  EXPECT_NE(SSL_accept(server->get()), 1);
  ERR_clear_error();
}

TEST_F(TlsSocketTest, ReadsOfAPartialRecordReturnWantReadInsteadOfBlocking) {
  SocketPair sockets;
  auto server = NewServerTls(server_context_.get(), sockets.server);
  ASSERT_TRUE(server.ok());
  int accepted = 0;
  SSL* client = Handshake(server->get(), sockets.server, sockets.client, &accepted);
  ASSERT_EQ(accepted, 1);
  // The first 3 bytes of an application-data record header, and then nothing: a blocking read
  // would wait here for ever (this test would hang).
  ASSERT_EQ(::send(sockets.client, "\x17\x03\x03", 3, 0), 3);
  char buffer[16];
  ERR_clear_error();
  const int n = SSL_read(server->get(), buffer, sizeof buffer);
  EXPECT_EQ(n, -1);
  EXPECT_EQ(SSL_get_error(server->get(), n), SSL_ERROR_WANT_READ);
  SSL_free(client);
}

TEST_F(TlsSocketTest, ShutdownWithAClosedPeerDoesNotRaiseSigpipe) {
  SocketPair sockets;
  auto server = NewServerTls(server_context_.get(), sockets.server);
  ASSERT_TRUE(server.ok());
  int accepted = 0;
  SSL* client = Handshake(server->get(), sockets.server, sockets.client, &accepted);
  ASSERT_EQ(accepted, 1);
  SSL_free(client);
  sockets.CloseClient();
  // close_notify to a closed peer: EPIPE. With SIGPIPE this binary dies here (SetUp restored
  // the default disposition), which fails the test.
  ShutdownTls(server->get());
  EXPECT_NE(SSL_get_shutdown(server->get()) & SSL_SENT_SHUTDOWN, 0);
}

}  // namespace
}  // namespace weir::serve
