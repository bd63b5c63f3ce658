// The listening sockets of `weir serve`: serve.host (an IPv4 or IPv6 address, or a host name
// resolved once, at Open) and serve.port, one socket per address the host stands for.
//
// A host that does not resolve, or an address that cannot be bound, fails Open with a message
// naming serve.host: never a silent fall-back to every interface. `0.0.0.0` and `::` are the
// only ways to listen on every interface (IPv4 and IPv6 respectively; IPv6 sockets are
// IPV6_V6ONLY, so a name that resolves to both families gets a socket per family).
//
// Threading: Open on any thread; Wait and Accept on one thread (the accept loop); Wake from any
// thread, also while Wait runs. The descriptors are closed by the destructor.
#pragma once

#include <string>
#include <vector>

#include "base/scoped_fd.h"
#include "base/status.h"

namespace weir::serve {

class Listener {
 public:
  // Resolves `host`, then binds and listens on every address it stands for (port 0: a free
  // port, the same one for all of them when the first is bound).
  static Result<Listener> Open(const std::string& host, int port);

  int port() const { return port_; }
  // The addresses listened on, as text ("127.0.0.1", "::1").
  const std::vector<std::string>& addresses() const { return addresses_; }
  // Waits until a connection can be accepted or Wake is called; false when woken.
  bool Wait();
  // Accepts one pending connection (close-on-exec, blocking); -1 with errno set when none
  // could be accepted (EAGAIN: nothing pending any more; else accept's or poll's error).
  int Accept();
  void Wake();  // ends the current and every later Wait

 private:
  Listener() = default;

  std::vector<ScopedFd> sockets_;
  std::vector<std::string> addresses_;
  ScopedFd wake_;            // an eventfd
  size_t next_ = 0;          // where Accept starts looking, so no socket starves the others
  std::vector<bool> ready_;  // per socket: readable at the last Wait
  int poll_error_ = 0;       // errno of the last Wait's poll, 0 if it worked
  int port_ = 0;
};

}  // namespace weir::serve
