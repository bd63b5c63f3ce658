// One HTTP exchange on libcurl, bounded against hostile servers: a connect timeout, a total
// timeout, a cap on the response body, and a stop token that aborts a transfer in progress.
//
// A failure says whether the request may have reached the server (HttpFailure::sent): a request
// never sent (no connection) can be repeated as is; one that was sent and got no complete
// answer (timeout, reset, oversized body, stop) has an unknown effect, which matters for
// mutations. There is no retry here: callers run single attempts under base/retry.h. (Requests
// other than GET and HEAD use a fresh connection: libcurl re-sends a request on its own when a
// reused connection dies unanswered, which for a commit would be a second commit.)
//
// Threading: an HttpClient is used by one thread at a time (it owns one curl easy handle, which
// keeps connections alive between requests); the stop token may be requested from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace weir::lake::iceberg {

struct HttpLimits {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{60'000};
  int64_t max_response_bytes = 64 << 20;
};

struct HttpRequest {
  std::string method = "GET";  // GET, POST, HEAD, DELETE
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// Why an exchange produced no complete response.
enum class HttpFailureKind {
  kConnect,    // no connection (refused, unreachable, name not resolved, connect timeout)
  kTimeout,    // the total timeout passed
  kTransport,  // reset, closed early, malformed response
  kTooLarge,   // the body passed HttpLimits::max_response_bytes
  kStopped,    // the stop token was requested
};

std::string_view ToString(HttpFailureKind kind);

// The ErrorDetail of a failed exchange (source "http", code = ToString(kind)); retriable.
class HttpFailure : public ErrorDetail {
 public:
  HttpFailure(HttpFailureKind kind, bool sent);
  HttpFailureKind kind() const { return kind_; }
  // True when some of the request was written to the server: its effect is unknown.
  bool sent() const { return sent_; }

 private:
  HttpFailureKind kind_;
  bool sent_;
};

// The HttpFailure of `status`, or nullptr.
const HttpFailure* GetHttpFailure(const Status& status);

class HttpClient {
 public:
  static Result<std::unique_ptr<HttpClient>> Make(HttpLimits limits);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` and returns the response, whatever its status code. Errors carry an
  // HttpFailure. `stop` is checked while the transfer runs (at least every 100 ms).
  Result<HttpResponse> Send(const HttpRequest& request, const std::stop_token& stop = {});

  const HttpLimits& limits() const { return limits_; }

 private:
  struct Handle;
  HttpClient(HttpLimits limits, std::unique_ptr<Handle> handle);
  HttpLimits limits_;
  std::unique_ptr<Handle> handle_;
};

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string UrlEncode(std::string_view text);
// application/x-www-form-urlencoded body of `fields`.
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace weir::lake::iceberg
