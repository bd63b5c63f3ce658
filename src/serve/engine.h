// The query engine of `weir serve`: two DuckDB databases per process over the lake
// (extensions from local files only) — the writers', with the lake attached read-write, and the
// readers', in which every database is attached READ_ONLY so DuckDB itself refuses any write —
// one connection per session, results streamed chunk by chunk.
//
// Threading: the Engine is shared; each Session and its ResultStreams are used by their
// connection's thread only (Interrupt may come from any thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <duckdb.h>

#include "base/status.h"
#include "base/writer_lock.h"
#include "files/s3_settings.h"
#include "files/storage_settings.h"
#include "lake/duckdb_handles.h"
#include "serve/activity.h"
#include "serve/values/values.h"

namespace weir::serve {

// An Iceberg lake behind a REST catalog (lake.format iceberg), attached through DuckDB's
// iceberg extension: the iceberg.* settings weir ingest uses, and serve's own.
struct IcebergRestAttachment {
  std::string uri;           // the catalog's base URI; "" = the lake is DuckLake
  std::string warehouse;     // sent to the server ("" = none)
  std::string token;         // a bearer token; or
  std::string credential;    // OAuth2 client credentials "client_id:client_secret"
  int timeout_seconds = 30;  // each HTTP request (DuckDB's http_timeout)
  // Where sessions may read the tables' files; empty: derived from the tables at startup.
  std::vector<std::string> locations;
};

struct LakeAttachment {
  std::string catalog;            // DuckLake: "sqlite:<path>" or "postgres:<libpq conninfo>"
  IcebergRestAttachment iceberg;  // Iceberg when its uri is set (then `catalog` is unused)
  bool is_iceberg() const { return !iceberg.uri.empty(); }
  std::string extension_directory;
  // DuckDB's memory_limit and worker threads ("" / 0 = DuckDB's own), for each of the two
  // databases (the writers' and the readers'; an idle one holds little memory, and no thread
  // of its pool works).
  std::string memory_limit;
  int threads = 0;
  // A lake whose data lives on S3: storage.s3_*, as ingest has them (lake/duckdb_s3.h).
  files::S3Settings s3;
  files::AzureSettings azure;  // storage.azure_*: an Azure data path (abfss://, az://)
};

using DataChunk = lake::DuckDbDataChunk;

class Session;

// Rows appended to a table by DuckDB's query appender: one INSERT when closed, so a COPY lands
// as one commit (in autocommit) and fails as a whole.
class TableAppender {
 public:
  ~TableAppender();
  size_t column_count() const { return types_.size(); }
  duckdb_logical_type type(size_t column) const { return types_[column].get(); }
  // Appends one row (column_count() values; DuckDB casts VARCHAR values to the column type).
  Status AppendRow(std::vector<OwnedValue>& row);
  // Runs the INSERT for what is left and returns the number of rows appended.
  Result<uint64_t> Close();

 private:
  friend class Session;
  TableAppender() = default;
  Status Error(const std::string& context);
  std::vector<lake::DuckDbLogicalType> types_;
  lake::DuckDbAppender appender_;  // destroyed before the types
  uint64_t rows_ = 0;
  bool closed_ = false;
};

// One column of a statement's result.
struct ResultColumn {
  std::string name;
  PgType type;
  bool has_binary = false;  // whether the binary format exists for it (see ColumnEncoder)
};

// What Describe reports about a prepared statement.
struct StatementInfo {
  std::vector<uint32_t> parameter_types;  // PostgreSQL OIDs (25 where DuckDB cannot tell)
  std::vector<ResultColumn> columns;      // empty when it returns no rows
};

// A statement's result, read chunk by chunk. A query streams from DuckDB; since a connection
// streams one result at a time, a stream still open when the session runs another statement
// is first read into memory (Buffer), within the session's memory limit.
class ResultStream {
 public:
  ~ResultStream();
  ResultStream(const ResultStream&) = delete;
  ResultStream& operator=(const ResultStream&) = delete;

  bool returns_rows() const { return !columns_.empty(); }
  const std::vector<ResultColumn>& columns() const { return columns_; }
  duckdb_logical_type type(size_t column) const { return types_[column].get(); }
  // The next chunk, or null at the end. A failure mid-stream (a cancel, a timeout) is an error.
  Result<DataChunk> Next();
  // "SELECT n" with the rows handed out so far, "INSERT 0 n", "CREATE TABLE", ...
  std::string CommandTag() const;
  uint64_t rows() const { return rows_; }
  // Reads whatever is left into memory so the connection can run other statements.
  Status Buffer();
  // Bytes held in memory by Buffer (counted against the session's limit).
  size_t buffered_bytes() const { return buffered_bytes_; }

 private:
  friend class Session;
  ResultStream(Session* session, lake::DuckDbResult result, bool streaming, std::string tag_prefix);
  Session* session_;
  lake::DuckDbResult result_;
  bool streaming_;  // reading from DuckDB's stream (else materialised or buffered)
  bool exhausted_ = false;
  std::string tag_prefix_;
  std::vector<ResultColumn> columns_;
  std::vector<lake::DuckDbLogicalType> types_;
  std::deque<DataChunk> buffered_;
  size_t buffered_bytes_ = 0;
  uint64_t rows_ = 0;
  uint64_t changed_ = 0;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Open(const LakeAttachment& lake);
  ~Engine();
  // A new session; `memory_limit` bounds the bytes it may hold in buffered results. A read-only
  // session is a connection to the readers' database.
  Result<std::unique_ptr<Session>> Connect(size_t memory_limit = SIZE_MAX, bool read_only = false);
  // The live sessions pg_stat_activity shows and the signal functions reach (the server
  // registers its sessions here).
  ActivityRegistry& activity() { return *activity_; }

