// WAL mode's pipeline (ingest.mode wal; docs/ARCHITECTURE.md "WAL mode"): Kafka → decode →
// the dataset's table columns → local WAL segments (wal::SegmentRotator) → Kafka offsets
// committed at each rotation; a WalCommitLoop uploads and commits the ready files.
//
// Run(stop):
//  1. recovery of every dataset's WAL (wal/recovery.h) against the group's committed offsets
//     and the lake — before anything uploads; a refusal (naming the files) stops the start;
//  2. the commit loop starts, then the consumer: each assigned partition starts at
//     max(committed Kafka offset, ledger) (its low watermark when neither has one, which is
//     then the partition's origin for the committer);
//  3. the poll loop: every Poll's records of a dataset are decoded into one batch, split by
//     Kafka partition, typed, filtered, shaped (ingest/wal_rows.h) and appended to the
//     partition's segments; each rotation's offset end + 1 is committed to Kafka at once (a
//     failed commit is fatal: recovery deletes the ready file at the next start). Every 30 s
//     the aged groups rotate; every 5 s the WAL volume is measured and every consumer paused
//     at wal.disk_high_watermark_pct (resumed 5 points below), and the WAL gauges set;
//  4. on stop, the seed's order: release the partitions with rotation (at most a quarter of
//     shutdown.drain_timeout and 10 s), then upload and commit what is ready (Drain), within
//     the drain timeout. A drain that runs out returns an error; recovery finishes at the next
//     start.
// Rejected records (bad data, as direct mode's) go to a rejects segment of their partition's
// rotation group, which the commit loop lands in the dataset's rejects table with the rows.
// Revoked partitions rotate (and commit their offsets) before they go; lost ones drop their
// active files. Any WAL file error is fatal.
//
// Threading: Run's thread is the poll thread (the listener callbacks run on it); the commit
// loop has its own thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "base/log_rate_limiter.h"
#include "base/status.h"
#include "ingest/lake_progress.h"
#include "ingest/pipeline.h"
#include "ingest/rejects.h"
#include "ingest/wal_commit_loop.h"
#include "kafka/consumer.h"
#include "lake/catalog.h"
#include "observe/metrics_registry.h"
#include "wal/disk_watermark.h"
#include "wal/segment_rotator.h"

namespace weir::ingest {

struct WalModeOptions {
  std::string dir;  // wal.dir; a dataset's WAL is <dir>/<dataset>
  wal::SegmentLimits limits;
  int disk_high_watermark_pct = 80;
  std::chrono::milliseconds commit_interval{20000};
  std::chrono::milliseconds upload_interval{5000};
  std::chrono::milliseconds disk_interval{5000};
  std::chrono::milliseconds age_check_interval{30000};
  // How long recovery retries a catalog that fails retriably (startup.timeout).
  std::chrono::milliseconds recovery_deadline{15000};
};

// The WAL directory of a dataset.
std::string WalDatasetDirectory(const std::string& wal_dir, const std::string& dataset);

class WalPipeline final : public kafka::AssignmentListener {
 public:
  // Refuses what WAL mode does not do (routing, the file source).
  static Result<std::unique_ptr<WalPipeline>> Make(PipelineOptions options, WalModeOptions wal,
                                                   lake::Catalog* catalog,
                                                   observe::MetricsRegistry* metrics);
  ~WalPipeline() override;

  Status Run(std::stop_token stop);

  bool ready() const { return ready_.load(); }
  // /readyz: assigned and not draining, with the brokers answering.
  observe::ProbeResult Readiness() const { return progress_.Readiness(ready_.load()); }
  std::chrono::steady_clock::time_point last_loop() const { return last_loop_.load(); }

  Result<std::map<kafka::TopicPartition, int64_t>> OnAssigned(
      const std::vector<kafka::TopicPartition>& partitions) override;
  void OnRevoked(const std::vector<kafka::TopicPartition>& partitions) override;
  void OnLost(const std::vector<kafka::TopicPartition>& partitions) override;

 private:
  struct Dataset;
  WalPipeline(PipelineOptions options, WalModeOptions wal, lake::Catalog* catalog,
              observe::MetricsRegistry* metrics);

  Status Recover(const std::stop_token& stop);
  void Accept(const kafka::Message& message);
  // Writes the records decoded since the last call to the WAL.
  Status WriteDecoded(Dataset& d);
  // `rejects` (of one partition) as the rows of its rejects segment.
  Result<wal::PartitionRows> RejectRows(Dataset& d, const std::vector<RejectRecord>& rejects);
  // Commits the rotations' offsets (and those still pending) to Kafka; holds rotating_.
  Status CommitRotations(const std::vector<wal::Rotation>& rotations);
  // Deletes the ready files of `tp`'s refused commits and drops the partition.
  Status DiscardPending(const kafka::TopicPartition& tp);
  Status Release(const std::vector<kafka::TopicPartition>& partitions);
  void MeasureDisk();
  // Tells the status model which partitions are paused, and why (none: resumed).
  void PublishPaused(const std::vector<kafka::TopicPartition>& paused, const std::string& reason);
  void SetFatal(Status status);

  PipelineOptions options_;
  WalModeOptions wal_;
  lake::Catalog* catalog_;
  observe::MetricsRegistry* metrics_;
  LogRateLimiter field_log_limiter_{std::chrono::minutes(1)};  // the poll thread's
  std::vector<std::unique_ptr<Dataset>> datasets_;
  std::map<std::string, Dataset*, std::less<>> by_topic_;
  std::unique_ptr<RecordSource> consumer_;
  // Held from a rotation's rename until its Kafka commit is decided (a refused one deletes
  // its files): the commit loop lists the ready files under it, so it never lands a file the
  // group refused, whose records the partition's next owner reads again.
  std::mutex rotating_;
  LakeProgress progress_;  // lag by the lake's offsets, flushes in flight, the brokers
  std::unique_ptr<WalCommitLoop> commit_loop_;
  wal::DiskWatermark watermark_;
  bool paused_ = false;
  Status fatal_;  // poll thread
  std::map<kafka::TopicPartition, int64_t> next_offset_;
  // Rotations whose offset commit the group refused while the partition stayed assigned: the
  // offset to commit and the ready files, which go if the partition does (poll thread).
  struct PendingCommit {
    int64_t offset = 0;
    std::string directory;
    std::vector<std::string> files;
  };
  std::map<kafka::TopicPartition, PendingCommit> pending_;
  std::atomic<bool> ready_{false};
  std::atomic<std::chrono::steady_clock::time_point> last_loop_{};
};

}  // namespace weir::ingest
