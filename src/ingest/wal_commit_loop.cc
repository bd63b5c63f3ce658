#include "ingest/wal_commit_loop.h"

#include <unistd.h>

#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kafka/admin.h"
#include "observe/metric_names.h"
#include "wal/commit_plan.h"
#include "wal/fault.h"
#include "wal/wal_directory.h"

namespace weir::ingest {
namespace {

namespace m = observe;
using SteadyClock = std::chrono::steady_clock;

std::string WriterPrefix() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return fmt::format("unknown-host/{}", getpid());
  return fmt::format("{}/{}/wal", name, getpid());
}

bool IsCode(const Status& status, std::string_view code) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail != nullptr && detail->code() == code;
}

}  // namespace

WalCommitLoop::WalCommitLoop(WalCommitLoopOptions options, lake::Catalog* catalog,
                             observe::MetricsRegistry* metrics)
    : options_(std::move(options)),
      catalog_(catalog),
      metrics_(metrics),
      seed_(std::random_device{}()) {
  for (const auto& location : options_.datasets) {
    auto d = std::make_unique<Dataset>();
    d->location = location;
    datasets_.push_back(std::move(d));
  }
}

WalCommitLoop::~WalCommitLoop() { Stop(); }

void WalCommitLoop::Start() {
  const auto now = SteadyClock::now();
  for (auto& d : datasets_) d->next_commit = now + Interval();
  thread_ = std::thread([this] { Loop(); });
}

std::chrono::milliseconds WalCommitLoop::Interval() {
  // The process's own jitter: each process commits a little off the others' beat.
  std::mt19937_64 random(seed_++);
  const int64_t base = options_.commit_interval.count();
  const int64_t spread = base / 10;
  std::uniform_int_distribution<int64_t> jitter(-spread, spread);
  return std::chrono::milliseconds(std::max<int64_t>(1, base + jitter(random)));
}

void WalCommitLoop::SetOrigin(const std::string& topic, int32_t partition, int64_t offset) {
  std::lock_guard lock(mutex_);
  origins_[{topic, partition}] = offset;
}

void WalCommitLoop::SetFatal(Status status) {
  spdlog::error("WAL committer: {}", status.ToString());
  std::lock_guard lock(mutex_);
  if (fatal_.ok()) fatal_ = std::move(status);
  changed_.notify_all();
}

Status WalCommitLoop::fatal() const {
  std::lock_guard lock(mutex_);
  return fatal_;
}

Status WalCommitLoop::EnsureCommitter(Dataset& d) {
  if (d.committer) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(auto opened,
                       catalog_->OpenTable(d.location.spec, lake::OpenMode::kOpenOnly));
  if (opened.status != lake::OpenStatus::kOpened) return Status::OK();  // not created yet
  d.table = std::move(opened.table);
  wal::RejectsTableOpener rejects;
  if (d.location.rejects) rejects = [this, &d] { return OpenRejects(d); };
  d.committer =
      std::make_unique<wal::WalCommitter>(d.location.directory, d.table.get(), WriterPrefix(),
                                          Clock::System(), seed_++, std::move(rejects));
  d.committer->WriteBloomSidecars(d.location.bloom_sidecar_columns);
  return Status::OK();
}

Result<lake::Table*> WalCommitLoop::OpenRejects(Dataset& d) {
  if (d.rejects_table) return d.rejects_table.get();
  WEIR_ASSIGN_OR_RAISE(auto opened,
                       catalog_->OpenTable(*d.location.rejects, lake::OpenMode::kOpenOrCreate));
  if (opened.status != lake::OpenStatus::kOpened) {
    return ClassifiedError(ErrorClass::kFatal, "ingest", "rejects_refused",
                           fmt::format("dataset {}: rejects table {}: {}", d.location.name,
                                       d.location.rejects->table, opened.reason));
  }
  d.rejects_table = std::move(opened.table);
  return d.rejects_table.get();
}

wal::PartitionOffsets WalCommitLoop::Origins(Dataset& d) {
  wal::PartitionOffsets origin;
  {
    std::lock_guard lock(mutex_);
    origin = origins_;
  }
  // A partition without a ledger may also start at its low watermark: no earlier offset can
  // be pending anywhere (every owner before began at or after it).
  auto entries = wal::ListSegments(d.location.directory);
  if (!entries.ok()) return origin;
  for (const auto& entry : *entries) {
    if (!entry.name || entry.name->state != wal::SegmentState::kReady) continue;
    const auto key = std::pair{entry.name->topic, entry.name->partition};
    if (origin.count(key)) continue;
    auto cached = low_watermarks_.find(key);
    if (cached == low_watermarks_.end() || d.waiting) {
      auto marks = kafka::Watermarks(options_.bootstrap_servers, key.first, key.second);
      if (!marks.ok()) continue;
      cached = low_watermarks_.insert_or_assign(key, marks->first).first;
    }
    origin[key] = cached->second;
  }
  return origin;
}

