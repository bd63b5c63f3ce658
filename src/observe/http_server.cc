#include "observe/http_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include <httplib.h>

#include "observe/status_page.h"

namespace weir::observe {
namespace {

constexpr char kMetricsContentType[] = "text/plain; version=0.0.4; charset=utf-8";
constexpr char kTextContentType[] = "text/plain; charset=utf-8";
constexpr char kHtmlContentType[] = "text/html; charset=utf-8";
constexpr char kJsonContentType[] = "application/json";
constexpr int kDefaultRefreshSeconds = 15;

// The refresh of /status: `?refresh=N` within 0..3600, the default otherwise.
int RefreshSeconds(const httplib::Request& request) {
  if (!request.has_param("refresh")) return kDefaultRefreshSeconds;
  const std::string text = request.get_param_value("refresh");
  if (text.empty() || text.size() > 4 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return kDefaultRefreshSeconds;
  }
  return std::min(std::stoi(text), 3600);
}

void NoStatusModel(httplib::Response& response) {
  response.status = 404;
  response.set_content("no status page\n", kTextContentType);
}

// Worker threads answering requests; scrapes and probes are small and rare.
constexpr size_t kWorkerThreads = 2;

// A probe's answer: 200 "ok" (with the detail after a colon when there is one), or 503 with
// the detail.
void AnswerProbe(const ProbeResult& probe, httplib::Response& response) {
  response.status = probe.ok ? 200 : 503;
  std::string body;
  if (probe.ok) {
    body = probe.detail.empty() ? "ok" : "ok: " + probe.detail;
  } else {
    body = probe.detail.empty() ? "not ok" : probe.detail;
  }
  body += '\n';
  response.set_content(body, kTextContentType);
}

// httplib's default also sets SO_REUSEPORT, which lets a second server bind a port that is
// already serving; SO_REUSEADDR alone still allows a quick restart over TIME_WAIT.
void SetSocketOptions(int socket) {
  int yes = 1;
  setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Make(HttpServerOptions options) {
  if (options.registry == nullptr) return Status::Invalid("http server: no metrics registry");
  if (!options.health) return Status::Invalid("http server: no health callback");
  if (!options.readiness) return Status::Invalid("http server: no readiness callback");
  if (options.port < 0 || options.port > 65535) {
    return Status::Invalid("http server: port ", options.port, " is outside 0..65535");
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(options)));
}

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(httplib::Server& server) const {
  server.Get("/metrics", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(options_.registry->Render(), kMetricsContentType);
  });
  server.Get("/healthz", [this](const httplib::Request&, httplib::Response& response) {
    AnswerProbe(options_.health(), response);
  });
  server.Get("/readyz", [this](const httplib::Request&, httplib::Response& response) {
    AnswerProbe(options_.readiness(), response);
  });
  server.Get("/status", [this](const httplib::Request& request, httplib::Response& response) {
    if (options_.status == nullptr) return NoStatusModel(response);
    response.set_header("Content-Security-Policy", kStatusPageCsp);
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_header("Referrer-Policy", "no-referrer");
    response.set_header("Cache-Control", "no-store");
    response.set_content(RenderStatusHtml(options_.status->Snapshot(), RefreshSeconds(request)),
                         kHtmlContentType);
  });
  server.Get("/status.json", [this](const httplib::Request&, httplib::Response& response) {
    if (options_.status == nullptr) return NoStatusModel(response);
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_header("Cache-Control", "no-store");
    response.set_content(RenderStatusJson(options_.status->Snapshot()), kJsonContentType);
  });
}

Status HttpServer::Start() {
  const std::string address = options_.host + ":" + std::to_string(options_.port);
  if (server_ != nullptr) {
    return Status::Invalid("http server on ", address, " is already running");
  }
  auto server = std::make_unique<httplib::Server>();
  server->new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server->set_socket_options(SetSocketOptions);
  server->set_keep_alive_timeout(1);  // so Stop() does not wait long for idle connections
  server->set_read_timeout(5, 0);
  server->set_write_timeout(5, 0);
  server->set_payload_max_length(64 << 10);  // every route is a GET; bodies are refused
  Route(*server);

  errno = 0;
  int bound_port = options_.port;
  bool bound = false;
  if (options_.port == 0) {
    bound_port = server->bind_to_any_port(options_.host);
    bound = bound_port > 0;
  } else {
    bound = server->bind_to_port(options_.host, options_.port);
  }
  if (!bound) {
    const int error = errno;
    return ClassifiedError(ErrorClass::kFatal, "errno", std::to_string(error),
                           "http server cannot bind " + address + ": " +
                               (error != 0 ? std::strerror(error) : "bind failed"));
  }
  port_.store(bound_port);

  // stop() only acts on a running server, so wait until the accept loop is up before handing
  // control back; otherwise a quick Stop() would be lost and the join would hang.
  auto listen_returned = std::make_shared<std::atomic<bool>>(false);
  httplib::Server* raw = server.get();
  listen_thread_ = std::thread([raw, listen_returned] {
    raw->listen_after_bind();
    listen_returned->store(true);
  });
  while (!raw->is_running() && !listen_returned->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_ = std::move(server);
  if (!server_->is_running()) {
    Stop();
    return Status::IOError("http server on ", address, " stopped right after starting");
  }
  return Status::OK();
}

void HttpServer::Stop() {
  if (server_ == nullptr) return;
  server_->stop();
  if (listen_thread_.joinable()) listen_thread_.join();
  server_.reset();
}

}  // namespace weir::observe
