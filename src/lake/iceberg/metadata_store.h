// Where an Iceberg table layer reads and commits table metadata: one connection to a catalog
// (the SQL catalog on SQLite or PostgreSQL, or a REST catalog), behind one small interface so
// IcebergTable is written once.
//
//   Load    the current metadata location and the parsed metadata (nullopt: no such table)
//   ListTables  the tables of the catalog's top-level namespaces
//   Create  registers a new table whose metadata the caller built (false: it existed already)
//   Commit  one attempt to move the table from `base` to `next`: kCommitted (with the new
//           state), kConflict (the table moved: reload), kUnknown (sent, no answer: read it
//           back before any retry). `base` may be stale: the catalog's compare-and-swap (SQL)
//           or requirements (REST) refuse a commit whose base is not the table's state.
//
// SQL: the layer writes the next metadata file itself and swaps the pointer (CAS). REST: the
// server applies `change` (upgrade-format-version, add-snapshot + set-snapshot-ref, add-schema +
// set-current-schema)
// under `assert-table-uuid`, `assert-default-spec-id` and `assert-ref-snapshot-id` /
// `assert-current-schema-id`.
//
// Threading: one thread at a time (one catalog connection).
#pragma once

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "lake/iceberg/catalog.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/metadata.h"

namespace weir::lake::iceberg {

struct CurrentMetadata {
  std::string location;
  TableMetadata metadata;
};

// What a commit adds on top of its base (REST sends these as updates).
struct MetadataChange {
  std::optional<Snapshot> snapshot;             // added as main's new head
  std::optional<int> schema_id;                 // a schema of `next` made current
  std::vector<int64_t> removed_snapshots = {};  // expired: gone from `next`, main's head unchanged
  // `next` has a higher format version than the base (2 → 3 for a variant column): REST
  // sends `upgrade-format-version` first; SQL writes `next` as it is.
  bool upgrade_format = false;
};

// How one commit attempt through a store ended.
struct StoreCommit {
  CommitOutcome outcome = CommitOutcome::kUnknown;
  std::string message;  // the catalog's words on a conflict or unknown outcome
  // Committed: the table's new state as the catalog now holds it (SQL: the metadata file just
  // swapped in; REST: the server's answer, parsed once), so the table layer can commit its next
  // snapshot on it without reading the table back. nullopt when the answer did not carry it.
  std::optional<CurrentMetadata> current;
};

// The location of a table whose catalog chooses it (REST): Create does not send it.
inline constexpr char kServerAssignedLocation[] = "weir:server-assigned";

class MetadataStore {
 public:
  virtual ~MetadataStore() = default;

  virtual Status EnsureNamespace(const std::vector<std::string>& levels) = 0;
  virtual Result<std::optional<CurrentMetadata>> Load(const TableIdent& ident) = 0;
  // The catalog's tables (Catalog::ListTables); a store without a listing answers
  // NotImplemented.
  virtual Result<std::vector<TableIdent>> ListTables() {
    return Status::NotImplemented("this Iceberg catalog does not list its tables");
  }
  // Registers `metadata` as a new table; false when another writer created it first.
  virtual Result<bool> Create(const TableIdent& ident, const TableMetadata& metadata) = 0;
  // One attempt. Files written by the attempt (a metadata file) are appended to `written`
  // so a caller whose commit certainly failed can delete them.
  virtual Result<StoreCommit> Commit(const TableIdent& ident, const CurrentMetadata& base,
                                     const TableMetadata& next, const MetadataChange& change,
                                     std::vector<std::string>& written) = 0;
};

class SqlCatalog;
class RestCatalog;

// The SQL catalog's store: writes `<location>/metadata/<NNNNN>-<uuid>.metadata.json` and
// swaps the catalog's pointer to it.
std::unique_ptr<MetadataStore> MakeSqlMetadataStore(std::unique_ptr<SqlCatalog> catalog,
                                                    TableIo io);
// The REST catalog's store: the server writes the metadata.
std::unique_ptr<MetadataStore> MakeRestMetadataStore(std::unique_ptr<RestCatalog> catalog);

}  // namespace weir::lake::iceberg
