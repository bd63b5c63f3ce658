// A lake catalog as the pipeline sees it: refuse what the format cannot do, open or create a
// table, list the tables. DuckLake (lake/ducklake) and Iceberg (lake/iceberg) implement it;
// `src/app` chooses the format once, from the configuration, and hands the pipeline a Catalog*.
//
// Threading: thread-safe; tables it opens are used by one thread each (lake/table.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "lake/table.h"
#include "lake/table_spec.h"

namespace weir::lake {

enum class OpenStatus {
  kOpened,          // `table` is set
  kMissing,         // no such table and creating was not asked for
  kColumnsRefused,  // creating it was refused for its columns (names or types from the data):
                    // bad data; the caller may create it with fewer columns
};

struct OpenResult {
  OpenStatus status = OpenStatus::kOpened;
  std::unique_ptr<Table> table;  // kOpened
  std::string reason;            // kColumnsRefused
};

enum class OpenMode {
  kOpenOnly,
  kOpenOrCreate,
  // Open only, taking the live table's layout (partitioning, sort order) as it is rather than
  // checking it against the spec's: `weir maintain` of a table no dataset describes.
  kOpenAsIs,
};

// A table of the lake: its schema (DuckLake schema, Iceberg namespace) and name.
struct TableName {
  std::string schema;
  std::string table;
  std::string Qualified() const { return schema + "." + table; }  // "schema.table"
  friend auto operator<=>(const TableName&, const TableName&) = default;
};

class Catalog {
 public:
  virtual ~Catalog() = default;

  // The format's name in logs ("DuckLake", "Iceberg").
  virtual std::string_view format() const = 0;

  // Refuses, before anything starts, a spec the format cannot represent (a transform, sort
  // keys, a transform of a column type), with a message naming `setting`.
  virtual Status CheckSpec(const TableSpec& spec, std::string_view setting) const = 0;

  // Opens spec.schema.spec.table; with kOpenOrCreate creates it when missing from spec.columns
  // and spec.partitioning (another writer creating it meanwhile is not an error). A live table
  // partitioned differently from spec.partitioning is a fatal error naming both layouts.
  virtual Result<OpenResult> OpenTable(const TableSpec& spec, OpenMode mode) = 0;

  // The live tables of the lake, sorted by schema and name: every table OpenTable can open
  // (the offset ledger and other bookkeeping of weir's are not tables of the lake).
  virtual Result<std::vector<TableName>> ListTables() = 0;
};

}  // namespace weir::lake
