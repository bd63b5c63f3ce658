#include "observe/status_model.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "observe/statement_text.h"

namespace weir::observe {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int64_t kFileSizeBounds[] = {64LL << 10,  256LL << 10, 1LL << 20,   4LL << 20,
                                       16LL << 20,  64LL << 20,  128LL << 20, 256LL << 20,
                                       512LL << 20, 1LL << 30};

constexpr std::string_view kOtherReason = "other";
constexpr int64_t kRateWindowMs =
    std::chrono::duration_cast<std::chrono::milliseconds>(kRateWindow).count();

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// Per-value rate between two samples; zeros when no time passed.
std::vector<double> RateBetween(const RateSample& from, const RateSample& to) {
  std::vector<double> rates(to.values.size(), 0.0);
  const double seconds = Seconds(to.at - from.at);
  if (seconds <= 0) return rates;
  for (size_t i = 0; i < rates.size() && i < from.values.size(); ++i) {
    rates[i] = std::max(0.0, (to.values[i] - from.values[i]) / seconds);
  }
  return rates;
}

}  // namespace

std::span<const int64_t> FileSizeBounds() { return kFileSizeBounds; }

void RateSeries::Offer(const RateSample& sample) {
  if (!samples_.empty() && sample.at - samples_.back().at < kRateStep) return;
  samples_.push_back(sample);
  while (samples_.size() > kRateSamples) samples_.pop_front();
}

Rates RateSeries::RatesTo(const RateSample& current) const {
  Rates rates;
  rates.now.assign(values_, 0.0);
  rates.window.assign(values_, 0.0);
  if (samples_.empty()) return rates;
  // "Now": from the newest sample at least one step old (or the oldest there is).
  const RateSample* recent = &samples_.front();
  const RateSample* oldest = nullptr;
  for (const RateSample& sample : samples_) {
    if (current.at - sample.at >= kRateStep) recent = &sample;
    if (oldest == nullptr && current.at - sample.at <= kRateWindow) oldest = &sample;
  }
  if (oldest == nullptr) oldest = &samples_.back();
  rates.now = RateBetween(*recent, current);
  rates.window = RateBetween(*oldest, current);
  for (size_t i = 1; i < samples_.size(); ++i) {
    if (current.at - samples_[i - 1].at > kRateWindow) continue;
    rates.points_at_unix_ms.push_back(samples_[i].at_unix_ms);
    rates.points.push_back(RateBetween(samples_[i - 1], samples_[i]));
  }
  return rates;
}

DatasetStatus::DatasetStatus(std::string name, std::string topic, const Clock& clock)
    : name_(std::move(name)), topic_(std::move(topic)), clock_(clock) {}

void DatasetStatus::Rejected(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++rejects_total_;
  auto it = rejects_.find(reason);
  if (it == rejects_.end()) {
    if (rejects_.size() >= kStatusReasons) reason = kOtherReason;
    it = rejects_.emplace(std::string(reason), 0).first;
  }
  ++it->second;
}

void DatasetStatus::SetLag(std::map<int32_t, PartitionProgress> lag) {
  std::lock_guard lock(mutex_);
  lag_ = std::move(lag);
}

void DatasetStatus::FlushStarted() {
  const int64_t now = UnixMillis(clock_.Now());
  std::lock_guard lock(mutex_);
  activity_.in_flight_since_unix_ms = now;
}

void DatasetStatus::AttemptFailed(std::string_view error) {
  const int64_t now = UnixMillis(clock_.Now());
  std::lock_guard lock(mutex_);
  if (activity_.failing_since_unix_ms == 0) activity_.failing_since_unix_ms = now;
  ++activity_.failed_attempts;
  activity_.last_error = std::string(error.substr(0, 1000));
  activity_.last_error_unix_ms = now;
}

void DatasetStatus::FlushEnded(bool landed) {
  std::lock_guard lock(mutex_);
  activity_.in_flight_since_unix_ms = 0;
  if (landed) {
    activity_.failing_since_unix_ms = 0;
    activity_.failed_attempts = 0;
  }
}

