// The SQL database that holds a DuckLake catalog: SQLite (the embedded default) or PostgreSQL.
//
// One narrow interface over both, so the catalog writer's SQL is written once. Statements use
// PostgreSQL-style placeholders ($1, $2, ...); the SQLite implementation maps them. Errors carry
// the database's own code (a SQLSTATE, a SQLite extended result code) and are classified:
// lock contention, unique-key conflicts and lost connections are retriable, the rest fatal.
//
// Threading: a CatalogDb is one connection, used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace weir::lake::ducklake {

// A statement parameter: NULL, an integer, text or a boolean (an integer 0/1 in SQLite, whose
// DuckLake catalog stores booleans that way; a boolean in PostgreSQL).
using SqlValue = std::variant<std::monostate, int64_t, std::string, bool>;
// A result row, every column as text (NULL as nullopt).
using SqlRow = std::vector<std::optional<std::string>>;

enum class SqlDialect { kSqlite, kPostgres };

// Puts the SQLite database `path` in write-ahead-log journaling (logged once, when it changes
// the mode): readers never wait for a commit, and a commit never waits for them. A catalog
// made by DuckDB uses a rollback journal, in which a reader fails while a writer commits.
// A retriable error when the mode cannot be changed now (another connection holds the file).
Status EnsureSqliteWal(const std::string& path);

// The lock file that serialises weir's writers (ingest commits and DDL, serve's writing
// statements) to the SQLite catalog `sqlite_path`, across threads and processes.
std::string SqliteWriterLockPath(const std::string& sqlite_path);

// How long a catalog connection waits for PostgreSQL's answer when the connection string
// does not say.
inline constexpr std::chrono::milliseconds kPostgresConnectTimeout{10'000};

// The error of a catalog's first connection at a start, made fatal when waiting cannot help:
// the server refused the connection (nothing listens at the address). Later connections keep
// such an error retriable (a catalog restarting).
Status FatalAtStartup(Status status);

class CatalogDb {
 public:
  virtual ~CatalogDb() = default;

  // Opens a SQLite database file (created if missing) with a busy timeout.
  static Result<std::unique_ptr<CatalogDb>> OpenSqlite(const std::string& path);
  // Connects to PostgreSQL with a libpq connection string (within kPostgresConnectTimeout
  // unless it sets connect_timeout); reconnects when the link drops. A refused login is fatal,
  // other connection failures retriable.
  static Result<std::unique_ptr<CatalogDb>> OpenPostgres(const std::string& conninfo);

  // For looking only (`weir check`): an existing SQLite file, read-only (a missing file is an
  // error, never created; no -wal or -shm file is left next to it), and PostgreSQL within
  // `connect_timeout` (libpq's connect_timeout, whole seconds, at least 2, overriding one in
  // `conninfo`).
  static Result<std::unique_ptr<CatalogDb>> OpenSqliteReadOnly(const std::string& path);
  static Result<std::unique_ptr<CatalogDb>> OpenPostgresWithin(
      const std::string& conninfo, std::chrono::milliseconds connect_timeout);

  virtual SqlDialect dialect() const = 0;

  // Runs a statement and returns the number of rows it changed.
  virtual Result<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& params) = 0;
  // Runs a query and returns its rows.
  virtual Result<std::vector<SqlRow>> Query(std::string_view sql,
                                            const std::vector<SqlValue>& params) = 0;
  // A write transaction (SQLite: BEGIN IMMEDIATE, so the write lock is taken up front).
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  // Best effort; never fails (a broken connection has no transaction left to roll back).
  virtual void Rollback() = 0;

  Status Execute(std::string_view sql) { return Execute(sql, {}).status(); }
};

// One INSERT of many rows (`INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ...`): a commit's
// files and statistics cost a few round trips instead of one per row. Rows are sent in chunks
// that stay under both databases' limits on parameters per statement.
class BatchInsert {
 public:
  // `target` is "table (column, ...)"; every row has `columns` values.
  BatchInsert(CatalogDb& db, std::string target, size_t columns);
  Status Add(std::vector<SqlValue> row);
  // Sends what is left; must be called (a pending chunk is otherwise lost).
  Status Finish();

 private:
  static constexpr size_t kMaxParameters = 30000;  // SQLite's limit is 32766, PostgreSQL's 65535

  CatalogDb& db_;
  std::string target_;
  size_t columns_;
  std::string sql_;
  std::vector<SqlValue> params_;
};

// Parses an integer column of a result row; a NULL or non-integer is a fatal catalog error.
Result<int64_t> ToInt(const std::optional<std::string>& text, std::string_view what);

// A boolean column of a result row in either dialect ("1"/"0", "t"/"f"); NULL is false.
bool ToBool(const std::optional<std::string>& text);

// True when `status` is a unique-key conflict (SQLSTATE 23505 or SQLite's constraint codes).
bool IsUniqueConflict(const Status& status);

// Runs a `CREATE ... IF NOT EXISTS` that another process may be running at the same moment.
// PostgreSQL does not make IF NOT EXISTS atomic: the loser of the race waits for the winner's
// commit and then fails on pg_type or pg_class (23505, 42P07 or 42710). The object exists by
// then, so the statement is run once more, and this time IF NOT EXISTS sees it.
Status CreateIfNotExists(CatalogDb& db, std::string_view ddl);

}  // namespace weir::lake::ducklake
