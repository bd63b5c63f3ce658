// One DuckLake table: its live columns and partitioning, the offset ledger, and the commit that
// appends files in one snapshot with the ledger fence (DESIGN.md, "Offset ledger").
//
// Threading: one thread at a time; the table owns its catalog connection. Commit makes one
// attempt and never waits: conflicts are the caller's to retry (lake/table.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/uuid.h"
#include "lake/ducklake/catalog_db.h"
#include "lake/table.h"

namespace weir::lake::ducklake {

class DuckLakeCatalog;

class DuckLakeTable final : public Table {
 public:
  // The live table, or nullptr when there is none by that name.
  static Result<std::unique_ptr<DuckLakeTable>> Load(DuckLakeCatalog* catalog,
                                                     std::unique_ptr<CatalogDb> db,
                                                     const std::string& schema,
                                                     const std::string& table);

  const std::string& name() const override { return qualified_name_; }
  const std::vector<Column>& columns() const override { return columns_; }
  const std::vector<PartitionKey>& partitioning() const override { return partitioning_; }
  // ADD COLUMN and ALTER COLUMN ... SET DATA TYPE through DuckDB's ducklake extension.
  Result<EvolveResult> Evolve(const SchemaChange& change) override;
  // DuckLake's semantics: year is the calendar year, month 1-12, day the day of the month,
  // hour 0-23 (UTC); identity of a timestamp is its UTC text.
  Result<std::vector<PartitionGroup>> Partition(const arrow::RecordBatch& rows) const override;
  Result<std::map<int32_t, int64_t>> ReadLedger(const std::string& topic) override;
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override;
  std::string DataDirectory() const override { return data_directory_; }
  std::string NewFilePath(const std::vector<PartitionValue>& partition_values) override;
  Result<CommitResult> Commit(const CommitRequest& request) override;
  // Rows, rejects and ledger commit in one catalog transaction.
  bool CommitsCompanion() const override { return true; }
  // Key deletes as positional delete files in the commit's snapshot (ducklake_table_upsert.cc).
  bool DeletesByKey() const override { return true; }
  // The ledger rows of the request's ranges under its writer id, else its first file's row in
  // ducklake_data_file (found even when the ledger has moved on since).
  Result<std::optional<int64_t>> FindCommit(const CommitRequest& request) override;
  // One snapshot ending the removed files and beginning the added ones, "merge_adjacent:<id>"
  // in its changes as DuckDB's own compaction records it (ducklake_table_rewrite.cc).
  Result<CommitResult> Rewrite(const RewriteRequest& request) override;
  // The table's files, the catalog's snapshots (DuckLake's snapshots are the catalog's) and
  // every path the catalog references (ducklake_table_inspect.cc).
  Result<TableInspection> Inspect() override;
  // DuckDB's ducklake_expire_snapshots (the catalog's snapshots: DuckLake has no per-table
  // ones), which queues the files only the removed snapshots referenced; then
  // ducklake_cleanup_old_files for the files queued longer ago than the window.
  Result<ExpireResult> ExpireSnapshots(const std::vector<int64_t>& ids,
                                       int64_t queue_window_ms) override;
  // A new snapshot ending the files' rows, as DuckDB's deletes do (ducklake_table_repair.cc).
  Result<DropFilesResult> DropDataFiles(const std::vector<std::string>& paths,
                                        const std::string& reason) override;

  const std::string& table_uuid() const { return table_uuid_; }
  int64_t table_id() const { return table_id_; }

  // Compares the live partitioning with the wanted one (see DuckLakeCatalog::OpenTable).
  Status CheckPartitioning(const std::vector<PartitionKey>& wanted);

 private:
  DuckLakeTable(DuckLakeCatalog* catalog, std::unique_ptr<CatalogDb> db);
  // Reads the table's rows from the catalog; false when it does not exist.
  Result<bool> Reload();
  // The statements of one commit inside its transaction (not committed here).
  Result<CommitResult> TryCommit(const CommitRequest& request);
  Result<CommitResult> TryRewrite(const RewriteRequest& request);
  // Inserts `files` of this table in snapshot `snapshot_id` through `db` (the committing
  // table's connection), numbering them from `next_file_id`, and updates the table statistics.
  Status InsertFiles(CatalogDb& db, const std::vector<DataFile>& files, int64_t snapshot_id,
                     int64_t& next_file_id);
  Status UpdateTableStats(CatalogDb& db, const std::vector<DataFile>& files);
  // The statements of one DropDataFiles attempt inside its transaction, and the file ids.
  Result<std::pair<DropFilesResult, std::vector<int64_t>>> TryDropDataFiles(
      const std::vector<std::string>& paths, const std::string& reason);
  // An upsert commit's deletes: per data file holding rows of the keys, a delete file of all
  // its deleted positions (written already), replacing its current one.
  struct DeleteFile {
    int64_t data_file_id = 0;
    std::optional<int64_t> replaces;  // the data file's current delete file
    std::string relative_path;
    int64_t count = 0;
    files::FileInfo info;
  };
  struct DeletePlan {
    std::vector<DeleteFile> files;
    int64_t rows = 0;        // rows newly deleted
    int64_t files_read = 0;  // candidate data files read
  };
  // Finds the live rows of `deletes`' keys as of the transaction (statistics first, then the
  // candidate files' key columns) and writes their delete files; changes no catalog row.
  Result<DeletePlan> PlanKeyDeletes(const KeyDeletes& deletes);
  // Ends the replaced delete files and inserts the new ones in snapshot `snapshot_id`.
  Status InsertDeletes(const DeletePlan& plan, int64_t snapshot_id, int64_t& next_file_id);
  // Deletes the delete files written by an attempt that did not land.
  void DropUnreferencedDeletes();
  // Why the files cannot be committed to the table as loaded (a column they name is gone).
  std::optional<std::string> MissingFileColumn(const std::vector<DataFile>& files) const;

  DuckLakeCatalog* catalog_;
  std::unique_ptr<CatalogDb> db_;
  std::string schema_, table_, qualified_name_;
  int64_t table_id_ = -1;
  std::string table_uuid_;
  std::optional<int64_t> partition_id_;
  std::vector<Column> columns_;
  std::vector<PartitionKey> partitioning_;
  std::string data_uri_;        // the table's directory as the catalog resolves it
  std::string data_directory_;  // the same in the file system's terms
  bool own_directory_ = false;  // the table's path is a directory of its own
  UuidV7Generator uuids_;
  std::vector<std::string> unreferenced_deletes_;  // delete files of the attempt under way
};

}  // namespace weir::lake::ducklake
