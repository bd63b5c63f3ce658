#include "lake/iceberg/rest_catalog.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/uuid.h"

namespace weir::lake::iceberg {
namespace {

using Json = nlohmann::ordered_json;

Result<Json> ParseJson(const std::string& text, const std::string& what) {
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return CatalogError(CatalogErrorKind::kProtocol, 0, "",
                        what + ": the response is not JSON: " + text.substr(0, 200));
  }
  return json;
}

// A string member, or "" when absent or not a string.
std::string StringOf(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void MergeStrings(const Json& object, std::map<std::string, std::string>& into) {
  if (!object.is_object()) return;
  for (const auto& [key, value] : object.items()) {
    if (value.is_string()) into[key] = value.get<std::string>();
  }
}

// A LoadTableResult (load, create, commit): parsed once, the metadata document moved out whole
// (no text round trip; a commit's answer is ~100 KB at a few hundred snapshots).
Result<LoadedTable> ParseLoadTable(const HttpResponse& response, const std::string& what) {
  nlohmann::json json = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return CatalogError(CatalogErrorKind::kProtocol, response.status, "",
                        what + ": the response is not JSON: " + response.body.substr(0, 200));
  }
  const auto metadata = json.is_object() ? json.find("metadata") : json.end();
  if (metadata == json.end() || !metadata->is_object()) {
    return CatalogError(CatalogErrorKind::kProtocol, response.status, "",
                        what + ": the response has no table metadata");
  }
  LoadedTable table;
  if (const auto it = json.find("metadata-location"); it != json.end() && it->is_string()) {
    table.metadata_location = it->get<std::string>();
  }
  table.metadata = std::move(*metadata);
  if (const auto it = json.find("config"); it != json.end() && it->is_object()) {
    for (const auto& [key, value] : it->items()) {
      if (value.is_string()) table.config[key] = value.get<std::string>();
    }
  }
  return table;
}

// An HTTP failure of a call other than a commit: retriable, whether sent or not (reads are
// safe to repeat; a repeated create meets 409 and the caller loads what exists).
Status Unavailable(const Status& failure, const std::string& what) {
  return CatalogError(CatalogErrorKind::kUnavailable, 0, "", what + ": " + failure.message());
}

}  // namespace

Status RestError(const HttpResponse& response, const std::string& what) {
  std::string message;
  std::string type;
  Json json = Json::parse(response.body, nullptr, false);
  if (json.is_object() && json.contains("error") && json["error"].is_object()) {
    message = StringOf(json["error"], "message");
    type = StringOf(json["error"], "type");
  } else {
    message = response.body.substr(0, 200);
  }
  CatalogErrorKind kind;
  switch (response.status) {
    case 404:
      kind = CatalogErrorKind::kNotFound;
      break;
    case 409:
      kind = CatalogErrorKind::kAlreadyExists;
      break;
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
      kind = CatalogErrorKind::kUnavailable;
      break;
    default:
      kind = response.status >= 400 && response.status < 500 ? CatalogErrorKind::kRejected
                                                             : CatalogErrorKind::kProtocol;
  }
  std::string text = what + ": HTTP " + std::to_string(response.status);
  if (!type.empty()) text += " " + type;
  if (!message.empty()) text += ": " + message;
  return CatalogError(kind, response.status, type, std::move(text));
}

RestCatalog::RestCatalog(RestCatalogOptions options, std::unique_ptr<HttpClient> http)
    : options_(std::move(options)), http_(std::move(http)) {}

Result<std::unique_ptr<RestCatalog>> RestCatalog::Open(RestCatalogOptions options,
                                                       std::stop_token stop) {
  while (!options.uri.empty() && options.uri.back() == '/') options.uri.pop_back();
  if (!options.uri.starts_with("http://") && !options.uri.starts_with("https://")) {
    return Status::Invalid("Iceberg REST catalog uri '", options.uri,
                           "' must start with http:// or https://");
  }
  if (!options.credential.empty() && options.credential.find(':') == std::string::npos) {
    return Status::Invalid("Iceberg REST credential must be client_id:client_secret");
  }
  if (options.token_refresh_fraction <= 0 || options.token_refresh_fraction > 1) {
    return Status::Invalid("token_refresh_fraction must be in (0, 1]");
  }
  WEIR_ASSIGN_OR_RAISE(auto http, HttpClient::Make(options.limits));
  std::unique_ptr<RestCatalog> catalog(new RestCatalog(std::move(options), std::move(http)));
  catalog->stop_ = std::move(stop);
  if (!catalog->options_.credential.empty()) WEIR_RETURN_NOT_OK(catalog->FetchToken());
  WEIR_RETURN_NOT_OK(catalog->LoadConfig());
  // From here on a stop request does not refuse requests: the drain sends its loads and commits.
  catalog->stop_ = std::stop_token{};
  return catalog;
}

