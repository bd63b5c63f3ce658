// What /status and /status.json show: a small, bounded model of recent activity that ingest and
// serve feed through narrow per-dataset and per-server handles, sampled into rate series.
//
// Memory is bounded: per dataset the last kStatusCommits commits, the sizes of the last
// kStatusFileSizes files, at most kStatusReasons reject reasons, the partitions of the current
// assignment, and kRateSamples rate samples; for serve the kSlowStatements slowest statements
// of the last 15 minutes, each text redacted and truncated (statement_text.h).
//
// Threading: every method may be called from any thread. The per-record calls
// (DatasetStatus::Consumed) and the counters of ServeStatus are relaxed atomics; everything
// else takes a short lock of its own object, never while calling out. Tick() (a feeder's loop)
// and Snapshot() (the HTTP server's threads) take the model's lock.
//
// Ownership: the model owns its handles; references stay valid for the model's lifetime
// (datasets are never removed). The model must outlive its feeders and the HTTP server.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"

namespace weir::observe {

inline constexpr size_t kStatusCommits = 20;
inline constexpr size_t kStatusFileSizes = 200;
inline constexpr size_t kStatusReasons = 32;  // more distinct reasons are counted as "other"
inline constexpr size_t kSlowStatements = 10;
inline constexpr std::chrono::seconds kRateStep{10};
inline constexpr std::chrono::minutes kRateWindow{15};
inline constexpr size_t kRateSamples = 91;  // kRateWindow / kRateStep, plus the start

// One landed commit of a dataset.
struct CommitRecord {
  int64_t snapshot_id = -1;
  int64_t rows = 0, rejects = 0, files = 0, bytes = 0;
  int64_t write_ms = 0, commit_ms = 0;
  int64_t at_unix_ms = 0;  // set by DatasetStatus::Committed
};

// A cumulative value at one time (a rate sample).
struct RateSample {
  int64_t at_unix_ms = 0;
  std::chrono::steady_clock::time_point at;
  std::vector<double> values;
};

// A rate over an interval, per value of the series it comes from.
struct Rates {
  std::vector<double> now;     // over the last kRateStep (or since the start, when younger)
  std::vector<double> window;  // over the last kRateWindow (or since the start)
  // Per interval between consecutive samples, oldest first: the chart.
  std::vector<int64_t> points_at_unix_ms;
  std::vector<std::vector<double>> points;  // points[i][value]
};

// Upper bounds (bytes) of the file-size histogram; the last bucket is everything above.
std::span<const int64_t> FileSizeBounds();

// One assigned partition: where its log ends, what the lake holds of it and where the consumer
// reads; -1 where not known yet.
struct PartitionProgress {
  int64_t high_watermark = -1;
  int64_t lake_next = -1;  // the next offset not in the lake (where a restart resumes)
  int64_t position = -1;   // the consumer's next offset
  // Messages not yet in the lake, and not yet fetched; -1 while unknown.
  int64_t lag() const {
    return high_watermark < 0 || lake_next < 0 ? -1
                                               : std::max<int64_t>(0, high_watermark - lake_next);
  }
  int64_t fetch_lag() const {
    return high_watermark < 0 || position < 0 ? -1
                                              : std::max<int64_t>(0, high_watermark - position);
  }
  bool operator==(const PartitionProgress&) const = default;
};

// How a dataset's flushes are going: the one in flight (write and commit, retries included)
// and the failures of its attempts.
struct CommitActivity {
  int64_t in_flight_since_unix_ms = 0;  // 0 = no flush in flight
  int64_t failing_since_unix_ms = 0;    // the first failed attempt since the last landed flush
  int64_t failed_attempts = 0;          // since then
  std::string last_error;               // the newest failed attempt's error
  int64_t last_error_unix_ms = 0;
};

// The Kafka brokers, as the consumer sees them.
struct BrokerState {
  int64_t unreachable_since_unix_ms = 0;  // 0 = reachable (or not known to be otherwise)
  std::string error;                      // the newest transport error while unreachable
};

struct PausedState {
  std::vector<int32_t> partitions;
  std::string reason;
};

// The write-ahead log, when ingest runs in WAL mode (docs/ARCHITECTURE.md): direct mode has no
// log; in WAL mode the segments not yet confirmed by a commit.
struct WalState {
  bool wal_mode = false;
  int64_t segments = 0, bytes = 0;
  int64_t oldest_unconfirmed_unix_ms = 0;  // 0 = none
};

struct DatasetSnapshot {
  std::string name, topic;
  int64_t events_total = 0, bytes_total = 0;
  int64_t commits_total = 0, rows_total = 0, rejects_total = 0;
  Rates rates;                               // values: events, bytes
  std::map<int32_t, PartitionProgress> lag;  // by partition, current assignment
  CommitActivity activity;
  std::vector<CommitRecord> commits;       // newest first
  std::map<std::string, int64_t> rejects;  // by reason, since the start
  std::vector<int64_t> file_size_counts;   // per FileSizeBounds() bucket, plus one above
  int64_t file_sizes_seen = 0;             // files in file_size_counts
  PausedState paused;
};

struct SlowStatement {
  double seconds = 0;
  std::string statement;  // redacted and truncated
  std::string user;
  std::string status;  // ok, error, cancelled
  int64_t at_unix_ms = 0;
};

struct ServeSnapshot {
  int64_t sessions = 0;
  int64_t queries_ok = 0, queries_error = 0, queries_cancelled = 0;
  Rates rates;                         // values: ok, error, cancelled
  std::vector<SlowStatement> slowest;  // slowest first
};

struct StatusSnapshot {
  std::string service;  // "ingest" or "serve"
  std::string version;
  int64_t generated_at_unix_ms = 0;
  double uptime_seconds = 0;
  WalState wal;
  BrokerState broker;
  std::vector<DatasetSnapshot> datasets;
  std::optional<ServeSnapshot> serve;
};

// Keeps up to kRateSamples samples of cumulative values, one per kRateStep at most.
class RateSeries {
 public:
  explicit RateSeries(size_t values) : values_(values) {}
  // Appends a sample unless the last one is younger than kRateStep.
  void Offer(const RateSample& sample);
  // Rates from the samples to `current` (the values now).
  Rates RatesTo(const RateSample& current) const;

