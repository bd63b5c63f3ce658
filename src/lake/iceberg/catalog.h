// The Iceberg catalogs weir commits through: what a table layer needs from a catalog, and the
// typed outcomes it decides on.
//
// Two kinds, one vocabulary:
//  - RestCatalog (rest_catalog.h): the server applies changes. Commit(ident, requirements,
//    updates) sends them; the server checks the requirements and writes the metadata file.
//  - SqlCatalog (sql_catalog.h): a row per table holds the current metadata location. The table
//    layer applies the updates itself, writes the new metadata file, then swaps the pointer by
//    compare-and-swap: SwapMetadataLocation(ident, expected, new).
//
// Every call is one attempt: retrying (base/retry.h) is the caller's, and an outcome of
// kUnknown must be resolved by reading the table back (looking for the commit's own id in its
// snapshots) before anything is retried. Errors are Statuses with a CatalogErrorDetail whose
// kind a caller switches on; never match message text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace weir::lake::iceberg {

// A table's namespace (one or more levels) and name.
struct TableIdent {
  std::vector<std::string> namespace_levels;
  std::string name;

  // "a.b.t", for messages.
  std::string ToString() const;
  friend bool operator==(const TableIdent&, const TableIdent&) = default;
};

// The current state of a table as a catalog reports it.
struct LoadedTable {
  std::string metadata_location;
  nlohmann::json metadata;                    // the table metadata document, parsed once
  std::map<std::string, std::string> config;  // FileIO properties for this table (REST)
};

// How a commit ended.
enum class CommitOutcome {
  kCommitted,  // applied; `table` is the new state (REST) or the swap happened (SQL)
  kConflict,   // not applied: a requirement failed / the pointer moved; reload and retry
  kUnknown,    // sent but no answer (5xx, timeout, reset): read the table back to find out
};

std::string_view ToString(CommitOutcome outcome);

struct CommitResult {
  CommitOutcome outcome = CommitOutcome::kUnknown;
  std::optional<LoadedTable> table;  // set when committed through REST
  std::string message;               // the server's words on a conflict or unknown outcome
};

// What went wrong in a catalog call that has no CommitOutcome.
enum class CatalogErrorKind {
  kNotFound,       // no such namespace or table (404)                        fatal
  kAlreadyExists,  // create of something that exists (409 on create)        fatal
  kUnavailable,    // not reached, or asked to come back (connect, 429, 5xx)  retriable
  kRejected,       // bad request, bad credentials, not allowed (400/401/403) fatal
  kProtocol,       // an answer that does not follow the protocol             fatal
};

std::string_view ToString(CatalogErrorKind kind);

// The detail of a catalog error: its kind, the HTTP status when there was one, and the
// server's error type (e.g. "NoSuchTableException").
class CatalogErrorDetail : public ErrorDetail {
 public:
  CatalogErrorDetail(CatalogErrorKind kind, int http_status, std::string server_type);
  CatalogErrorKind kind() const { return kind_; }
  int http_status() const { return http_status_; }
  const std::string& server_type() const { return server_type_; }

 private:
  CatalogErrorKind kind_;
  int http_status_;
  std::string server_type_;
};

Status CatalogError(CatalogErrorKind kind, int http_status, std::string server_type,
                    std::string message);

// The kind of a catalog error, or nullopt when `status` carries none (OK, or another layer's).
std::optional<CatalogErrorKind> CatalogErrorKindOf(const Status& status);

// The calls both catalogs answer.
class Catalog {
 public:
  virtual ~Catalog() = default;

  // Creates the namespace when it is missing; an existing one is success.
  virtual Status EnsureNamespace(const std::vector<std::string>& levels) = 0;
  // The table's current metadata. kNotFound when there is no such table.
  virtual Result<LoadedTable> LoadTable(const TableIdent& ident) = 0;
  // The tables (not views) of the top-level namespaces, sorted by namespace and name.
  virtual Result<std::vector<TableIdent>> ListTables() = 0;
};

}  // namespace weir::lake::iceberg