std::string RestCatalog::Url(const std::string& path) const { return options_.uri + path; }

Status RestCatalog::FetchToken() {
  const std::string& credential = options_.credential;
  const size_t colon = credential.find(':');
  HttpRequest request;
  request.method = "POST";
  request.url =
      options_.oauth2_server_uri.empty() ? Url("/v1/oauth/tokens") : options_.oauth2_server_uri;
  request.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                     {"Accept", "application/json"}};
  request.body = FormEncode({{"grant_type", "client_credentials"},
                             {"client_id", credential.substr(0, colon)},
                             {"client_secret", credential.substr(colon + 1)},
                             {"scope", options_.scope}});
  auto response = http_->Send(request, stop_);
  if (!response.ok()) return Unavailable(response.status(), "OAuth2 token request");
  if (response->status != 200) {
    // The OAuth2 error body is {"error": "...", "error_description": "..."}.
    Json json = Json::parse(response->body, nullptr, false);
    std::string why = json.is_object()
                          ? StringOf(json, "error") + " " + StringOf(json, "error_description")
                          : response->body.substr(0, 200);
    auto kind =
        response->status >= 500 ? CatalogErrorKind::kUnavailable : CatalogErrorKind::kRejected;
    return CatalogError(kind, response->status, StringOf(json, "error"),
                        "OAuth2 token request to " + request.url + " refused (HTTP " +
                            std::to_string(response->status) + "): " + why);
  }
  WEIR_ASSIGN_OR_RAISE(Json json, ParseJson(response->body, "OAuth2 token request"));
  access_token_ = StringOf(json, "access_token");
  if (access_token_.empty()) {
    return CatalogError(CatalogErrorKind::kProtocol, 200, "",
                        "OAuth2 token response has no access_token");
  }
  token_refresh_at_ = std::chrono::steady_clock::time_point::max();
  if (json.contains("expires_in") && json["expires_in"].is_number()) {
    const double seconds = json["expires_in"].get<double>() * options_.token_refresh_fraction;
    token_refresh_at_ = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  return Status::OK();
}

Status RestCatalog::RefreshTokenIfDue() {
  if (options_.credential.empty()) return Status::OK();
  if (!access_token_.empty() && std::chrono::steady_clock::now() < token_refresh_at_) {
    return Status::OK();
  }
  return FetchToken();
}

Status RestCatalog::ErrorOf(const HttpResponse& response, const std::string& what) const {
  Status status = RestError(response, what);
  if (response.status == 401 && !options_.credential.empty()) {
    // The token expired or was revoked (Call dropped it): the next attempt fetches a new one.
    return CatalogError(CatalogErrorKind::kUnavailable, 401, "", status.message());
  }
  return status;
}

Status RestCatalog::LoadConfig() {
  std::string path = "/v1/config";
  if (!options_.warehouse.empty()) path += "?warehouse=" + UrlEncode(options_.warehouse);
  auto called = Call("GET", path, "", false);
  if (!called.ok()) {
    if (CatalogErrorKindOf(called.status())) return called.status();  // the token fetch's
    return Unavailable(called.status(), "GET " + Url(path));
  }
  const HttpResponse& response = *called;
  if (response.status != 200) return ErrorOf(response, "GET " + Url(path));
  WEIR_ASSIGN_OR_RAISE(Json json, ParseJson(response.body, "GET /v1/config"));
  if (!json.is_object()) {
    return CatalogError(CatalogErrorKind::kProtocol, 200, "", "/v1/config is not an object");
  }
  properties_.clear();
  if (json.contains("defaults")) MergeStrings(json["defaults"], properties_);
  if (!options_.warehouse.empty()) properties_["warehouse"] = options_.warehouse;
  if (json.contains("overrides")) MergeStrings(json["overrides"], properties_);
  endpoints_.clear();
  if (json.contains("endpoints") && json["endpoints"].is_array()) {
    for (const auto& endpoint : json["endpoints"]) {
      if (endpoint.is_string()) endpoints_.push_back(endpoint.get<std::string>());
    }
  }
  prefix_ = properties_.count("prefix") ? properties_["prefix"] : "";
  if (auto it = properties_.find("namespace-separator"); it != properties_.end()) {
    separator_ = it->second;
  }
  idempotency_supported_ =
      properties_.count("idempotency-key-lifetime") > 0 ||
      (json.contains("idempotency-key-lifetime") && json["idempotency-key-lifetime"].is_string());
  return Status::OK();
}

bool RestCatalog::Supports(const std::string& endpoint) const {
  return endpoints_.empty() ||
         std::find(endpoints_.begin(), endpoints_.end(), endpoint) != endpoints_.end();
}

