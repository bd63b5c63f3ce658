#include "records/include_values.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/retry.h"

namespace weir::records {
namespace {

constexpr size_t kLogChangesIndividually = 10;

std::set<std::string> LabelSet(const FilterValues& values) {
  const auto labels = values.Labels();
  return {labels.begin(), labels.end()};
}

size_t CountMissing(const std::set<std::string>& from, const std::set<std::string>& in) {
  size_t n = 0;
  for (const auto& v : from) n += in.count(v) ? 0 : 1;
  return n;
}

}  // namespace

std::string_view ToString(IncludeValuesMode mode) {
  return mode == IncludeValuesMode::kShadow ? "shadow" : "authoritative";
}

IncludeValuesState::IncludeValuesState(FilterValues pins, int removal_polls)
    : pins_(std::move(pins)),
      pinned_(LabelSet(pins_)),
      kind_(pins_.kind),
      removal_polls_(std::max(1, removal_polls)),
      held_(pinned_) {}

FilterValues IncludeValuesState::Build(const std::set<std::string>& labels) const {
  FilterValues out;
  out.kind = kind_;
  for (const auto& label : labels) {
    if (kind_ == FilterValueKind::kInteger) {
      out.integers.push_back(*ParseIntegerToken(label));
    } else {
      out.texts.push_back(label);
    }
  }
  std::sort(out.integers.begin(), out.integers.end());
  return out;
}

FilterValues IncludeValuesState::values() const { return Build(held_); }

PollVerdict IncludeValuesState::Apply(const FilterValues& remote_values) {
  PollVerdict verdict;
  const std::set<std::string> remote = LabelSet(remote_values);
  // A set whose scalars changed type would fail to meet the column and skip whole flushes.
  if (!held_.empty() && !remote.empty() && remote_values.kind != kind_) {
    verdict.refused = kRefusedTypeFlip;
    return verdict;
  }
  std::set<std::string> managed_held;  // held values the endpoint governs
  for (const auto& v : held_) {
    if (!pinned_.count(v)) managed_held.insert(v);
  }
  // Empty is never removal evidence while endpoint values are held; for a pins-only set it is
  // the steady state.
  if (remote.empty() && !managed_held.empty()) {
    verdict.refused = kRefusedEmpty;
    return verdict;
  }
  std::set<std::string> additions;
  for (const auto& v : remote) {
    if (!held_.count(v)) additions.insert(v);
  }
  // Countdowns, tentatively: committed only when the poll is accepted.
  std::map<std::string, int> counts;
  std::set<std::string> confirmed;
  for (const auto& v : managed_held) {
    if (remote.count(v)) continue;
    const auto at = absent_.find(v);
    const int n = (at == absent_.end() ? 0 : at->second) + 1;
    counts[v] = n;
    if (n >= removal_polls_) confirmed.insert(v);
  }
  std::set<std::string> candidate = held_;
  candidate.insert(additions.begin(), additions.end());
  candidate.insert(pinned_.begin(), pinned_.end());
  for (const auto& v : confirmed) candidate.erase(v);
  if (candidate.empty() && !held_.empty()) {  // unreachable with pins; kept as a backstop
    verdict.refused = kRefusedEmpty;
    return verdict;
  }
  // Bulk removal, against the slice the endpoint governs: the held set less the pins it does
  // not serve.
  size_t managed = 0;
  for (const auto& v : held_) {
    if (!pinned_.count(v) || remote.count(v)) ++managed;
  }
  if (managed > 1 && confirmed.size() > std::max<size_t>(1, managed / 2)) {
    verdict.refused = kRefusedBulkRemoval;
    // Additions are the safe direction and still apply; the countdowns stay as they were.
    held_.insert(additions.begin(), additions.end());
    verdict.added.assign(additions.begin(), additions.end());
    return verdict;
  }
  absent_.clear();
  for (const auto& [v, n] : counts) {
    if (!confirmed.count(v)) absent_[v] = n;
  }
  held_ = std::move(candidate);
  verdict.added.assign(additions.begin(), additions.end());
  verdict.removed.assign(confirmed.begin(), confirmed.end());
  synced_ = true;
  return verdict;
}

std::chrono::milliseconds JitteredInterval(std::chrono::milliseconds interval,
                                           std::mt19937_64& rng) {
  std::uniform_real_distribution<double> factor(0.9, 1.1);
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(interval.count()) * factor(rng)));
}

