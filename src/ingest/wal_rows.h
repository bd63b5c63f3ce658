// WAL mode's rows (ingest.mode wal): a dataset's decoded records shaped into its table's
// columns, as the WAL segments hold them — every live column (null where the batch has no
// value for it, so a segment's schema changes only when the table's does), field ids set,
// `_inserted_at` the time the rows reach the WAL — and split by the table's partitioning into
// the rotator's PartitionRows (docs/ARCHITECTURE.md, "WAL mode").
//
// The table is opened (or created) on the first batch and evolved like a flush's: columns the
// table lacks are added, narrower live columns widened; a name the catalog refuses is left out.
// Routing and sorting are direct mode's only (rejects are the pipeline's: a rejects segment).
//
// Threading: the poll thread only.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"
#include "ingest/dataset_writer.h"
#include "lake/catalog.h"
#include "lake/table.h"
#include "wal/segment_rotator.h"

namespace weir::ingest {

class WalTableRows {
 public:
  WalTableRows(DatasetConfig config, lake::Catalog* catalog)
      : config_(std::move(config)), catalog_(catalog) {}

  // `decoded` in the table's columns, split by table partition; values the live column type
  // cannot hold become null and are counted in `*nulled`.
  Result<std::vector<wal::PartitionRows>> Shape(const arrow::RecordBatch& decoded,
                                                int64_t inserted_at_us, int64_t* nulled);

 private:
  // Opens (creates) the table and adds or widens the columns `batch` needs, reopening the table
  // when another writer changed it in between (retriable "table_changed" after kMaxReloads).
  Status EnsureTable(const arrow::RecordBatch& batch);
  // One attempt: false when the table changed under a schema change.
  Result<bool> TryEnsureTable(const arrow::RecordBatch& batch);
  static constexpr int kMaxReloads = 5;

  DatasetConfig config_;
  lake::Catalog* catalog_;
  std::unique_ptr<lake::Table> table_;
  std::set<std::string> refused_;
};

}  // namespace weir::ingest
