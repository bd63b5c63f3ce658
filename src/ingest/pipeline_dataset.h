// Pipeline::Dataset: one dataset's state inside the pipeline — its decoder and buffer (the poll
// thread's), its queue of sealed flushes, its flush thread and writers, its metrics. Private to
// pipeline.cc and pipeline_flush.cc (the flush thread's loop).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "ingest/pipeline.h"
#include "observe/metric_names.h"
#include "records/mapped_batch_builder.h"

namespace weir::ingest {

// Shorthands of the pipeline's two files (this header is theirs alone).
using SteadyClock = std::chrono::steady_clock;
namespace m = observe;

struct Pipeline::Dataset {
  DatasetOptions options;
  std::unique_ptr<decode::RecordDecoder> builder;
  decode::DecodeStats published;  // decode statistics already counted in metrics
  // The open buffer (poll thread).
  // Per topic and partition: a dataset fed by a file source has several topics.
  std::map<kafka::TopicPartition, lake::OffsetRange> ranges;
  std::vector<RejectRecord> rejects;
  int64_t reject_bytes = 0;
  int64_t records = 0;
  SteadyClock::time_point first_record;
  std::unique_ptr<lake::Table> ledger_table;  // the poll thread's own catalog handle
  // Kafka metadata columns of the open buffer, and (routed datasets) each row's position.
  std::unique_ptr<records::MetadataColumnsBuilder> metadata;
  std::vector<int32_t> row_partitions;
  std::vector<int64_t> row_offsets;
  // Parts of the open flush handed to the flush thread already (poll thread).
  int64_t part_bytes = 0;
  int parts = 0;
  // Upsert datasets: whether each row of the open buffer is a tombstone (ingest/upsert_rows.h).
  std::vector<bool> row_tombstones;
  std::string spliced;  // the record with its key's fields (upsert.key_from kafka_key)

  int64_t buffered_bytes() const {
    return builder->buffered_bytes() + reject_bytes + (metadata ? metadata->buffered_bytes() : 0) +
           static_cast<int64_t>(row_offsets.size() * 12);
  }

  // The flush thread and its queue.
  std::unique_ptr<DatasetWriter> writer;
  std::unique_ptr<RoutedWriter> router;  // routed datasets write through it instead
  std::thread thread;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<SealedFlush> queue;             // GUARDED_BY(mutex)
  bool busy = false;                         // GUARDED_BY(mutex)
  bool stop = false;                         // GUARDED_BY(mutex)
  records::FilterOutcome streamed_filtered;  // flush thread: the open flush's parts so far
  int64_t queued_part_bytes = 0;  // GUARDED_BY(mutex): parts handed over and not yet written

  // Metrics.
  m::Counter* consumed = nullptr;
  m::Counter* redelivered = nullptr;
  m::Counter* written = nullptr;
  m::Counter* bytes_written = nullptr;
  m::Counter* files_written = nullptr;
  m::Counter* commits = nullptr;
  m::Counter* fenced = nullptr;
  m::Counter* orphaned = nullptr;
  m::Counter* retries = nullptr;
  m::Counter* conflicts = nullptr;
  m::Counter* nulled = nullptr;
  m::Counter* lossy = nullptr;
  m::Counter* coercion_nulled = nullptr;
  m::Counter* metadata_nulled = nullptr;   // key/header values that were not UTF-8
  m::Counter* metadata_dropped = nullptr;  // payload fields named like a metadata column
  int64_t metadata_nulled_published = 0;
  m::Counter* variant_nulled = nullptr;          // source values that are not JSON
  m::Counter* variant_fields_dropped = nullptr;  // payload fields named like a companion
  m::Gauge* buffer_bytes = nullptr;
  m::Histogram* flush_seconds = nullptr;
  m::Histogram* commit_seconds = nullptr;
  m::DatasetStatus* status = nullptr;  // /status, when the app keeps a model
};

}  // namespace weir::ingest
