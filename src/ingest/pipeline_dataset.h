// Pipeline::Dataset: one dataset's state inside the pipeline — its decoder and buffer (the poll
// thread's), its queue of sealed flushes, its flush thread and writers, its metrics. Private to
// pipeline.cc and pipeline_flush.cc (the flush thread's loop).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "ingest/decode_workers.h"
#include "ingest/pipeline.h"
#include "ingest/record_stages.h"
#include "observe/metric_names.h"
#include "records/mapped_batch_builder.h"

namespace weir::ingest {

// Shorthands of the pipeline's two files (this header is theirs alone).
using SteadyClock = std::chrono::steady_clock;
namespace m = observe;

// What one decoder builds (the poll thread's, or a decode worker's: ingest/decode_workers.h):
// its rows, their Kafka metadata columns and the records it rejected.
struct DecodeShard {
  std::unique_ptr<decode::RecordDecoder> builder;
  RecordStages::Published published;  // its statistics already counted in metrics
  std::unique_ptr<records::MetadataColumnsBuilder> metadata;
  std::vector<RejectRecord> rejects;
  int64_t reject_bytes = 0;
  // Routed datasets: each row's position; upsert datasets: whether it is a tombstone
  // (ingest/upsert_rows.h). Neither has decode workers.
  std::vector<int32_t> row_partitions;
  std::vector<int64_t> row_offsets;
  std::vector<bool> row_tombstones;
  std::string spliced;  // the record with its key's fields (upsert.key_from kafka_key)
  // A worker's decoded_bytes() and buffered_bytes() as of its last few records, for the poll
  // thread.
  std::atomic<int64_t> decoded{0};
  std::atomic<int64_t> buffered{0};
  int64_t since_published = 0;          // a worker's records since it last published
  SteadyClock::duration decode_time{};  // a worker's, not yet counted in the stage times

  // Rows and metadata columns.
  int64_t decoded_bytes() const {
    return builder->buffered_bytes() + (metadata ? metadata->buffered_bytes() : 0);
  }
  int64_t buffered_bytes() const {
    return decoded_bytes() + reject_bytes + static_cast<int64_t>(row_offsets.size() * 12);
  }
};

struct Pipeline::Dataset {
  DatasetOptions options;
  std::unique_ptr<RecordStages> stages;  // over `options`
  // One shard decoded on the poll thread; with decode workers, one per worker.
  std::vector<std::unique_ptr<DecodeShard>> shards;
  std::unique_ptr<DecodeWorkers> workers;
  // The open buffer (poll thread).
  // Per topic and partition: a dataset fed by a file source has several topics.
  std::map<kafka::TopicPartition, lake::OffsetRange> ranges;
  int64_t records = 0;
  SteadyClock::time_point first_record;
  std::unique_ptr<lake::Table> ledger_table;  // the poll thread's own catalog handle
  // Parts of the open flush handed to the flush thread already (poll thread).
  int64_t part_bytes = 0;
  int parts = 0;

  // What the open buffer's decoders hold: rows and metadata (decoded), and with the rejects and
  // the records queued for the workers (buffered). Poll thread.
  int64_t decoded_bytes() const {
    int64_t bytes = 0;
    for (const auto& shard : shards) {
      bytes += workers ? shard->decoded.load() : shard->decoded_bytes();
    }
    return bytes;
  }
  int64_t buffered_bytes() const {
    int64_t bytes = workers ? workers->queued_bytes() : 0;
    for (const auto& shard : shards) {
      bytes += workers ? shard->buffered.load() : shard->buffered_bytes();
    }
    return bytes;
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
  m::Gauge* buffer_bytes = nullptr;
  m::Histogram* flush_seconds = nullptr;
  m::Histogram* commit_seconds = nullptr;
  m::DatasetStatus* status = nullptr;  // /status, when the app keeps a model
};

}  // namespace weir::ingest
