#include "serve/listener.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace weir::serve {
namespace {

// Connects to 127.0.0.1:`port`; the connected descriptor, or -1.
int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(Listener, AnIpv4AddressWithPortZeroPicksAFreePortAndAccepts) {
  auto listener = Listener::Open("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  EXPECT_GT(listener->port(), 0);
  EXPECT_EQ(listener->addresses(), std::vector<std::string>{"127.0.0.1"});
  ScopedFd client(ConnectLoopback(listener->port()));
  ASSERT_GE(client.get(), 0);
  ASSERT_TRUE(listener->Wait());
  ScopedFd accepted(listener->Accept());
  EXPECT_GE(accepted.get(), 0);
  // Nothing else is pending: EAGAIN, not a block.
  EXPECT_EQ(listener->Accept(), -1);
  EXPECT_EQ(errno, EAGAIN);
}

TEST(Listener, WakeEndsAWaitFromAnotherThread) {
  auto listener = Listener::Open("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  std::thread waker([&] { listener->Wake(); });
  EXPECT_FALSE(listener->Wait());
  waker.join();
  EXPECT_FALSE(listener->Wait());  // and every later one
}

TEST(Listener, AHostThatIsNeitherAnAddressNorAResolvableNameIsAnErrorNamingTheSetting) {
  for (const std::string host : {"no-such-host.invalid", "10.0.0.300"}) {
    auto listener = Listener::Open(host, 5999);
    ASSERT_FALSE(listener.ok()) << host;
    EXPECT_EQ(listener.status().message().rfind(
                  "serve.host \"" + host +
                      "\" (port 5999): not an IPv4 or IPv6 address, and it does not resolve as "
                      "a host name (",
                  0),
              0u)
        << listener.status().message();
  }
  auto empty = Listener::Open("", 5999);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(),
            "serve.host \"\" (port 5999): empty (0.0.0.0 or :: listen on every interface)");
  auto foreign = Listener::Open("192.0.2.1", 5999);  // TEST-NET-1: no host has it
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().message(),
            "serve.host \"192.0.2.1\" (port 5999): cannot listen on 192.0.2.1: Cannot assign "
            "requested address");
}

TEST(Listener, AnIpv6AddressIsNotAlsoIpv4) {
  auto listener = Listener::Open("::1", 0);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  EXPECT_EQ(listener->addresses(), std::vector<std::string>{"::1"});
  ScopedFd ipv4(ConnectLoopback(listener->port()));
  EXPECT_EQ(ipv4.get(), -1);  // the old code listened on 0.0.0.0
}

}  // namespace
}  // namespace weir::serve
