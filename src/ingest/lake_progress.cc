#include "ingest/lake_progress.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "observe/exposition.h"
#include "observe/metric_names.h"

namespace weir::ingest {
namespace {

namespace m = observe;
using SteadyClock = std::chrono::steady_clock;

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

double SecondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

}  // namespace

LakeProgress::LakeProgress(observe::MetricsRegistry* metrics, observe::StatusModel* status)
    : metrics_(metrics), status_(status) {
  if (metrics_ != nullptr) metrics_->AddCollector([this](std::string& out) { Render(out); });
}

observe::DatasetStatus* LakeProgress::AddDataset(const std::string& name,
                                                 const std::string& topic) {
  observe::DatasetStatus* handle = status_ != nullptr ? &status_->Dataset(name, topic) : nullptr;
  std::lock_guard lock(mutex_);
  DatasetEntry& entry = datasets_[name];
  entry.topic = topic;
  entry.status = handle;
  return handle;
}

observe::DatasetStatus* LakeProgress::StatusOf(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto found = datasets_.find(name);
  return found == datasets_.end() ? nullptr : found->second.status;
}

std::optional<kafka::BrokerTrouble> LakeProgress::broker_trouble() const {
  std::lock_guard lock(mutex_);
  return broker_trouble_;
}

observe::ProbeResult LakeProgress::Readiness(bool assigned) const {
  // The brokers first: without them there is no assignment either, and they are the cause.
  const auto trouble = broker_trouble();
  if (!trouble) return {assigned, assigned ? "" : "not assigned, or draining"};
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now() - trouble->since)
                           .count();
  return {false, fmt::format("Kafka brokers unreachable for {} s: {}", seconds, trouble->error)};
}

void LakeProgress::Assigned(const std::vector<kafka::TopicPartition>& partitions,
                            const std::map<kafka::TopicPartition, int64_t>& ledger) {
  std::lock_guard lock(mutex_);
  for (const auto& tp : partitions) {
    if (auto at = ledger.find(tp); at != ledger.end()) {
      lake_next_[tp] = at->second;
    } else {
      lake_next_.erase(tp);
    }
    published_[tp];  // on the page from now on, its lag unknown until the next Publish
  }
}

void LakeProgress::Released(const std::vector<kafka::TopicPartition>& partitions) {
  std::lock_guard lock(mutex_);
  for (const auto& tp : partitions) {
    lake_next_.erase(tp);
    published_.erase(tp);
  }
}

void LakeProgress::FirstConsumed(const kafka::TopicPartition& partition, int64_t offset) {
  std::lock_guard lock(mutex_);
  lake_next_.try_emplace(partition, offset);
}

void LakeProgress::Committed(const std::string& topic, int32_t partition, int64_t next_offset) {
  std::lock_guard lock(mutex_);
  int64_t& next = lake_next_[{topic, partition}];
  next = std::max(next, next_offset);
}

void LakeProgress::FlushStarted(const std::string& dataset) {
  observe::DatasetStatus* handle = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto found = datasets_.find(dataset);
    if (found == datasets_.end()) return;
    found->second.in_flight_since = SteadyClock::now();
    found->second.warned_at = SteadyClock::now();
    handle = found->second.status;
  }
  if (handle != nullptr) handle->FlushStarted();
}

void LakeProgress::AttemptFailed(const std::string& dataset, const Status& error) {
  observe::DatasetStatus* handle = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto found = datasets_.find(dataset);
    if (found == datasets_.end()) return;
    found->second.last_error = error.message();
    handle = found->second.status;
  }
  if (handle != nullptr) handle->AttemptFailed(error.message());
}

void LakeProgress::FlushEnded(const std::string& dataset, bool landed) {
  observe::DatasetStatus* handle = nullptr;
  std::optional<double> slow;
  {
    std::lock_guard lock(mutex_);
    auto found = datasets_.find(dataset);
    if (found == datasets_.end()) return;
    DatasetEntry& entry = found->second;
    if (entry.in_flight_since && SteadyClock::now() - *entry.in_flight_since > kSlowFlush) {
      slow = SecondsSince(*entry.in_flight_since);
    }
    entry.in_flight_since.reset();
    if (landed) entry.last_error.clear();
    handle = entry.status;
  }
  if (slow) {
    spdlog::info("dataset {}: the slow flush {} after {:.1f} s", dataset,
                 landed ? "landed" : "ended without landing", *slow);
  }
  if (handle != nullptr) handle->FlushEnded(landed);
}