bool WalCommitLoop::Round(Dataset& d, bool commit) {
  const std::string& name = d.location.name;
  const m::Labels labels{{std::string(m::kLabelDataset), name}};
  if (Status ensured = EnsureCommitter(d); !ensured.ok()) {
    spdlog::warn("dataset {}: WAL committer cannot open its table (retried): {}", name,
                 ensured.message());
    return true;
  }
  if (!d.committer) return true;
  auto uploaded = d.committer->Upload();
  if (!uploaded.ok()) {
    if (ClassOf(uploaded.status()) == ErrorClass::kFatal) {
      SetFatal(WithContext(uploaded.status(), "dataset " + name));
      return false;
    }
    spdlog::warn("dataset {}: WAL upload failed (retried): {}", name, uploaded.status().message());
    return true;
  }
  if (uploaded->failed > 0) {
    spdlog::warn("dataset {}: {} WAL file(s) not uploaded (retried at the next scan): {}", name,
                 uploaded->failed, uploaded->first_error.message());
  }
  d.uploaded_files += uploaded->uploaded;
  if (!commit) return true;
  if (d.uploaded_files > 0) wal::FaultPoint("exit_after_upload");
  LakeProgress* progress = options_.progress;
  if (progress != nullptr) progress->FlushStarted(name);
  const auto started = SteadyClock::now();
  auto done = d.committer->CommitOnce(Origins(d));
  if (progress != nullptr) {
    if (!done.ok()) progress->AttemptFailed(name, done.status());
    progress->FlushEnded(name, done.ok() && done->committed);
  }
  if (!done.ok()) {
    if (IsCode(done.status(), "table_changed")) {
      spdlog::info("dataset {}: table changed; reopening it for the WAL commit", name);
      d.committer.reset();
      d.table.reset();
      d.rejects_table.reset();
      return true;
    }
    if (ClassOf(done.status()) == ErrorClass::kFatal) {
      SetFatal(WithContext(done.status(), "dataset " + name));
      return false;
    }
    metrics_->Counter(m::kCommitRetries, labels).Increment();
    spdlog::warn("dataset {}: WAL commit failed (retried at the next interval): {}", name,
                 done.status().message());
    return true;
  }
  d.waiting = done->waiting_groups > 0;
  if (done->committed) {
    metrics_->Histogram(m::kCommitDuration, labels)
        .Observe(std::chrono::duration<double>(SteadyClock::now() - started).count());
    if (progress != nullptr) {
      for (const auto& range : done->ranges) {
        progress->Committed(range.topic, range.partition, range.end);
      }
      if (observe::DatasetStatus* status = progress->StatusOf(name); status != nullptr) {
        observe::CommitRecord record;
        record.rows = done->rows;
        record.rejects = done->rejects;
        record.files = done->files;
        record.commit_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - started)
                .count();
        status->Committed(record, {});
      }
    }
    metrics_->Counter(m::kCommits, labels).Increment();
    metrics_->Counter(m::kRecordsWritten, labels).Increment(static_cast<double>(done->rows));
    metrics_->Counter(m::kFilesWritten, labels).Increment(static_cast<double>(done->files));
    spdlog::info(
        "dataset {}: WAL commit: {} rows, {} rejects, {} file(s), {} range(s); {} local file(s) "
        "deleted, {} group(s) waiting",
        name, done->rows, done->rejects, done->files, done->ranges.size(), done->deleted_local,
        done->waiting_groups);
  } else if (done->status == lake::CommitStatus::kFenced) {
    metrics_->Counter(m::kFencedCommits, labels).Increment();
    spdlog::warn("dataset {}: WAL commit fenced; re-planned at the next interval", name);
  }
  return true;
}

void WalCommitLoop::Loop() {
  auto next_upload = SteadyClock::now() + options_.upload_interval;
  while (true) {
    bool draining = false;
    SteadyClock::time_point deadline;
    {
      std::unique_lock lock(mutex_);
      auto wake = next_upload;
      for (auto& d : datasets_) wake = std::min(wake, d->next_commit);
      changed_.wait_until(lock, wake, [&] { return stop_ || draining_ || !fatal_.ok(); });
      if (stop_ || !fatal_.ok()) return;
      draining = draining_;
      deadline = drain_deadline_;
    }
    if (draining) {
      bool empty = true;
      for (auto& d : datasets_) {
        if (!Round(*d, /*commit=*/true)) return;
        auto entries = wal::ListSegments(d->location.directory);
        for (const auto& entry : entries.ok() ? *entries : std::vector<wal::SegmentEntry>{}) {
          if (entry.name) empty = false;
        }
        if (!entries.ok()) empty = false;
      }
      std::unique_lock lock(mutex_);
      if (empty) {
        drained_ = true;
        changed_.notify_all();
        return;
      }
      if (SteadyClock::now() >= deadline) return;
      // A round that could not finish (an outage): try again shortly, not in a tight loop.
      changed_.wait_for(lock, std::chrono::milliseconds(500), [&] { return stop_; });
      if (stop_) return;
      continue;
    }
    const auto now = SteadyClock::now();
    const bool upload = now >= next_upload;
    if (upload) next_upload = now + options_.upload_interval;
    for (auto& d : datasets_) {
      const bool commit = now >= d->next_commit;
      if (!upload && !commit) continue;
      if (commit) d->next_commit = now + Interval();
      if (!Round(*d, commit)) return;
    }
  }
}

bool WalCommitLoop::Drain(SteadyClock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (!thread_.joinable()) return false;
  draining_ = true;
  drain_deadline_ = deadline;
  changed_.notify_all();
  changed_.wait_until(lock, deadline, [&] { return drained_ || !fatal_.ok(); });
  return drained_;
}

void WalCommitLoop::Stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace weir::ingest
