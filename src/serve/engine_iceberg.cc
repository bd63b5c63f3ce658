// An Iceberg lake behind a REST catalog, attached as `lake` through DuckDB's iceberg extension
// (loaded from local files only), and the table locations its sandbox lets sessions read.
#include <duckdb.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "base/sql_quote.h"
#include "serve/engine.h"
#include "serve/engine_internal.h"

namespace weir::serve {
namespace {

constexpr std::string_view kSecret = "weir_iceberg";

// The secret holding the catalog's credentials (kept in the database's memory; sessions see it
// redacted at most): a bearer token, or OAuth2 client credentials exchanged at the same token
// endpoint and scope weir ingest uses (lake/iceberg/rest_catalog.h).
std::string CreateSecretSql(const IcebergRestAttachment& iceberg) {
  std::string uri = iceberg.uri;
  while (!uri.empty() && uri.back() == '/') uri.pop_back();
  if (!iceberg.token.empty()) {
    return "CREATE SECRET " + std::string(kSecret) + " (TYPE iceberg, TOKEN " +
           QuoteLiteral(iceberg.token) + ")";
  }
  const size_t colon = iceberg.credential.find(':');
  return "CREATE SECRET " + std::string(kSecret) + " (TYPE iceberg, CLIENT_ID " +
         QuoteLiteral(iceberg.credential.substr(0, colon)) + ", CLIENT_SECRET " +
         QuoteLiteral(colon == std::string::npos ? "" : iceberg.credential.substr(colon + 1)) +
         ", OAUTH2_SERVER_URI " + QuoteLiteral(uri + "/v1/oauth/tokens") +
         ", OAUTH2_SCOPE 'catalog')";
}

// Strips trailing slashes ("s3://b/w/" -> "s3://b/w"; "/" stays).
std::string WithoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// What the sandbox allows for a table at `location` in namespace `ns`: the `<root>` of the
// usual layouts `<root>/<ns>/<table>` and `<root>/<ns>.db/<table>` (so that tables made later
// under the same root are readable too), else the location itself. A root that is the file
// system's or an object store's top (`/`, `s3://`) is never allowed: the location is.
std::string AllowedRootOf(const std::string& location, const std::string& ns,
                          const std::string& table) {
  const std::string path = WithoutTrailingSlash(location);
  for (const std::string& tail : {"/" + ns + "/" + table, "/" + ns + ".db/" + table}) {
    if (path.size() <= tail.size() || !path.ends_with(tail)) continue;
    const std::string root = path.substr(0, path.size() - tail.size());
    const size_t scheme = root.find("://");
    const bool top =
        root.empty() || root == "/" || (scheme != std::string::npos && root.size() <= scheme + 3);
    if (!top) return root + "/";
  }
  return path + "/";
}

// The rows of one query's first `columns` columns, as text.
Result<std::vector<std::vector<std::string>>> Rows(duckdb_connection conn, const std::string& sql,
                                                   idx_t columns) {
  lake::DuckDbResult result;
  if (duckdb_query(conn, sql.c_str(), result.out()) != DuckDBSuccess) {
    return ResultError(*result);
  }
  std::vector<std::vector<std::string>> rows;
  for (idx_t row = 0; row < duckdb_row_count(result.get()); ++row) {
    std::vector<std::string> values;
    for (idx_t column = 0; column < columns; ++column) {
      const lake::DuckDbString value(duckdb_value_varchar(result.get(), column, row));
      values.emplace_back(value.view());
    }
    rows.push_back(std::move(values));
  }
  return rows;
}

}  // namespace

Status AttachIceberg(duckdb_connection conn, const LakeAttachment& lake, bool read_only) {
  const IcebergRestAttachment& iceberg = lake.iceberg;
  // DuckDB's HTTP deadline (whole seconds) and its retries bound every request the extension
  // makes: ATTACH's GET /v1/config, each table's load, each data file's read. GLOBAL: a plain
  // SET would hold for this connection only, not for the sessions' connections.
  std::string setup =
      "SET TimeZone = 'UTC'; LOAD avro; LOAD httpfs; LOAD iceberg; "
      "SET GLOBAL http_timeout = " +
      std::to_string(iceberg.timeout_seconds) + "; ";
  const bool secret = !iceberg.token.empty() || !iceberg.credential.empty();
  if (secret) setup += CreateSecretSql(iceberg) + "; ";
  WEIR_RETURN_NOT_OK(WithContext(Exec(conn, setup), "loading DuckDB's iceberg extension"));
  // DEFAULT_SCHEMA 'main': DuckDB's iceberg catalog answers for a namespace named main only
  // when told it is the default one; main is the lake's public schema as for DuckLake.
  const std::string attach =
      "ATTACH " + QuoteLiteral(iceberg.warehouse) + " AS lake (TYPE iceberg, ENDPOINT " +
      QuoteLiteral(iceberg.uri) + ", " +
      (secret ? "SECRET " + std::string(kSecret) : std::string("AUTHORIZATION_TYPE 'none'")) +
      ", DEFAULT_SCHEMA 'main'" + (read_only ? ", READ_ONLY" : "") + ")";
  Status attached = Exec(conn, attach);
  if (!attached.ok()) {
    return WithContext(attached, "attaching the Iceberg REST catalog at iceberg.uri " +
                                     iceberg.uri + (read_only ? " READ_ONLY for read users" : "") +
                                     " (each request bounded by serve.iceberg_timeout)");
  }
  // Without a namespace main, unqualified names have no lake schema to go to: sessions then
  // start in the read-only compatibility catalog (Engine::Connect), never in an in-memory one.
  (void)Exec(conn, "USE lake");
  return Status::OK();
}

Result<std::vector<std::string>> IcebergAllowedPaths(duckdb_connection conn,
                                                     const LakeAttachment& lake) {
  std::set<std::string> allowed;
  if (!lake.iceberg.locations.empty()) {
    for (const std::string& location : lake.iceberg.locations) {
      allowed.insert(WithoutTrailingSlash(location) + "/");
    }
    return std::vector<std::string>(allowed.begin(), allowed.end());
  }
  auto tables = Rows(conn,
                     "SELECT schema_name, table_name FROM duckdb_tables() "
                     "WHERE database_name = 'lake' ORDER BY ALL",
                     2);
  if (!tables.ok()) return WithContext(tables.status(), "listing the Iceberg catalog's tables");
  for (const auto& table : *tables) {
    const std::string& ns = table[0];
    const std::string& name = table[1];
    // The table's location, from the catalog's answer to loading it.
    const std::string sql =
        "SELECT metadata.location::VARCHAR FROM iceberg_load_table_response(" +
        QuoteLiteral("lake." + QuoteIdentifier(ns) + "." + QuoteIdentifier(name)) + ")";
    auto locations = Rows(conn, sql, 1);
    if (!locations.ok() || locations->empty() || (*locations)[0][0].empty()) {
      spdlog::warn(
          "serve: Iceberg table {}.{}: its location is unknown ({}); its files stay "
          "outside the sandbox (set serve.iceberg_locations)",
          ns, name, locations.ok() ? "none given" : locations.status().message());
      continue;
    }
    allowed.insert(AllowedRootOf((*locations)[0][0], ns, name));
  }
  if (allowed.empty()) {
    spdlog::warn(
        "serve: the Iceberg catalog has no table yet; sessions can read no table's "
        "files until a restart (or set serve.iceberg_locations)");
  }
  for (const std::string& path : allowed) spdlog::info("serve: sessions may read {}", path);
  return std::vector<std::string>(allowed.begin(), allowed.end());
}

void ResolveIcebergTables(duckdb_connection conn) {
  auto pending = Rows(conn,
                      "SELECT DISTINCT schema_name, table_name FROM duckdb_columns() "
                      "WHERE database_name = 'lake' AND column_name = '__' "
                      "AND data_type = 'UNKNOWN' ORDER BY ALL",
                      2);
  if (!pending.ok()) {
    spdlog::debug("serve: listing the Iceberg tables: {}", pending.status().message());
    return;
  }
  for (const auto& table : *pending) {
    const Status described =
        Exec(conn, "DESCRIBE lake." + QuoteIdentifier(table[0]) + "." + QuoteIdentifier(table[1]));
    if (!described.ok()) {
      spdlog::debug("serve: loading Iceberg table {}.{}: {}", table[0], table[1],
                    described.message());
    }
  }
}

}  // namespace weir::serve
