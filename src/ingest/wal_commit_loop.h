// WAL mode's uploader and committer thread (ingest.mode wal): for every dataset, the ready
// files are uploaded every `upload_interval` (5 s) and committed every `commit_interval`
// (wal.commit_interval) ± a per-process jitter of up to 10 %, one commit per dataset with all
// its uploaded files and their ledger ranges (wal::WalCommitter). The table is opened once it
// exists and reopened after it changed (the files are uploaded again, to the same objects).
// A retriable failure (object store or catalog down) leaves the files for the next round; a
// fatal one (a ledger inside a file's range) stops the process through fatal().
//
// Drain (shutdown): upload and commit at once, round after round, until no ready file is left
// or the deadline passes.
//
// Threading: Start/Drain/Stop from the owner's thread; SetOrigin and fatal() from any thread;
// the work on the loop's own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "ingest/lake_progress.h"
#include "lake/catalog.h"
#include "lake/table_spec.h"
#include "observe/metrics_registry.h"
#include "wal/committer.h"

namespace weir::ingest {

struct WalDatasetLocation {
  std::string name;
  std::string directory;  // wal.dir/<dataset>
  lake::TableSpec spec;
  std::optional<lake::TableSpec> rejects;          // the rejects table (rejects_enabled)
  std::vector<std::string> bloom_sidecar_columns;  // wal.bloom_sidecar; empty: no sidecars
};

struct WalCommitLoopOptions {
  std::vector<WalDatasetLocation> datasets;
  std::string bootstrap_servers;  // for the low watermarks of partitions without a ledger
  std::chrono::milliseconds upload_interval{5000};
  std::chrono::milliseconds commit_interval{20000};
  // Held by the poll thread from a rotation's rename until its Kafka commit is decided
  // (wal::WalCommitter::GuardListing); null: no guard.
  std::mutex* rotation_mutex = nullptr;
  // Told how each dataset's commits go and what landed (null: nobody).
  LakeProgress* progress = nullptr;
};

class WalCommitLoop {
 public:
  WalCommitLoop(WalCommitLoopOptions options, lake::Catalog* catalog,
                observe::MetricsRegistry* metrics);
  ~WalCommitLoop();

  void Start();
  // Where a partition without ledger began on this process (neither the ledger nor Kafka had
  // an offset): the committer may start its chain there.
  void SetOrigin(const std::string& topic, int32_t partition, int64_t offset);
  // Uploads and commits until no ready file is left or `deadline`; true when none is left.
  bool Drain(std::chrono::steady_clock::time_point deadline);
  void Stop();
  Status fatal() const;

 private:
  struct Dataset {
    WalDatasetLocation location;
    std::unique_ptr<lake::Table> table;
    std::unique_ptr<lake::Table> rejects_table;  // opened by the committer on first need
    std::unique_ptr<wal::WalCommitter> committer;
    std::chrono::steady_clock::time_point next_commit{};
    int64_t uploaded_files = 0;  // uploads so far (the exit_after_upload fault point)
    bool waiting = false;        // the last commit left groups waiting: refresh the watermarks
  };

  void Loop();
  // One round for `d`: upload, and commit when `commit`; false on a fatal error.
  bool Round(Dataset& d, bool commit);
  Status EnsureCommitter(Dataset& d);
  Result<lake::Table*> OpenRejects(Dataset& d);
  wal::PartitionOffsets Origins(Dataset& d);
  void SetFatal(Status status);
  std::chrono::milliseconds Interval();

  WalCommitLoopOptions options_;
  lake::Catalog* catalog_;
  observe::MetricsRegistry* metrics_;
  std::vector<std::unique_ptr<Dataset>> datasets_;
  std::map<std::pair<std::string, int32_t>, int64_t> low_watermarks_;  // loop thread
  uint64_t seed_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;                                     // GUARDED_BY(mutex_)
  bool draining_ = false;                                 // GUARDED_BY(mutex_)
  std::chrono::steady_clock::time_point drain_deadline_;  // GUARDED_BY(mutex_)
  bool drained_ = false;                                  // GUARDED_BY(mutex_)
  wal::PartitionOffsets origins_;                         // GUARDED_BY(mutex_)
  Status fatal_;                                          // GUARDED_BY(mutex_)
};

}  // namespace weir::ingest
