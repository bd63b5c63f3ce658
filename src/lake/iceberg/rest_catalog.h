// A client of the Iceberg REST catalog protocol (open-api/rest-catalog-open-api.yaml).
//
// Open() reads GET /v1/config (with the warehouse) and keeps the server's `defaults` and
// `overrides`, its `prefix`, its advertised `endpoints` and its namespace separator. Then:
// namespaces (created when missing, 409 tolerated), load, list and create tables, and commit
// (requirements + updates) with typed outcomes. Authentication: a fixed bearer token, or OAuth2
// client credentials (POST to /v1/oauth/tokens or the configured server), refreshed before the
// token expires. Mutations carry an Idempotency-Key when the server advertises
// `idempotency-key-lifetime`; a caller retrying a commit of unknown outcome passes the same key.
//
// Each call is one HTTP attempt (plus a token fetch when due) bounded by HttpLimits; no retry
// loop lives here. The stop token given to Open() cuts short Open's own requests only: a
// process that is stopping still drains, and its drain needs every later request (load,
// commit, token refresh) to be sent. Those are bounded by HttpLimits' timeouts, and the caller's
// retry waits are what a stop ends.
//
// Threading: one thread at a time (one HttpClient); the stop token may be requested from any.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "base/status.h"
#include "lake/iceberg/catalog.h"
#include "lake/iceberg/http_client.h"

namespace weir::lake::iceberg {

struct RestCatalogOptions {
  std::string uri;                // base, e.g. http://host:8181 or http://host:19120/iceberg
  std::string warehouse;          // sent to /v1/config; empty: none
  std::string token;              // a bearer token; or
  std::string credential;         // OAuth2 client credentials "client_id:client_secret"
  std::string oauth2_server_uri;  // default: <uri>/v1/oauth/tokens
  std::string scope = "catalog";
  std::map<std::string, std::string> headers;  // sent with every request
  HttpLimits limits;
  // A token is refreshed once this fraction of its lifetime has passed.
  double token_refresh_fraction = 0.8;
};

// The body of a create-table request, as JSON texts from the caller (the table format's model
// writes them): `schema` is required, the rest optional ("" leaves them out).
struct CreateTableRequest {
  std::string name;
  std::string schema_json;
  std::string partition_spec_json;
  std::string write_order_json;
  std::string location;
  std::map<std::string, std::string> properties;
};

class RestCatalog : public Catalog {
 public:
  // Connects (GET /v1/config, and a token first when a credential is given). Bad options and
  // refused credentials are fatal errors naming what is wrong. `stop` ends these requests only.
  static Result<std::unique_ptr<RestCatalog>> Open(RestCatalogOptions options,
                                                   std::stop_token stop = {});

  Status EnsureNamespace(const std::vector<std::string>& levels) override;
  Result<LoadedTable> LoadTable(const TableIdent& ident) override;
  // GET .../namespaces, then GET .../namespaces/{ns}/tables of each, every page of each.
  Result<std::vector<TableIdent>> ListTables() override;
  // Creates the table; kAlreadyExists when it exists.
  Result<LoadedTable> CreateTable(const std::vector<std::string>& namespace_levels,
                                  const CreateTableRequest& request);
  // POST .../tables/{t} with `requirements_json` and `updates_json` (JSON arrays). A 409 is
  // kConflict; 500/502/503/504, a timeout or a lost connection after sending is kUnknown.
  // `idempotency_key`: reuse it when retrying the same commit (ignored when the server does not
  // advertise idempotency); empty: a new one.
  Result<CommitResult> CommitTable(const TableIdent& ident, const std::string& requirements_json,
                                   const std::string& updates_json,
                                   const std::string& idempotency_key = "");

  // A fresh idempotency key (a UUIDv7).
  std::string NewIdempotencyKey();

  // Properties after merging: server defaults, then client-side, then server overrides.
  const std::map<std::string, std::string>& properties() const { return properties_; }
  const std::string& prefix() const { return prefix_; }
  // True when the server lists `endpoint` ("POST /v1/{prefix}/namespaces"), or lists none.
  bool Supports(const std::string& endpoint) const;
  bool idempotency_supported() const { return idempotency_supported_; }

  // The path of a namespace and of a table below /v1/{prefix}/ (encoded).
  std::string NamespacePath(const std::vector<std::string>& levels) const;
  std::string TablePath(const TableIdent& ident) const;

 private:
  RestCatalog(RestCatalogOptions options, std::unique_ptr<HttpClient> http);

  Status LoadConfig();
  Status FetchToken();
  Status RefreshTokenIfDue();
  Result<HttpResponse> Call(const std::string& method, const std::string& path,
                            const std::string& body, bool mutation,
                            const std::string& idempotency_key = "");
  // Every page of a list call (`pageToken` / `next-page-token`): the array `key` of each.
  Result<std::vector<nlohmann::ordered_json>> ListPages(const std::string& path, const char* key);
  std::string Url(const std::string& path) const;
  // RestError, except that a 401 under OAuth2 credentials is retriable (a new token is due).
  Status ErrorOf(const HttpResponse& response, const std::string& what) const;

  RestCatalogOptions options_;
  std::unique_ptr<HttpClient> http_;
  std::stop_token stop_;  // Open's own requests only; empty once Open returns
  std::map<std::string, std::string> properties_;
  std::vector<std::string> endpoints_;
  std::string prefix_;
  std::string separator_ = "%1F";  // the encoded namespace separator
  bool idempotency_supported_ = false;
  std::string access_token_;
  std::chrono::steady_clock::time_point token_refresh_at_ =
      std::chrono::steady_clock::time_point::max();
};

// The REST error of a non-2xx response: its kind from the status code, the server's message
// and error type from the ErrorModel body when it has one. `what` names the call.
Status RestError(const HttpResponse& response, const std::string& what);

}  // namespace weir::lake::iceberg
