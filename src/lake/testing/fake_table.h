// A scripted lake for unit tests of the code that commits through lake::Catalog / lake::Table
// (DatasetWriter, the pipeline): every commit outcome — committed, fenced, conflict, table
// changed, outcome unknown (landed or not), retriable and fatal errors — on demand, with a
// ledger, snapshots and schema kept in memory so tests can assert exactly what landed.
//
// Data files are real files on a local file system (the directory the test gives), so the
// writer's Parquet path is exercised and tests can check which files were deleted.
//
// Threading: one thread (the test's); not for concurrent use.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lake/catalog.h"
#include "lake/table.h"

namespace weir::lake::testing {

// What the next Commit call does. When the script is empty a commit lands (or is fenced by
// the ledger, like a real table).
enum class FakeStep {
  kLand,            // lands (or is fenced / already committed, by the ledger)
  kConflict,        // nothing lands; CommitStatus::kConflict
  kTableChanged,    // nothing lands; CommitStatus::kTableChanged
  kLandUnknown,     // lands, but the caller is told kOutcomeUnknown
  kLostUnknown,     // does not land, and the caller is told kOutcomeUnknown
  kRetriableError,  // nothing lands; a retriable error Status
  kFatalError,      // nothing lands; a fatal error Status
};

// The state of one table, shared by every handle the catalog opens on it (a reload opens a
// new handle on the same state).
struct FakeTableState {
  struct Snapshot {
    int64_t id = 0;
    int64_t sequence = 0;  // order of landing across every fake table of the process
    std::string writer;
    std::vector<DataFile> files, companion_files;
    std::vector<OffsetRange> offsets;
  };
  std::string name;
  std::vector<Column> columns;
  int64_t next_column_id = 1;
  std::vector<PartitionKey> partitioning;
  std::map<std::pair<std::string, int32_t>, int64_t> ledger;
  std::map<std::pair<std::string, int32_t>, std::string> ledger_writer;
  std::vector<Snapshot> snapshots;  // landed commits, in order
  int64_t next_snapshot_id = 1;

  std::deque<FakeStep> script;          // steps of the next Commit calls
  std::deque<Status> find_errors;       // errors the next FindCommit calls return first
  std::set<std::string> refused_names;  // Evolve and creation refuse columns of these names
  bool dropped = false;                 // Evolve answers kTableChanged while set
  int changed_evolves = 0;              // the next this many Evolve calls answer kTableChanged
  // false: the table commits CommitRequest::companion files as Iceberg would not (refused), so
  // the caller commits the companion table on its own.
  bool commits_companion = true;
  // Called at the start of every Commit (before the script): a test's other writer.
  std::function<void(FakeTableState&)> before_commit;

  int commit_calls = 0, find_calls = 0, evolve_calls = 0, opens = 0;
  std::vector<CommitRequest> requests;  // every Commit call's request, in order

  // Rows landed in this table (its own files only).
  int64_t LandedRows() const;
};

class FakeTable final : public Table {
 public:
  FakeTable(std::shared_ptr<FakeTableState> state, std::shared_ptr<arrow::fs::FileSystem> fs,
            std::string directory);

  const std::string& name() const override { return state_->name; }
  const std::vector<Column>& columns() const override { return columns_; }
  const std::vector<PartitionKey>& partitioning() const override { return state_->partitioning; }
  Result<EvolveResult> Evolve(const SchemaChange& change) override;
  // Identity keys only (values as their Arrow scalar text); other transforms are NotImplemented.
  Result<std::vector<PartitionGroup>> Partition(const arrow::RecordBatch& rows) const override;
  Result<std::map<int32_t, int64_t>> ReadLedger(const std::string& topic) override;
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override { return fs_; }
  std::string DataDirectory() const override { return directory_; }
  std::string NewFilePath(const std::vector<PartitionValue>& partition_values) override;
  Result<CommitResult> Commit(const CommitRequest& request) override;
  Result<std::optional<int64_t>> FindCommit(const CommitRequest& request) override;
  bool CommitsCompanion() const override { return state_->commits_companion; }

  FakeTableState& state() { return *state_; }

 private:
  // Lands `request` by the ledger's rules: committed, already committed or fenced.
  CommitResult Land(const CommitRequest& request);

  std::shared_ptr<FakeTableState> state_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string directory_;
  std::vector<Column> columns_;  // as of this handle's last load (a reload sees new columns)
  int64_t files_named_ = 0;
};

class FakeCatalog final : public Catalog {
 public:
  // Files go under `directory` (created) on the local file system, or through `fs` (a local
  // one that injects failures, say).
  explicit FakeCatalog(std::string directory, std::shared_ptr<arrow::fs::FileSystem> fs = nullptr);

  std::string_view format() const override { return "fake"; }
  // Refuses sort keys and non-identity transforms, naming `setting`.
  Status CheckSpec(const TableSpec& spec, std::string_view setting) const override;
  Result<OpenResult> OpenTable(const TableSpec& spec, OpenMode mode) override;
  // The tables that exist (made by OpenTable or state()).
  Result<std::vector<TableName>> ListTables() override;

  // The state of "schema.table", created empty (as if made by another writer) when absent.
  FakeTableState& state(const std::string& qualified_name);
  bool exists(const std::string& qualified_name) const { return tables_.count(qualified_name); }
  const std::shared_ptr<arrow::fs::FileSystem>& filesystem() const { return fs_; }
  // Errors the next Open calls return first.
  std::deque<Status> open_errors;

 private:
  std::string directory_;
  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::map<std::string, std::shared_ptr<FakeTableState>> tables_;
};

}  // namespace weir::lake::testing
