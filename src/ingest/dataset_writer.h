// Turns one sealed flush of a dataset into Parquet files and one lake commit (rows, rejects
// and the offset ledger in the same snapshot).
//
// Threading: one writer per dataset, called from that dataset's flush thread only.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"
#include "base/uuid.h"
#include "files/parquet_file_writer.h"
#include "ingest/column_plan.h"
#include "ingest/rejects.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/table.h"

namespace weir::ingest {

// The column every flush adds: the commit timestamp of its rows.
inline constexpr const char* kInsertedAt = "_inserted_at";

struct DatasetConfig {
  std::string name;
  std::string topic;
  std::string schema = "main";
  std::string table;
  std::vector<lake::PartitionKey> partitioning;  // transforms of _inserted_at only
  bool rejects_enabled = true;
  int64_t rejects_payload_limit = 65536;
  files::FileConfig file;
  int commit_max_attempts = 10;
};

// Everything one flush carries from the poll thread to the flush thread.
struct SealedFlush {
  std::shared_ptr<arrow::RecordBatch> batch;  // decoded rows (may be empty)
  std::vector<RejectRecord> rejects;
  std::vector<lake::OffsetRange> offsets;  // per partition: [ledger start, last offset + 1)
  int64_t bytes = 0;                       // held in memory until committed
  int64_t records = 0;                     // consumed records (rows + rejects)
};

struct FlushOutcome {
  bool fenced = false;
  int64_t snapshot_id = -1;
  int64_t rows = 0, rejects = 0, files = 0, bytes_written = 0;
  int64_t values_nulled = 0;  // values the live column type could not hold
  // Values of fields the table resolution dropped (refused_by_catalog) or wrote under another
  // spelling (case_variant), by reason; the decoder counts its own (decode::DecodeStats).
  std::map<std::string, int64_t> fields_dropped, fields_renamed;
  int64_t orphaned_files = 0;
  int commit_attempts = 0, conflicts = 0;
  std::chrono::milliseconds write_time{0}, commit_time{0};
};

class DatasetWriter {
 public:
  DatasetWriter(DatasetConfig config, lake::ducklake::DuckLakeCatalog* catalog);

  // Writes and commits `flush`. Retriable failures are retried with backoff up to the budget;
  // an error return means the budget is spent or the failure is permanent. A fenced commit
  // deletes its files and says so in the outcome.
  Result<FlushOutcome> Write(const SealedFlush& flush);

  const DatasetConfig& config() const { return config_; }

 private:
  struct WrittenFiles {
    std::vector<lake::DataFile> data, rejects;
  };
  // Opens (or creates) the tables and adds the columns the flush needs; leaves plan_ set for
  // `batch`. A column the catalog refuses is left out and remembered in refused_.
  Status EnsureTables(const arrow::RecordBatch& batch, bool need_rejects, FlushOutcome& outcome);
  Status CreateTable(const ColumnPlan& plan);
  Status AddColumns(const std::vector<ColumnPlan::NewColumn>& columns);
  Result<WrittenFiles> WriteFiles(const SealedFlush& flush, int64_t inserted_at_us,
                                  FlushOutcome& outcome);
  void DeleteFiles(const WrittenFiles& files);

  DatasetConfig config_;
  lake::ducklake::DuckLakeCatalog* catalog_;
  std::unique_ptr<lake::Table> table_;
  std::unique_ptr<lake::Table> rejects_table_;
  ColumnPlan plan_;                // of the flush being written, against table_'s columns
  std::set<std::string> refused_;  // folded names the catalog refused to add
  UuidV7Generator commit_ids_;
  std::string writer_prefix_;  // host/pid
};

}  // namespace weir::ingest
