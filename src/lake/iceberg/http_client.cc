#include "lake/iceberg/http_client.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include <curl/curl.h>

namespace weir::lake::iceberg {
namespace {

constexpr int kPollMillis = 100;  // how often a transfer in progress looks at the stop token

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  HttpResponse response;
  int64_t max_bytes = 0;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (static_cast<int64_t>(transfer->response.body.size() + bytes) > transfer->max_bytes) {
    transfer->too_large = true;
    return 0;  // makes curl fail the transfer with CURLE_WRITE_ERROR
  }
  transfer->response.body.append(data, bytes);
  return bytes;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    transfer->response.headers.clear();  // a new response (after a 100 Continue)
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    while (!value.empty() &&
           (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
      value.remove_suffix(1);
    }
    transfer->response.headers[name] = std::string(value);
  }
  return size * count;
}

Status Failure(HttpFailureKind kind, bool sent, const std::string& url, std::string why) {
  std::string message = std::string("HTTP ") + std::string(ToString(kind)) + " on " + url +
                        (sent ? " (request sent: outcome unknown)" : " (request not sent)") + ": " +
                        why;
  return Status(arrow::StatusCode::IOError, std::move(message),
                std::make_shared<HttpFailure>(kind, sent));
}

}  // namespace

std::string_view ToString(HttpFailureKind kind) {
  switch (kind) {
    case HttpFailureKind::kConnect:
      return "connect";
    case HttpFailureKind::kTimeout:
      return "timeout";
    case HttpFailureKind::kTransport:
      return "transport";
    case HttpFailureKind::kTooLarge:
      return "too_large";
    case HttpFailureKind::kStopped:
      return "stopped";
  }
  return "unknown";
}

HttpFailure::HttpFailure(HttpFailureKind kind, bool sent)
    : ErrorDetail(ErrorClass::kRetriable, "http", std::string(iceberg::ToString(kind))),
      kind_(kind),
      sent_(sent) {}

const HttpFailure* GetHttpFailure(const Status& status) {
  return dynamic_cast<const HttpFailure*>(status.detail().get());
}

struct HttpClient::Handle {
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
  ~Handle() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }
};

HttpClient::HttpClient(HttpLimits limits, std::unique_ptr<Handle> handle)
    : limits_(limits), handle_(std::move(handle)) {}
HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Make(HttpLimits limits) {
  if (limits.connect_timeout.count() <= 0 || limits.total_timeout.count() <= 0 ||
      limits.max_response_bytes <= 0) {
    return Status::Invalid("HTTP limits must be positive");
  }
  GlobalInitOnce();
  auto handle = std::make_unique<Handle>();
  handle->multi = curl_multi_init();
  handle->easy = curl_easy_init();
  if (handle->multi == nullptr || handle->easy == nullptr) {
    return Status::OutOfMemory("curl handles");
  }
  return std::unique_ptr<HttpClient>(new HttpClient(limits, std::move(handle)));
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request, const std::stop_token& stop) {
  CURL* easy = handle_->easy;
  curl_easy_reset(easy);
  Transfer transfer;
  transfer.max_bytes = limits_.max_response_bytes;
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(limits_.connect_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(limits_.total_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
                   static_cast<curl_off_t>(limits_.max_response_bytes));
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");  // what curl can decode (gzip)
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
  if (request.method != "GET" && request.method != "HEAD") {
    // libcurl silently re-sends a request whose reused connection died before an answer came:
    // harmless for a read, a second commit for a mutation. A fresh connection is never retried.
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
  }
  if (request.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (request.method == "POST") {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");  // no 100-continue round trip
  for (const auto& [name, value] : request.headers) {
    headers = curl_slist_append(headers, (name + ": " + value).c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);

  curl_multi_add_handle(handle_->multi, easy);
  CURLcode result = CURLE_OK;
  bool stopped = false;
  while (true) {
    int running = 0;
    if (curl_multi_perform(handle_->multi, &running) != CURLM_OK) {
      result = CURLE_SEND_ERROR;
      break;
    }
    if (running == 0) {
      int left = 0;
      CURLMsg* message = curl_multi_info_read(handle_->multi, &left);
      result = message != nullptr && message->msg == CURLMSG_DONE ? message->data.result
                                                                  : CURLE_RECV_ERROR;
      break;
    }
    if (stop.stop_requested()) {
      stopped = true;
      break;
    }
    curl_multi_poll(handle_->multi, nullptr, 0, kPollMillis, nullptr);
  }
  curl_multi_remove_handle(handle_->multi, easy);
  curl_slist_free_all(headers);

  long request_size = 0;
  curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &request_size);
  curl_off_t pretransfer = 0;
  curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
  // Counted as sent once curl began to transfer: a partly written request may have arrived.
  const bool sent = request_size > 0 || pretransfer > 0;
  if (stopped) return Failure(HttpFailureKind::kStopped, sent, request.url, "stop requested");
  if (transfer.too_large || result == CURLE_FILESIZE_EXCEEDED) {
    return Failure(HttpFailureKind::kTooLarge, sent, request.url,
                   "response body over " + std::to_string(limits_.max_response_bytes) + " bytes");
  }
  switch (result) {
    case CURLE_OK: {
      long code = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
      transfer.response.status = static_cast<int>(code);
      return std::move(transfer.response);
    }
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return Failure(HttpFailureKind::kConnect, false, request.url, curl_easy_strerror(result));
    case CURLE_OPERATION_TIMEDOUT:
      return Failure(sent ? HttpFailureKind::kTimeout : HttpFailureKind::kConnect, sent,
                     request.url, curl_easy_strerror(result));
    default:
      return Failure(HttpFailureKind::kTransport, sent, request.url, curl_easy_strerror(result));
  }
}

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out.push_back('&');
    out += UrlEncode(name) + "=" + UrlEncode(value);
  }
  return out;
}

}  // namespace weir::lake::iceberg