 private:
  size_t values_;
  std::deque<RateSample> samples_;
};

// A dataset's handle: the poll thread reports records, rejects, lag and pauses, the flush
// thread commits.
class DatasetStatus {
 public:
  DatasetStatus(std::string name, std::string topic, const Clock& clock);

  // One record consumed (poll thread): two relaxed atomic adds.
  void Consumed(int64_t payload_bytes) {
    events_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(payload_bytes, std::memory_order_relaxed);
  }
  void Rejected(std::string_view reason);
  // The progress of every partition of the dataset's topic that is assigned now.
  void SetLag(std::map<int32_t, PartitionProgress> lag);
  // A flush (its write and commit) started, one of its attempts failed (it is retried or the
  // flush gives up), it ended (landed or not).
  void FlushStarted();
  void AttemptFailed(std::string_view error);
  void FlushEnded(bool landed);
  // When the current flush started; nullopt when none is in flight.
  std::optional<int64_t> InFlightSinceUnixMs() const;
  // Paused partitions and why; empty partitions = nothing paused.
  void SetPaused(PausedState paused);
  // A commit landed, with the sizes of the data files it added.
  void Committed(CommitRecord commit, std::span<const int64_t> file_sizes);

 private:
  friend class StatusModel;
  void TakeSample(std::chrono::steady_clock::time_point now);
  DatasetSnapshot Snapshot(std::chrono::steady_clock::time_point now) const;
  RateSample Current(std::chrono::steady_clock::time_point now) const;