std::optional<int64_t> DatasetStatus::InFlightSinceUnixMs() const {
  std::lock_guard lock(mutex_);
  if (activity_.in_flight_since_unix_ms == 0) return std::nullopt;
  return activity_.in_flight_since_unix_ms;
}

void DatasetStatus::SetPaused(PausedState paused) {
  std::lock_guard lock(mutex_);
  paused_ = std::move(paused);
}

void DatasetStatus::Committed(CommitRecord commit, std::span<const int64_t> file_sizes) {
  commit.at_unix_ms = UnixMillis(clock_.Now());
  std::lock_guard lock(mutex_);
  ++commits_total_;
  rows_total_ += commit.rows;
  commits_.push_front(commit);
  while (commits_.size() > kStatusCommits) commits_.pop_back();
  for (int64_t size : file_sizes) file_sizes_.push_back(size);
  while (file_sizes_.size() > kStatusFileSizes) file_sizes_.pop_front();
}

RateSample DatasetStatus::Current(SteadyClock::time_point now) const {
  return RateSample{UnixMillis(clock_.Now()),
                    now,
                    {static_cast<double>(events_.load(std::memory_order_relaxed)),
                     static_cast<double>(bytes_.load(std::memory_order_relaxed))}};
}

void DatasetStatus::TakeSample(SteadyClock::time_point now) {
  const RateSample sample = Current(now);
  std::lock_guard lock(mutex_);
  series_.Offer(sample);
}

DatasetSnapshot DatasetStatus::Snapshot(SteadyClock::time_point now) const {
  DatasetSnapshot out;
  out.name = name_;
  out.topic = topic_;
  const RateSample current = Current(now);
  out.events_total = static_cast<int64_t>(current.values[0]);
  out.bytes_total = static_cast<int64_t>(current.values[1]);
  std::lock_guard lock(mutex_);
  out.rates = series_.RatesTo(current);
  out.commits_total = commits_total_;
  out.rows_total = rows_total_;
  out.rejects_total = rejects_total_;
  out.lag = lag_;
  out.activity = activity_;
  out.commits.assign(commits_.begin(), commits_.end());
  out.rejects.insert(rejects_.begin(), rejects_.end());
  out.file_size_counts.assign(FileSizeBounds().size() + 1, 0);
  for (int64_t size : file_sizes_) {
    const auto bounds = FileSizeBounds();
    const size_t bucket =
        static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), size) - bounds.begin());
    ++out.file_size_counts[bucket];
  }
  out.file_sizes_seen = static_cast<int64_t>(file_sizes_.size());
  out.paused = paused_;
  return out;
}

void ServeStatus::StatementFinished(QueryOutcome outcome, double seconds,
                                    std::string_view statement, std::string_view user) {
  (outcome == QueryOutcome::kOk      ? ok_
   : outcome == QueryOutcome::kError ? error_
                                     : cancelled_)
      .fetch_add(1, std::memory_order_relaxed);
  const int64_t now_ms = UnixMillis(clock_.Now());
  if (seconds <= admit_above_.load(std::memory_order_relaxed) &&
      now_ms - oldest_kept_ms_.load(std::memory_order_relaxed) <= kRateWindowMs) {
    return;  // the list is full of slower statements, none of which has expired
  }
  SlowStatement entry;
  entry.seconds = seconds;
  entry.statement = DisplayStatement(statement);
  entry.user = std::string(user.substr(0, 64));
  entry.status = outcome == QueryOutcome::kOk      ? "ok"
                 : outcome == QueryOutcome::kError ? "error"
                                                   : "cancelled";
  entry.at_unix_ms = now_ms;
  std::lock_guard lock(mutex_);
  Expire(entry.at_unix_ms);
  const auto at = std::upper_bound(
      slowest_.begin(), slowest_.end(), seconds,
      [](double value, const SlowStatement& kept) { return value > kept.seconds; });
  slowest_.insert(at, std::move(entry));
  if (slowest_.size() > kSlowStatements) slowest_.pop_back();
  UpdateAdmission();
}

