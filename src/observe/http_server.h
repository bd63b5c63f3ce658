// The operations HTTP endpoint on one port: GET /metrics (Prometheus text 0.0.4), /healthz,
// /readyz, /status (HTML, `?refresh=N` seconds, 0 for none; served with a Content-Security-Policy
// that lets nothing load) and /status.json; 404 for anything else.
//
// Lifecycle: Make() validates the options; Start() binds and starts serving on a background
// thread; Stop() (also run by the destructor) closes the socket and joins the threads. Start()
// and Stop() are called from one control thread (the app's), Stop() any number of times.
//
// Threading: requests are served on the server's own threads (one accept thread and a small
// worker pool). The callbacks run there, concurrently with the pipeline, so they must only read
// state the pipeline publishes without blocking (atomics, or a snapshot behind a short lock);
// they must never wait for a pipeline thread. The registry and the callbacks' captures must
// outlive the server.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "observe/metrics_registry.h"
#include "observe/status_model.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace weir::observe {

// The answer of a health or readiness probe; `detail` says why when not ok.
struct ProbeResult {
  bool ok = false;
  std::string detail;
};

struct HttpServerOptions {
  std::string host = "0.0.0.0";
  int port = 0;  // 0 picks a free port; port() tells which
  MetricsRegistry* registry = nullptr;
  std::function<ProbeResult()> health;     // /healthz: the loop is alive
  std::function<ProbeResult()> readiness;  // /readyz: validated, assigned, not draining
  const StatusModel* status = nullptr;     // /status, /status.json (optional; 404 without)
};

class HttpServer {
 public:
  // Checks the options (registry and both probes given, port within 0..65535).
  static Result<std::unique_ptr<HttpServer>> Make(HttpServerOptions options);

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port and starts serving. Fails, naming the address, when the port cannot be
  // bound (in use, not permitted) or the server is already running.
  Status Start();

  // Stops serving and joins the server's threads. Idempotent; Start() may be called again.
  void Stop();

  // The bound port (the chosen one when options.port was 0); 0 before the first Start().
  int port() const { return port_.load(); }

 private:
  explicit HttpServer(HttpServerOptions options);

  void Route(httplib::Server& server) const;

  const HttpServerOptions options_;
  std::unique_ptr<httplib::Server> server_;  // while started
  std::thread listen_thread_;                // while started
  std::atomic<int> port_{0};
};

}  // namespace weir::observe
