#include "serve/listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace weir::serve {
namespace {

Status HostError(const std::string& host, int port, const std::string& why) {
  return ClassifiedError(ErrorClass::kFatal, "os", "listen",
                         fmt::format("serve.host \"{}\" (port {}): {}", host, port, why));
}

std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* bytes =
      address->sa_family == AF_INET6
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(address)->sin_addr);
  if (::inet_ntop(address->sa_family, bytes, text, sizeof text) == nullptr) return "?";
  return text;
}

void SetPort(sockaddr* address, int port) {
  const uint16_t network = htons(static_cast<uint16_t>(port));
  if (address->sa_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = network;
  } else {
    reinterpret_cast<sockaddr_in*>(address)->sin_port = network;
  }
}

struct AddrInfoDeleter {
  void operator()(addrinfo* list) const { ::freeaddrinfo(list); }
};

}  // namespace

Result<Listener> Listener::Open(const std::string& host, int port) {
  if (host.empty()) {
    return HostError(host, port, "empty (0.0.0.0 or :: listen on every interface)");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int error = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); error != 0) {
    return HostError(
        host, port,
        fmt::format("not an IPv4 or IPv6 address, and it does not resolve as a host "
                    "name ({})",
                    error == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, AddrInfoDeleter> list(found);
  Listener listener;
  for (const addrinfo* entry = list.get(); entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family != AF_INET && entry->ai_family != AF_INET6) continue;
    const std::string text = AddressText(entry->ai_addr);
    bool seen = false;
    for (const auto& address : listener.addresses_) seen = seen || address == text;
    if (seen) continue;  // getaddrinfo lists an address once per protocol it knows
    ScopedFd socket(::socket(entry->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (socket.get() < 0) {
      return HostError(host, port, fmt::format("socket() for {}: {}", text, std::strerror(errno)));
    }
    const int yes = 1;
    if (::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0 ||
        (entry->ai_family == AF_INET6 &&
         ::setsockopt(socket.get(), IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes) != 0)) {
      return HostError(host, port,
                       fmt::format("setsockopt() for {}: {}", text, std::strerror(errno)));
    }
    sockaddr_storage address{};
    std::memcpy(&address, entry->ai_addr, entry->ai_addrlen);
    // Port 0: the first socket picks a free port, the others take the same one.
    if (port == 0 && listener.port_ != 0) {
      SetPort(reinterpret_cast<sockaddr*>(&address), listener.port_);
    }
    if (::bind(socket.get(), reinterpret_cast<sockaddr*>(&address), entry->ai_addrlen) != 0 ||
        ::listen(socket.get(), 128) != 0) {
      return HostError(host, port,
                       fmt::format("cannot listen on {}: {}", text, std::strerror(errno)));
    }
    socklen_t length = sizeof address;
    if (::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return HostError(host, port,
                       fmt::format("getsockname() for {}: {}", text, std::strerror(errno)));
    }
    listener.port_ =
        ntohs(address.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&address)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&address)->sin_port);
    listener.sockets_.push_back(std::move(socket));
    listener.addresses_.push_back(text);
  }
  if (listener.sockets_.empty()) {
    return HostError(host, port, "resolves to no IPv4 or IPv6 address");
  }
  listener.wake_ = ScopedFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (listener.wake_.get() < 0) {
    return HostError(host, port, fmt::format("eventfd(): {}", std::strerror(errno)));
  }
  listener.ready_.assign(listener.sockets_.size(), false);
  return listener;
}

bool Listener::Wait() {
  std::vector<pollfd> waiting;
  for (const auto& socket : sockets_) waiting.push_back({socket.get(), POLLIN, 0});
  waiting.push_back({wake_.get(), POLLIN, 0});
  while (true) {
    const int ready = ::poll(waiting.data(), waiting.size(), -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {  // Accept reports it, so the caller backs off
      poll_error_ = errno;
      return true;
    }
    poll_error_ = 0;
    if (waiting.back().revents != 0) return false;
    for (size_t i = 0; i < sockets_.size(); ++i) ready_[i] = waiting[i].revents != 0;
    return true;
  }
}

int Listener::Accept() {
  // Round robin over the sockets poll found ready; the last errno when none gave a connection.
  if (poll_error_ != 0) {
    errno = poll_error_;
    return -1;
  }
  int error = EAGAIN;
  for (size_t tried = 0; tried < sockets_.size(); ++tried) {
    const size_t i = (next_ + tried) % sockets_.size();
    if (!ready_[i]) continue;
    const int fd = ::accept4(sockets_[i].get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      next_ = i + 1;
      return fd;
    }
    ready_[i] = false;
    if (errno != EAGAIN && errno != EWOULDBLOCK) error = errno;
  }
  errno = error;
  return -1;
}

void Listener::Wake() {
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);  // an eventfd write fails only at overflow
}

}  // namespace weir::serve
