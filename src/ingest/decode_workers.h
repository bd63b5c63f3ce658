// Parallel decode (issue 12, `decode_threads`): a dataset's records decoded on worker threads
// while the poll thread goes on polling. Each worker owns a disjoint set of Kafka partitions
// (the pipeline submits partition p to worker p % N), so a worker sees its partitions' records
// in offset order and the rows of one partition stay in one builder.
//
// The poll thread copies each record (payload, key, topic and the header values the metadata
// columns name) into the current batch of its worker — librdkafka's buffers are only valid
// during the poll — and hands batches over as they fill (512 records or 1 MiB) and at every
// Push. A worker's queue holds at most four batches: beyond that Submit waits (the time is
// returned as back-pressure), so the records copied but not decoded stay bounded.
//
// The worker calls `decode(worker, message, headers)` for each record in submission order; the
// callback owns everything decoded (the pipeline's per-worker builders). Drain hands over what
// is gathered and waits until every worker is idle: only then may the poll thread touch what
// the callbacks built (seal a part, abandon a buffer).
//
// Threading: Submit, Push, Drain from one thread (the poll thread); queued_bytes from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kafka/consumer.h"

namespace weir::ingest {

using HeaderValues = std::span<const std::optional<std::string_view>>;

class DecodeWorkers {
 public:
  using DecodeFn =
      std::function<void(size_t worker, const kafka::Message& message, HeaderValues headers)>;

  // `header_names`: the headers whose values are copied with each record (in this order).
  DecodeWorkers(size_t workers, std::vector<std::string> header_names, DecodeFn decode);
  ~DecodeWorkers();
  DecodeWorkers(const DecodeWorkers&) = delete;
  DecodeWorkers& operator=(const DecodeWorkers&) = delete;

  size_t size() const { return workers_.size(); }

  // Copies `message` into the batch of worker `worker`; hands the batch over once full.
  // Returns the time spent waiting for room in that worker's queue.
  std::chrono::steady_clock::duration Submit(size_t worker, const kafka::Message& message);
  // Hands every partly filled batch over, without waiting.
  void Push();
  // Push, then waits until every worker has decoded everything submitted.
  void Drain();
  // Bytes of records copied and not decoded yet.
  int64_t queued_bytes() const { return queued_bytes_.load(); }

 private:
  struct Entry {
    int32_t partition = 0;
    int64_t offset = 0;
    int64_t timestamp_ms = -1;
    bool key_is_null = true;
    uint32_t topic = 0, topic_size = 0, key = 0, key_size = 0, payload = 0, payload_size = 0;
    uint32_t headers = 0;  // index of its first header value in Batch::headers
  };
  struct HeaderSlot {
    bool present = false;
    uint32_t at = 0, size = 0;
  };
  struct Batch {
    std::string bytes;
    std::vector<Entry> entries;
    std::vector<HeaderSlot> headers;
  };
  struct Worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Batch> queue;   // GUARDED_BY(mutex)
    bool busy = false;         // GUARDED_BY(mutex)
    bool stop = false;         // GUARDED_BY(mutex)
    Batch filling;             // poll thread
    std::vector<Batch> spare;  // GUARDED_BY(mutex): emptied batches, their capacity kept
  };

  void Run(Worker& worker, size_t index);
  // Hands `worker`'s filling batch over; with `wait`, first waits for room in its queue.
  std::chrono::steady_clock::duration Hand(Worker& worker, bool wait);

  std::vector<std::string> header_names_;
  DecodeFn decode_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<int64_t> queued_bytes_{0};
};

}  // namespace weir::ingest