 private:
  struct Handles;
  explicit Engine(std::unique_ptr<Handles> handles);
  // Declared first: DuckDB's functions point at it until both databases are closed.
  std::unique_ptr<ActivityRegistry> activity_ = std::make_unique<ActivityRegistry>();
  std::unique_ptr<Handles> handles_;
  std::shared_ptr<WriterLock> writer_lock_;  // serialises this server's writers
  bool iceberg_ = false;                     // the lake is an Iceberg REST catalog
};

class Session {
 public:
  ~Session();
  // Runs one statement (of a simple query) to a stream. Errors carry their SQLSTATE.
  Result<std::unique_ptr<ResultStream>> Query(const std::string& statement);
  // Extended protocol: a named prepared statement ("" is the unnamed one, replaced by the next
  // Parse).
  Result<StatementInfo> Prepare(const std::string& name, const std::string& sql);
  Result<StatementInfo> Describe(const std::string& name) const;
  Result<std::unique_ptr<ResultStream>> Execute(const std::string& name,
                                                const std::vector<OwnedValue>& parameters);
  void ClosePrepared(const std::string& name);
  bool HasPrepared(const std::string& name) const;
  // An appender into `table` (COPY FROM STDIN): `columns` (quoted identifiers) empty means all
  // of the table's columns in order.
  Result<std::unique_ptr<TableAppender>> OpenAppender(const std::string& table,
                                                      const std::vector<std::string>& columns);

  // Sets a DuckDB variable of this session (the catalog reads weir_user, weir_backend_pid).
  Status SetVariable(const std::string& name, const std::string& value);
  // Runs weir's own setting statements (SET TimeZone, SET VARIABLE pg_..., SET search_path)
  // on this session: the only way a SET reaches DuckDB, which refuses every SET a client
  // sends itself (see Run).
  Status Configure(const std::string& sql);
  // DISCARD TEMP: drops the session's temporary tables, views, sequences and macros.
  Status DiscardTemporary();
  // DISCARD PLANS: forgets the cached prepared statements of simple queries and of Parse.
  void DiscardPlans() { ClearStatementCache(); }
  // The DuckDB connection's id (how DuckDB functions know their caller).
  uint64_t connection_id() const;
  // Interrupts the statement running on this session (from another thread).
  void Interrupt();
  // 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block.
  char transaction_status() const { return transaction_status_; }
  size_t memory_limit() const { return memory_limit_; }
  // With `read_only`, moves the session to the readers' database, for good (before its first
  // statement; the same as Engine::Connect(limit, true)). Without, changes nothing.
  void SetReadOnly(bool read_only);
  bool read_only() const { return read_only_; }
  // After a failed COPY: an implicit transaction rolls back; a transaction block is aborted.
  void FailTransaction();
  // Ends the implicit transaction of an autocommit COPY, if one is open.
  Status EndImplicitTransaction(bool commit);

 private:
  friend class Engine;
  friend class ResultStream;
  struct Handles;
  Session(std::unique_ptr<Handles> handles, size_t memory_limit);
  Status Connected() const;
  // `status` as a read-only session reports it (see engine.cc).
  Status InReadOnlyTerms(Status status) const;
  Status BeforeStatement();
  // In a read-only session, 42501 for a statement calling a function that works on the lake's
  // files before DuckDB can refuse it (compat::LakeWritingCallOf); a block it was in fails.
  Status RefuseLakeFileWork(const std::string& sql);
  Result<std::unique_ptr<ResultStream>> Run(duckdb_prepared_statement statement,
                                            const std::string& sql);
  // What Describe says about a statement as DuckDB has bound it.
  static StatementInfo InfoOf(duckdb_prepared_statement statement);
  // The SQLite catalog's writer lock for a statement that may commit a write to the lake (an
  // autocommit write, or the end of a transaction block); an empty hold otherwise.
  Result<WriterLock::Hold> LockForWrite(bool may_commit_write);
  void TrackTransaction(const std::string& sql, std::string& tag);
  void ClearStatementCache();
  size_t BufferedBytes() const;
  std::unique_ptr<Handles> handles_;
  std::shared_ptr<WriterLock> writer_lock_;  // SQLite catalogs: serialises the lake's writers
  std::atomic<bool> interrupted_{false};     // Interrupt() since the statement started
  WriterLock::Hold write_hold_;              // held by a COPY's implicit transaction
  char transaction_status_ = 'I';
  size_t memory_limit_;
  bool read_only_ = false;
  duckdb_database reader_ = nullptr;  // the engine's readers' database (for SetReadOnly)
  bool iceberg_ = false;              // the lake is an Iceberg REST catalog (see Engine::Connect)
  bool implicit_transaction_ = false;
  ResultStream* streaming_ = nullptr;        // the one result streaming from DuckDB
  std::vector<ResultStream*> open_streams_;  // every live stream (for the memory limit)
};

}  // namespace weir::serve
