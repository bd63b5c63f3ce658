// WalPipeline's per-dataset state (ingest/wal_pipeline.h), shared by its source files.
//
// Threading: the poll thread only.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decode/record_decoder.h"
#include "ingest/record_stages.h"
#include "ingest/rejects.h"
#include "ingest/wal_pipeline.h"
#include "ingest/wal_rows.h"
#include "lake/table.h"
#include "observe/metrics_registry.h"
#include "observe/status_model.h"
#include "records/metadata_columns.h"
#include "wal/segment_rotator.h"

namespace weir::ingest {

struct WalPipeline::Dataset {
  DatasetOptions options;
  std::string directory;
  std::unique_ptr<decode::RecordDecoder> builder;
  std::unique_ptr<records::MetadataColumnsBuilder> metadata;
  std::unique_ptr<RecordStages> stages;  // over `options`
  RecordStages::Published published;     // the decoder's statistics counted so far
  // The records decoded since the last WriteDecoded: each row's partition, and per partition
  // the last offset taken (rows or not).
  std::vector<int32_t> row_partitions;
  std::map<int32_t, int64_t> last_offset;
  std::map<int32_t, std::vector<RejectRecord>> rejects;  // by partition, in offset order
  std::unique_ptr<lake::Table> rejects_table;            // for its columns; opened on need
  std::unique_ptr<WalTableRows> rows;
  std::unique_ptr<wal::SegmentRotator> rotator;
  std::unique_ptr<lake::Table> ledger_table;  // the ledger at assignment
  observe::Counter* consumed = nullptr;
  observe::Counter* redelivered = nullptr;
  observe::Counter* nulled = nullptr;
  observe::Counter* rotations = nullptr;
  observe::DatasetStatus* status = nullptr;  // /status, when the app keeps a model
};

}  // namespace weir::ingest