void LakeProgress::Publish(RecordSource* source, bool force) {
  const auto now = SteadyClock::now();
  if (!force && now - published_at_ < kProgressInterval) return;
  published_at_ = now;
  std::vector<kafka::PartitionLag> lags;
  std::optional<kafka::BrokerTrouble> trouble;
  if (source != nullptr) {
    lags = source->Lag();
    trouble = source->BrokerTrouble(std::chrono::seconds(1));
  }
  std::map<std::string, std::map<int32_t, observe::PartitionProgress>> by_topic;
  std::vector<std::pair<observe::DatasetStatus*, std::string>> handles;
  std::vector<std::pair<std::string, std::pair<double, std::string>>> slow;
  {
    std::lock_guard lock(mutex_);
    for (const auto& lag : lags) {
      observe::PartitionProgress progress;
      progress.high_watermark = lag.high_watermark;
      progress.position = lag.position;
      if (auto next = lake_next_.find(lag.partition); next != lake_next_.end()) {
        progress.lake_next = next->second;
      } else if (lag.position >= 0) {
        // No ledger row and nothing consumed yet: nothing is waiting for the lake.
        progress.lake_next = lag.position;
      }
      published_[lag.partition] = progress;
    }
    for (const auto& [tp, progress] : published_) by_topic[tp.topic][tp.partition] = progress;
    broker_trouble_ = trouble;
    for (auto& [name, entry] : datasets_) {
      handles.emplace_back(entry.status, entry.topic);
      if (entry.in_flight_since && now - entry.warned_at >= kSlowFlush) {
        entry.warned_at = now;
        slow.push_back({name, {SecondsSince(*entry.in_flight_since), entry.last_error}});
      }
    }
  }
  for (const auto& [name, what] : slow) {
    spdlog::warn(
        "dataset {}: a flush has been in flight for {:.0f} s (the catalog or the object "
        "store is slow or locked){}",
        name, what.first, what.second.empty() ? "" : "; last error: " + what.second);
  }
  for (const auto& [handle, topic] : handles) {
    if (handle != nullptr) handle->SetLag(by_topic[topic]);
  }
  if (status_ != nullptr) {
    observe::BrokerState broker;
    if (trouble) {
      broker.unreachable_since_unix_ms = UnixMs(trouble->since);
      broker.error = trouble->error;
    }
    status_->SetBroker(std::move(broker));
  }
}

void LakeProgress::Render(std::string& out) const {
  std::vector<observe::GaugeSample> lag, fetch_lag, in_flight;
  double unreachable = 0;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [tp, progress] : published_) {
      const observe::Labels labels{{std::string(m::kLabelTopic), tp.topic},
                                   {std::string(m::kLabelPartition), std::to_string(tp.partition)}};
      if (progress.lag() >= 0) lag.push_back({labels, static_cast<double>(progress.lag())});
      if (progress.fetch_lag() >= 0) {
        fetch_lag.push_back({labels, static_cast<double>(progress.fetch_lag())});
      }
    }
    for (const auto& [name, entry] : datasets_) {
      in_flight.push_back({{{std::string(m::kLabelDataset), name}},
                           entry.in_flight_since ? SecondsSince(*entry.in_flight_since) : 0.0});
    }
    if (broker_trouble_) {
      unreachable =
          std::chrono::duration<double>(std::chrono::system_clock::now() - broker_trouble_->since)
              .count();
    }
  }
  observe::AppendGauge(out, m::kConsumerLag.name, m::kConsumerLag.help, lag);
  observe::AppendGauge(out, m::kConsumerFetchLag.name, m::kConsumerFetchLag.help, fetch_lag);
  observe::AppendGauge(out, m::kCommitInFlight.name, m::kCommitInFlight.help, in_flight);
  observe::AppendGauge(out, m::kBrokersUnreachable.name, m::kBrokersUnreachable.help, {},
                       unreachable);
}

}  // namespace weir::ingest