void ServeStatus::UpdateAdmission() const {
  int64_t oldest = std::numeric_limits<int64_t>::max();
  for (const SlowStatement& kept : slowest_) oldest = std::min(oldest, kept.at_unix_ms);
  oldest_kept_ms_.store(oldest, std::memory_order_relaxed);
  admit_above_.store(slowest_.size() >= kSlowStatements ? slowest_.back().seconds : 0,
                     std::memory_order_relaxed);
}

void ServeStatus::Expire(int64_t now_unix_ms) const {
  const int64_t horizon = now_unix_ms - kRateWindowMs;
  if (std::erase_if(slowest_, [&](const SlowStatement& s) { return s.at_unix_ms < horizon; })) {
    UpdateAdmission();
  }
}

RateSample ServeStatus::Current(SteadyClock::time_point now) const {
  return RateSample{UnixMillis(clock_.Now()),
                    now,
                    {static_cast<double>(ok_.load(std::memory_order_relaxed)),
                     static_cast<double>(error_.load(std::memory_order_relaxed)),
                     static_cast<double>(cancelled_.load(std::memory_order_relaxed))}};
}

void ServeStatus::TakeSample(SteadyClock::time_point now) {
  const RateSample sample = Current(now);
  std::lock_guard lock(mutex_);
  series_.Offer(sample);
}

ServeSnapshot ServeStatus::Snapshot(SteadyClock::time_point now) const {
  ServeSnapshot out;
  const RateSample current = Current(now);
  out.sessions = sessions_.load(std::memory_order_relaxed);
  out.queries_ok = static_cast<int64_t>(current.values[0]);
  out.queries_error = static_cast<int64_t>(current.values[1]);
  out.queries_cancelled = static_cast<int64_t>(current.values[2]);
  std::lock_guard lock(mutex_);
  Expire(current.at_unix_ms);
  out.rates = series_.RatesTo(current);
  out.slowest = slowest_;
  return out;
}

StatusModel::StatusModel(std::string service, std::string version, const Clock& clock)
    : service_(std::move(service)),
      version_(std::move(version)),
      clock_(clock),
      started_(clock.Monotonic()) {}

DatasetStatus& StatusModel::Dataset(std::string_view name, std::string_view topic) {
  std::lock_guard lock(mutex_);
  for (const auto& dataset : datasets_) {
    if (dataset->name_ == name) return *dataset;
  }
  datasets_.push_back(
      std::make_unique<DatasetStatus>(std::string(name), std::string(topic), clock_));
  datasets_.back()->TakeSample(clock_.Monotonic());
  return *datasets_.back();
}

ServeStatus& StatusModel::Serve() {
  std::lock_guard lock(mutex_);
  if (serve_ == nullptr) {
    serve_ = std::make_unique<ServeStatus>(clock_);
    serve_->TakeSample(clock_.Monotonic());
  }
  return *serve_;
}

void StatusModel::SetWal(WalState wal) {
  std::lock_guard lock(mutex_);
  wal_ = wal;
}

void StatusModel::SetBroker(BrokerState broker) {
  std::lock_guard lock(mutex_);
  broker_ = std::move(broker);
}

void StatusModel::Tick() {
  const auto now = clock_.Monotonic();
  std::lock_guard lock(mutex_);
  if (last_tick_ != SteadyClock::time_point{} && now - last_tick_ < kRateStep) return;
  last_tick_ = now;
  for (auto& dataset : datasets_) dataset->TakeSample(now);
  if (serve_ != nullptr) serve_->TakeSample(now);
}

StatusSnapshot StatusModel::Snapshot() const {
  const auto now = clock_.Monotonic();
  StatusSnapshot out;
  out.service = service_;
  out.version = version_;
  out.generated_at_unix_ms = UnixMillis(clock_.Now());
  out.uptime_seconds = Seconds(now - started_);
  std::lock_guard lock(mutex_);
  out.wal = wal_;
  out.broker = broker_;
  for (const auto& dataset : datasets_) out.datasets.push_back(dataset->Snapshot(now));
  if (serve_ != nullptr) out.serve = serve_->Snapshot(now);
  return out;
}

}  // namespace weir::observe