std::string RestCatalog::NamespacePath(const std::vector<std::string>& levels) const {
  std::string joined;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (i > 0) joined += separator_;
    joined += UrlEncode(levels[i]);
  }
  return (prefix_.empty() ? "/v1" : "/v1/" + prefix_) + "/namespaces/" + joined;
}

std::string RestCatalog::TablePath(const TableIdent& ident) const {
  return NamespacePath(ident.namespace_levels) + "/tables/" + UrlEncode(ident.name);
}

std::string RestCatalog::NewIdempotencyKey() {
  static thread_local UuidV7Generator generator(Clock::System(), std::random_device{}());
  return generator.Next().ToString();
}

Result<HttpResponse> RestCatalog::Call(const std::string& method, const std::string& path,
                                       const std::string& body, bool mutation,
                                       const std::string& idempotency_key) {
  WEIR_RETURN_NOT_OK(RefreshTokenIfDue());
  HttpRequest request;
  request.method = method;
  request.url = Url(path);
  request.body = body;
  request.headers.emplace_back("Accept", "application/json");
  request.headers.emplace_back("X-Client-Version", "weir");
  if (!body.empty()) request.headers.emplace_back("Content-Type", "application/json");
  if (!access_token_.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + access_token_);
  } else if (!options_.token.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + options_.token);
  }
  if (mutation && idempotency_supported_) {
    request.headers.emplace_back("Idempotency-Key",
                                 idempotency_key.empty() ? NewIdempotencyKey() : idempotency_key);
  }
  for (const auto& header : options_.headers) request.headers.push_back(header);
  auto response = http_->Send(request, stop_);
  if (response.ok() && response->status == 401 && !options_.credential.empty()) {
    access_token_.clear();  // expired or revoked: the next call fetches a new one
  }
  return response;
}

Status RestCatalog::EnsureNamespace(const std::vector<std::string>& levels) {
  if (levels.empty()) return Status::Invalid("an Iceberg namespace needs at least one level");
  // Some servers (Nessie) create a nested namespace only under an existing parent: each level
  // from the outermost is made when missing.
  for (size_t depth = 1; depth <= levels.size(); ++depth) {
    const std::vector<std::string> level(levels.begin(), levels.begin() + depth);
    const std::string path = NamespacePath(level);
    auto loaded = Call("GET", path, "", false);
    if (!loaded.ok()) return Unavailable(loaded.status(), "GET " + path);
    if (loaded->status == 200) continue;
    if (loaded->status != 404) return ErrorOf(*loaded, "GET " + path);
    const std::string create_path = (prefix_.empty() ? "/v1" : "/v1/" + prefix_) + "/namespaces";
    Json body = {{"namespace", level}, {"properties", Json::object()}};
    auto created = Call("POST", create_path, body.dump(), true);
    if (!created.ok()) return Unavailable(created.status(), "POST " + create_path);
    // 409: another writer created it in between, which is what was wanted.
    if (created->status != 200 && created->status != 409) {
      return ErrorOf(*created, "POST " + create_path);
    }
  }
  return Status::OK();
}

Result<LoadedTable> RestCatalog::LoadTable(const TableIdent& ident) {
  const std::string path = TablePath(ident);
  auto response = Call("GET", path, "", false);
  if (!response.ok()) return Unavailable(response.status(), "load table " + ident.ToString());
  if (response->status != 200) return ErrorOf(*response, "load table " + ident.ToString());
  return ParseLoadTable(*response, "load table " + ident.ToString());
}

Result<std::vector<nlohmann::ordered_json>> RestCatalog::ListPages(const std::string& path,
                                                                   const char* key) {
  std::vector<Json> items;
  std::string token;
  // A bound on pages, against a server that hands back the same token forever.
  for (int page = 0; page < 100000; ++page) {
    const std::string url = token.empty() ? path : path + "?pageToken=" + UrlEncode(token);
    auto response = Call("GET", url, "", false);
    if (!response.ok()) return Unavailable(response.status(), "GET " + url);
    if (response->status != 200) return ErrorOf(*response, "GET " + url);
    WEIR_ASSIGN_OR_RAISE(Json json, ParseJson(response->body, "GET " + url));
    const auto list = json.is_object() ? json.find(key) : json.end();
    if (list == json.end() || !list->is_array()) {
      return CatalogError(CatalogErrorKind::kProtocol, 200, "",
                          fmt::format("GET {}: the response has no \"{}\" array", url, key));
    }
    for (auto& item : *list) items.push_back(std::move(item));
    const std::string next = StringOf(json, "next-page-token");
    if (next.empty() || next == token) return items;
    token = next;
  }
  return CatalogError(CatalogErrorKind::kProtocol, 200, "", "GET " + path + ": too many pages");
}

