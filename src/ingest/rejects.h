// The rejects table: records that could not be decoded, kept with their coordinates and the
// reason, so nothing consumed is lost. `<table>_rejects` commits in the same snapshot as its
// dataset's rows where the format can (DuckLake); elsewhere (Iceberg) it commits first, on its
// own, with its own offset ledger (PlanRejectsCommit; docs/ARCHITECTURE.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/record_batch.h>

#include "base/status.h"
#include "lake/table.h"

namespace weir::kafka {
struct Message;
}  // namespace weir::kafka

namespace weir::ingest {

struct RejectRecord {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::optional<std::string> key;  // as text (see SafeText)
  std::string payload;             // as text, truncated to the payload limit
  int64_t payload_bytes = 0;       // the original size
  std::string reason;              // invalid_json, invalid_utf8, not_an_object, record_too_large
  std::string error;               // the decoder's message
  int64_t received_at_us = 0;
};

// The reject of `message`, which the decoder or the mapping refused with `error` (`reason`:
// its code): key and payload as SafeText of at most `payload_limit` bytes, received now.
RejectRecord MakeReject(const kafka::Message& message, std::string_view reason, const Status& error,
                        size_t payload_limit);

// The rejects table's columns, in order.
std::vector<std::pair<std::string, lake::ColumnType>> RejectsColumns();

// `bytes` as valid UTF-8 text of at most `limit` bytes: valid sequences are kept, any other
// byte is written as \xNN, and a cut never splits a character or an escape.
std::string SafeText(std::string_view bytes, size_t limit);

// The rejects as a record batch matching `table`'s columns (field ids set).
Result<std::shared_ptr<arrow::RecordBatch>> RejectsBatch(const std::vector<RejectRecord>& rejects,
                                                         const std::vector<lake::Column>& table);

// topic → partition → next offset: a table's offset ledger.
using TopicLedgers = std::map<std::string, std::map<int32_t, int64_t>>;

// What a flush still owes a rejects table that commits on its own, given that table's ledger.
struct RejectsCommitPlan {
  // The flush's rejects at or beyond the rejects table's ledger (in flush order); the others
  // are in the table already. Nothing to commit when empty.
  std::vector<RejectRecord> rejects;
  // How the commit moves the rejects table's ledger, per partition of the flush whose end is
  // beyond it: from the ledger (the flush's start when it has none) to the flush's end.
  std::vector<lake::OffsetRange> offsets;
  // Partitions whose rejects ledger lies below the flush's start ([topic, partition, flush
  // start, flush end)): the offsets in between are accounted for only if the data table's
  // ledger has reached the flush's start, which the caller checks before committing.
  std::vector<lake::OffsetRange> needs_data_ledger;
};

RejectsCommitPlan PlanRejectsCommit(const std::vector<RejectRecord>& rejects,
                                    const std::vector<lake::OffsetRange>& flush_offsets,
                                    const TopicLedgers& rejects_ledger);

}  // namespace weir::ingest