  const std::string name_, topic_;
  const Clock& clock_;
  std::atomic<int64_t> events_{0}, bytes_{0};
  mutable std::mutex mutex_;
  RateSeries series_{2};                                 // GUARDED_BY(mutex_)
  int64_t commits_total_ = 0, rows_total_ = 0;           // GUARDED_BY(mutex_)
  int64_t rejects_total_ = 0;                            // GUARDED_BY(mutex_)
  std::deque<CommitRecord> commits_;                     // GUARDED_BY(mutex_), newest first
  std::deque<int64_t> file_sizes_;                       // GUARDED_BY(mutex_)
  std::map<std::string, int64_t, std::less<>> rejects_;  // GUARDED_BY(mutex_)
  std::map<int32_t, PartitionProgress> lag_;             // GUARDED_BY(mutex_)
  CommitActivity activity_;                              // GUARDED_BY(mutex_)
  PausedState paused_;                                   // GUARDED_BY(mutex_)
};

enum class QueryOutcome { kOk, kError, kCancelled };

// weir serve's handle: sessions come and go, statements finish (session threads).
class ServeStatus {
 public:
  explicit ServeStatus(const Clock& clock) : clock_(clock) {}

  void SessionOpened() { sessions_.fetch_add(1, std::memory_order_relaxed); }
  void SessionClosed() { sessions_.fetch_sub(1, std::memory_order_relaxed); }
  // A statement ended; its text is redacted and truncated before it is kept, and only when it
  // is among the slowest of the window (a relaxed load decides most statements).
  void StatementFinished(QueryOutcome outcome, double seconds, std::string_view statement,
                         std::string_view user);

 private:
  friend class StatusModel;
  void TakeSample(std::chrono::steady_clock::time_point now);
  ServeSnapshot Snapshot(std::chrono::steady_clock::time_point now) const;
  RateSample Current(std::chrono::steady_clock::time_point now) const;
  // Drops entries older than the window; requires mutex_.
  void Expire(int64_t now_unix_ms) const;
  // Publishes the admission bar of the list; requires mutex_.
  void UpdateAdmission() const;

  const Clock& clock_;
  std::atomic<int64_t> sessions_{0};
  std::atomic<int64_t> ok_{0}, error_{0}, cancelled_{0};
  // Seconds a statement must exceed to enter a full list (0 while not full).
  mutable std::atomic<double> admit_above_{0};
  // When the oldest kept statement ended (an expiry reopens the list).
  mutable std::atomic<int64_t> oldest_kept_ms_{0};
  mutable std::mutex mutex_;
  RateSeries series_{3};                        // GUARDED_BY(mutex_)
  mutable std::vector<SlowStatement> slowest_;  // GUARDED_BY(mutex_), slowest first
};

class StatusModel {
 public:
  // `service` is "ingest" or "serve"; `clock` must outlive the model.
  StatusModel(std::string service, std::string version, const Clock& clock = Clock::System());
  StatusModel(const StatusModel&) = delete;
  StatusModel& operator=(const StatusModel&) = delete;

  // The handle of dataset `name` (reading `topic`), created on first use.
  DatasetStatus& Dataset(std::string_view name, std::string_view topic);
  // The serve handle, created on first use.
  ServeStatus& Serve();
  void SetWal(WalState wal);
  void SetBroker(BrokerState broker);

  // Takes a rate sample of every handle when kRateStep has passed since the last one; cheap
  // otherwise. Called from a feeder's loop (ingest's poll loop, serve's main loop).
  void Tick();

  StatusSnapshot Snapshot() const;

 private:
  const std::string service_, version_;
  const Clock& clock_;
  const std::chrono::steady_clock::time_point started_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<DatasetStatus>> datasets_;  // GUARDED_BY(mutex_)
  std::unique_ptr<ServeStatus> serve_;                    // GUARDED_BY(mutex_)
  WalState wal_;                                          // GUARDED_BY(mutex_)
  BrokerState broker_;                                    // GUARDED_BY(mutex_)
  std::chrono::steady_clock::time_point last_tick_{};     // GUARDED_BY(mutex_)
};

}  // namespace weir::observe