Result<std::vector<TableIdent>> RestCatalog::ListTables() {
  const std::string namespaces = (prefix_.empty() ? "/v1" : "/v1/" + prefix_) + "/namespaces";
  WEIR_ASSIGN_OR_RAISE(auto listed, ListPages(namespaces, "namespaces"));
  std::vector<TableIdent> tables;
  for (const Json& ns : listed) {
    if (!ns.is_array() || ns.size() != 1 || !ns[0].is_string()) continue;  // top level only
    const std::vector<std::string> levels = {ns[0].get<std::string>()};
    WEIR_ASSIGN_OR_RAISE(auto identifiers,
                         ListPages(NamespacePath(levels) + "/tables", "identifiers"));
    for (const Json& id : identifiers) {
      const std::string name = id.is_object() ? StringOf(id, "name") : "";
      if (!name.empty()) tables.push_back(TableIdent{levels, name});
    }
  }
  std::sort(tables.begin(), tables.end(), [](const TableIdent& a, const TableIdent& b) {
    return std::tie(a.namespace_levels, a.name) < std::tie(b.namespace_levels, b.name);
  });
  return tables;
}

Result<LoadedTable> RestCatalog::CreateTable(const std::vector<std::string>& namespace_levels,
                                             const CreateTableRequest& request) {
  const std::string what = "create table " + TableIdent{namespace_levels, request.name}.ToString();
  Json body = Json::object();
  body["name"] = request.name;
  auto add_json = [&](const char* key, const std::string& text) -> Status {
    if (text.empty()) return Status::OK();
    Json value = Json::parse(text, nullptr, false);
    if (value.is_discarded()) return Status::Invalid(what, ": ", key, " is not JSON");
    body[key] = std::move(value);
    return Status::OK();
  };
  if (request.schema_json.empty()) return Status::Invalid(what, ": a schema is required");
  WEIR_RETURN_NOT_OK(add_json("schema", request.schema_json));
  WEIR_RETURN_NOT_OK(add_json("partition-spec", request.partition_spec_json));
  WEIR_RETURN_NOT_OK(add_json("write-order", request.write_order_json));
  if (!request.location.empty()) body["location"] = request.location;
  body["properties"] = Json::object();
  for (const auto& [key, value] : request.properties) body["properties"][key] = value;
  body["stage-create"] = false;
  const std::string path = NamespacePath(namespace_levels) + "/tables";
  auto response = Call("POST", path, body.dump(), true);
  if (!response.ok()) return Unavailable(response.status(), what);
  if (response->status != 200) return ErrorOf(*response, what);
  return ParseLoadTable(*response, what);
}

Result<CommitResult> RestCatalog::CommitTable(const TableIdent& ident,
                                              const std::string& requirements_json,
                                              const std::string& updates_json,
                                              const std::string& idempotency_key) {
  const std::string what = "commit to " + ident.ToString();
  Json requirements = Json::parse(requirements_json, nullptr, false);
  Json updates = Json::parse(updates_json, nullptr, false);
  if (!requirements.is_array() || !updates.is_array()) {
    return Status::Invalid(what, ": requirements and updates must be JSON arrays");
  }
  Json body = {{"identifier", {{"namespace", ident.namespace_levels}, {"name", ident.name}}},
               {"requirements", std::move(requirements)},
               {"updates", std::move(updates)}};
  auto response = Call("POST", TablePath(ident), body.dump(), true, idempotency_key);
  CommitResult result;
  if (!response.ok()) {
    const HttpFailure* failure = GetHttpFailure(response.status());
    if (failure != nullptr && !failure->sent()) {
      return Unavailable(response.status(), what);  // never reached the server
    }
    if (failure == nullptr) return response.status();  // the token fetch failed: not sent
    result.outcome = CommitOutcome::kUnknown;
    result.message = response.status().message();
    return result;
  }
  switch (response->status) {
    case 200: {
      auto table = ParseLoadTable(*response, what);
      if (!table.ok()) {  // applied, most likely, but the answer is unreadable
        result.outcome = CommitOutcome::kUnknown;
        result.message = table.status().message();
        return result;
      }
      result.outcome = CommitOutcome::kCommitted;
      result.table = std::move(*table);
      return result;
    }
    case 409:
      result.outcome = CommitOutcome::kConflict;
      result.message = ErrorOf(*response, what).message();
      return result;
    case 500:
    case 502:
    case 503:
    case 504:
      result.outcome = CommitOutcome::kUnknown;
      result.message = ErrorOf(*response, what).message();
      return result;
    default:
      return ErrorOf(*response, what);  // 404 not found, 400/401/403 rejected, 429 unavailable
  }
}

}  // namespace weir::lake::iceberg
