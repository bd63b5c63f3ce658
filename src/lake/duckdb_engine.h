// An in-process DuckDB with extensions loaded from local files only (nothing is downloaded at
// run time). weir uses it to create and evolve DuckLake tables through DuckDB's own ducklake
// extension, to read tables back in `weir check`, and as the engine of `weir serve`.
//
// Threading: one engine per process; one connection, used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace weir::lake {

struct DuckDbOptions {
  std::string
      extension_directory;  // DuckDB's layout: <dir>/v<version>/<platform>/*.duckdb_extension
  std::vector<std::string> extensions;  // loaded at open, e.g. {"ducklake", "sqlite_scanner"}
};

// The extension directory this build was made with (the default of duckdb.extension_dir).
std::string DefaultExtensionDirectory();
// The setting duckdb.extension_dir: `configured`, or the build's when it is empty.
std::string ExtensionDirectory(const std::string& configured);

class DuckDbEngine {
 public:
  static Result<std::unique_ptr<DuckDbEngine>> Open(const DuckDbOptions& options);
  ~DuckDbEngine();
  DuckDbEngine(const DuckDbEngine&) = delete;
  DuckDbEngine& operator=(const DuckDbEngine&) = delete;

  // Runs SQL (several statements allowed); errors carry DuckDB's error type as the code.
  Status Run(const std::string& sql);
  // Runs a query; every value as text (NULL as nullopt).
  Result<std::vector<std::vector<std::optional<std::string>>>> Query(const std::string& sql);

 private:
  struct Handles;
  explicit DuckDbEngine(std::unique_ptr<Handles> handles);
  std::unique_ptr<Handles> handles_;
};

// True for an error of DuckDB refusing a statement for what it says (parser, binder, catalog,
// invalid input, conversion, not implemented, ...), as opposed to failing to carry it out
// (I/O, network, connection, permission, memory, internal). For weir's DDL, whose names and
// types come from the data, a refusal is a verdict on the data.
bool IsStatementRefusal(const Status& status);

}  // namespace weir::lake
