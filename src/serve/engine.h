// The query engine of `weir serve`: one DuckDB database per process with the lake attached
// (extensions from local files only), one connection per session.
//
// Threading: the Engine is shared; each Session is used by its connection's thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace weir::serve {

struct LakeAttachment {
  std::string catalog;  // "sqlite:<path>" or "postgres:<libpq conninfo>"
  std::string extension_directory;
};

// One column of a result, with the PostgreSQL type it is presented as.
struct ResultColumn {
  std::string name;
  uint32_t type_oid = 25;
  int16_t type_size = -1;
};

// A materialised result in PostgreSQL's text format.
struct QueryResult {
  std::vector<ResultColumn> columns;  // empty for statements without rows
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string command_tag;  // "SELECT 3", "INSERT 0 1", "CREATE TABLE", ...
};

class Session;

// What Describe reports about a prepared statement.
struct StatementInfo {
  std::vector<uint32_t> parameter_types;  // PostgreSQL OIDs (25 where DuckDB cannot tell)
  std::vector<ResultColumn> columns;      // empty when it returns no rows
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Open(const LakeAttachment& lake);
  ~Engine();
  Result<std::unique_ptr<Session>> Connect();

 private:
  struct Handles;
  explicit Engine(std::unique_ptr<Handles> handles);
  std::unique_ptr<Handles> handles_;
};

class Session {
 public:
  ~Session();
  // Runs every statement of `sql` in order; stops at the first error (the results so far are
  // kept in `done`). Errors carry the SQLSTATE to report as their code.
  Status Run(const std::string& sql, std::vector<QueryResult>* done);
  // Extended protocol: a named prepared statement ("" is the unnamed one, replaced by the
  // next Parse), executed with text parameters (nullopt = NULL).
  Result<StatementInfo> Prepare(const std::string& name, const std::string& sql);
  Result<StatementInfo> Describe(const std::string& name) const;
  Result<QueryResult> Execute(const std::string& name,
                              const std::vector<std::optional<std::string>>& parameters);
  void ClosePrepared(const std::string& name);

  // Interrupts the statement running on this session (from another thread).
  void Interrupt();
  // 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block.
  char transaction_status() const { return transaction_status_; }

 private:
  friend class Engine;
  struct Handles;
  explicit Session(std::unique_ptr<Handles> handles);
  void TrackTransaction(const std::string& sql, bool is_transaction_statement, QueryResult& out);
  std::unique_ptr<Handles> handles_;
  char transaction_status_ = 'I';
};

}  // namespace weir::serve
