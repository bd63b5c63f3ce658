// The rows of an upsert flush (docs/ARCHITECTURE.md, "Upsert datasets"): on the poll thread
// the record a row is decoded from (the message key's fields added, a tombstone's key alone)
// and the tombstone column the flush carries through typed columns and filters; on the flush
// thread the last row per key, and the keys the commit deletes.
//
// Pure functions, any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"
#include "lake/table.h"

namespace weir::ingest {

// The column Seal adds to an upsert flush: true for a tombstone's row. Never written.
inline constexpr const char* kTombstoneColumn = "__weir_upsert_tombstone";

// `out` = the JSON object `value` with the fields of the JSON object `key` added first (the
// decoder keeps the first of duplicate names: the key's win). Bad data when either is not an
// object.
Status WithKeyFields(std::string_view key, std::string_view value, std::string& out);

// `batch` with kTombstoneColumn (one flag per row) appended.
Result<std::shared_ptr<arrow::RecordBatch>> WithTombstoneColumn(
    std::shared_ptr<arrow::RecordBatch> batch, const std::vector<bool>& tombstones);

struct LastRows {
  std::shared_ptr<arrow::RecordBatch> rows;  // the last row of each key, batch order, no
                                             // kTombstoneColumn
  std::vector<bool> tombstones;              // per row of `rows`
  int64_t superseded = 0;                    // rows dropped for a later row of their key
};

// The last row of each key of `batch` (its order is Kafka offset order within a partition);
// key columns match field names case-insensitively, a missing one is null in every row.
Result<LastRows> LastRowPerKey(const std::shared_ptr<arrow::RecordBatch>& batch,
                               const std::vector<std::string>& key);

// The key columns of `rows` (a missing one null), named as `key`.
Result<std::shared_ptr<lake::KeyDeletes>> KeysOf(const arrow::RecordBatch& rows,
                                                 const std::vector<std::string>& key);

}  // namespace weir::ingest