IncludeValuesPoller::IncludeValuesPoller(IncludeValuesOptions options, FetchIncludeValues fetch,
                                         std::function<void(const IncludeValuesReport&)> report,
                                         const Clock& clock, uint64_t seed)
    : options_(std::move(options)),
      fetch_(std::move(fetch)),
      report_(std::move(report)),
      clock_(clock),
      rng_(seed),
      state_(options_.pins, options_.removal_polls),
      pins_(std::make_shared<const FilterValues>(options_.pins)),
      current_(pins_) {}

IncludeValuesPoller::~IncludeValuesPoller() { Stop(); }

std::shared_ptr<const FilterValues> IncludeValuesPoller::Current() const {
  if (options_.mode == IncludeValuesMode::kShadow) return pins_;
  std::lock_guard lock(mutex_);
  return current_;
}

void IncludeValuesPoller::PollOnce(const std::stop_token& stop) {
  IncludeValuesReport report;
  auto body = fetch_(stop);
  Result<FilterValues> remote =
      body.ok() ? ParseFilterValuesJson(*body) : Result<FilterValues>(body.status());
  if (!remote.ok()) {
    if (stop.stop_requested()) return;  // a stop, not the endpoint's failure
    report.error = remote.status().message();
    spdlog::warn("include-values: poll of {} failed (keeping the last good set): {}", options_.url,
                 report.error);
  } else {
    report.answered = true;
    report.verdict = state_.Apply(*remote);
    const PollVerdict& v = report.verdict;
    if (!v.refused.empty()) {
      spdlog::error("include-values: poll of {} refused ({}) — keeping the current set",
                    options_.url, v.refused);
    }
    if (v.added.size() <= kLogChangesIndividually) {
      for (const auto& value : v.added) spdlog::warn("include-values: adding {}", value);
    } else {
      spdlog::warn("include-values: adding {} values (e.g. {})", v.added.size(),
                   fmt::join(v.added.begin(), v.added.begin() + kLogChangesIndividually, ", "));
    }
    for (const auto& value : v.removed) {
      spdlog::warn("include-values: removing {} (absent {} consecutive polls)", value,
                   options_.removal_polls);
    }
    const std::set<std::string> remote_labels = LabelSet(*remote);
    const std::set<std::string> pinned = LabelSet(options_.pins);
    report.size = state_.size();
    report.pending_removals = state_.pending_removals();
    report.pinned = pinned.size();
    report.pinned_only = CountMissing(pinned, remote_labels);
    if (options_.mode == IncludeValuesMode::kShadow) {
      report.shadow_only_static = CountMissing(pinned, remote_labels);
      report.shadow_only_remote = CountMissing(remote_labels, pinned);
    }
    report.last_success_unix_seconds = static_cast<double>(UnixMillis(clock_.Now())) / 1000.0;
    auto values = std::make_shared<const FilterValues>(state_.values());
    {
      std::lock_guard lock(mutex_);
      current_ = std::move(values);
      synced_ = state_.synced();
    }
    synced_changed_.notify_all();
  }
  if (report_) report_(report);
}

void IncludeValuesPoller::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    PollOnce(stop);
    if (!WaitFor(JitteredInterval(options_.poll_interval, rng_), stop)) break;
  }
}

Status IncludeValuesPoller::Start(std::stop_token stop) {
  thread_ = std::jthread([this](std::stop_token own) { Run(std::move(own)); });
  // A stop of the owner (SIGTERM) ends the thread at once, wherever it is.
  forward_.emplace(stop, [this] { thread_.request_stop(); });
  if (options_.mode == IncludeValuesMode::kShadow) return Status::OK();
  const auto deadline = std::chrono::steady_clock::now() + options_.startup_timeout;
  bool synced = false;
  {
    std::unique_lock lock(mutex_);
    synced = synced_changed_.wait_until(lock, stop, deadline, [&] { return synced_; });
  }
  if (synced) return Status::OK();
  Stop();
  if (stop.stop_requested()) return Status::Cancelled("stopping before the first poll answered");
  return Status::IOError("include-values: no good poll of ", options_.url, " within ",
                         options_.startup_timeout.count(),
                         " ms (authoritative mode waits for "
                         "one before consuming; include_values.startup_timeout)");
}

void IncludeValuesPoller::Stop() {
  forward_.reset();
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

}  // namespace weir::records
