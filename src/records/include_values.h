// The allowlist's dynamic source (issue 14; millpond's MILLPOND_INCLUDE_VALUES_*): an endpoint
// answering a JSON array of values, polled on a thread of its own.
//
// Modes: shadow — the static values stay in force and the polled set is only observed (its
// gauges predict exactly what authoritative mode would serve); authoritative — the polled set
// ∪ the static values ("pins") is in force, and Start blocks until the first good poll.
//
// The rules (IncludeValuesState), shaped by an asymmetry: a wrong addition writes surplus rows,
// a wrong removal silently drops records.
//  - Additions apply on the first good poll that shows them.
//  - A value leaves after `removal_polls` consecutive good polls without it; a failed or refused
//    poll advances nothing, a reappearance resets the count, pins never leave.
//  - A failed poll (no answer, a non-200 answer, a redirect, a body over the cap, not an array
//    of scalars) keeps the last good set.
//  - A poll is refused (set kept, countdowns not advanced) when it is empty while values of the
//    endpoint are held (`empty`; a pins-only set takes an empty answer as its steady state),
//    when it would remove more than half of the endpoint-managed values at once (`bulk_removal`:
//    the held set less the pins the endpoint does not serve; its additions still apply), or when
//    its values are integers and the held ones text or the reverse (`type_flip`).
//
// Threading: IncludeValuesState is single-threaded (the poll thread's). IncludeValuesPoller:
// Start and Stop from the owner's thread; Current from any thread; the fetch and the report
// callback run on the poll thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stop_token>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/status.h"
#include "records/filter_values.h"
#include "records/record_filter.h"

namespace weir::records {

enum class IncludeValuesMode { kShadow, kAuthoritative };

std::string_view ToString(IncludeValuesMode mode);

// The refusal reasons (the `reason` label of weir_include_values_refused_total).
inline constexpr const char* kRefusedEmpty = "empty";
inline constexpr const char* kRefusedBulkRemoval = "bulk_removal";
inline constexpr const char* kRefusedTypeFlip = "type_flip";

// What one answered poll did to the set.
struct PollVerdict {
  std::string refused;                      // empty: accepted
  std::vector<std::string> added, removed;  // applied (additions also on a bulk_removal refusal)
};

// The set-keeping rules, without a thread or a clock.
class IncludeValuesState {
 public:
  // `pins` are the static values (never empty with a URL); the held set starts as them.
  IncludeValuesState(FilterValues pins, int removal_polls);

  // Applies one good poll's answer.
  PollVerdict Apply(const FilterValues& remote);

  const FilterValues& pins() const { return pins_; }
  // The held set: pins ∪ what the endpoint governs.
  FilterValues values() const;
  size_t size() const { return held_.size(); }
  // Values counting down to removal.
  size_t pending_removals() const { return absent_.size(); }
  // True after the first accepted poll.
  bool synced() const { return synced_; }

 private:
  FilterValues Build(const std::set<std::string>& labels) const;

  FilterValues pins_;
  std::set<std::string> pinned_;  // the pins' labels
  FilterValueKind kind_;
  int removal_polls_;
  std::set<std::string> held_;         // labels (integers in decimal)
  std::map<std::string, int> absent_;  // label → consecutive good polls absent
  bool synced_ = false;
};

// What the poller reports after each poll (for the gauges and counters of ingest).
struct IncludeValuesReport {
  bool answered = false;  // false: the poll failed (`error` says why)
  std::string error;
  PollVerdict verdict;
  size_t size = 0, pending_removals = 0, pinned = 0, pinned_only = 0;
  // Shadow mode only: static values the endpoint lacks, endpoint values the static list lacks.
  std::optional<size_t> shadow_only_static, shadow_only_remote;
  double last_success_unix_seconds = 0;  // of this poll when answered
};

struct IncludeValuesOptions {
  std::string url;  // for logs and errors
  IncludeValuesMode mode = IncludeValuesMode::kShadow;
  FilterValues pins;
  int removal_polls = 5;
  std::chrono::milliseconds poll_interval{60000};
  std::chrono::milliseconds startup_timeout{60000};
};

// One request to the endpoint: its body, or an error (the poll failed). Must return soon after
// `stop` is requested.
using FetchIncludeValues = std::function<Result<std::string>(const std::stop_token& stop)>;

// The wait before the next poll: `interval` × a uniform factor in [0.9, 1.1].
std::chrono::milliseconds JitteredInterval(std::chrono::milliseconds interval,
                                           std::mt19937_64& rng);

class IncludeValuesPoller final : public KeepValuesSource {
 public:
  IncludeValuesPoller(IncludeValuesOptions options, FetchIncludeValues fetch,
                      std::function<void(const IncludeValuesReport&)> report, const Clock& clock,
                      uint64_t seed);
  ~IncludeValuesPoller() override;  // stops the thread

  // Starts the poll thread (polling at once). Authoritative: waits for the first good poll and
  // fails (stopping the thread) when startup_timeout passes or `stop` is requested first.
  Status Start(std::stop_token stop);
  // Ends the thread at once (an interval wait or a request in progress is cut short).
  void Stop();

  // Shadow: the static values; authoritative: the held set.
  std::shared_ptr<const FilterValues> Current() const override;

  // One poll on the caller's thread (the thread runs exactly this); for tests.
  void PollOnce(const std::stop_token& stop);

  const IncludeValuesOptions& options() const { return options_; }

 private:
  void Run(std::stop_token stop);

  IncludeValuesOptions options_;
  FetchIncludeValues fetch_;
  std::function<void(const IncludeValuesReport&)> report_;
  const Clock& clock_;
  std::mt19937_64 rng_;       // poll thread
  IncludeValuesState state_;  // poll thread
  std::shared_ptr<const FilterValues> pins_;
  std::jthread thread_;
  std::optional<std::stop_callback<std::function<void()>>> forward_;  // owner's stop → thread_

  mutable std::mutex mutex_;
  std::condition_variable_any synced_changed_;
  std::shared_ptr<const FilterValues> current_;  // GUARDED_BY(mutex_)
  bool synced_ = false;                          // GUARDED_BY(mutex_)
};

}  // namespace weir::records
