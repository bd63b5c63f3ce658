#include "app/probe_runner.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace weir::app {
namespace {

// What the probe threads and the waiting caller share; kept alive by whoever ends last.
struct Board {
  std::mutex mutex;
  std::condition_variable answered;
  std::vector<std::optional<ProbeOutcome>> outcomes;  // guarded by mutex
  size_t pending = 0;                                 // guarded by mutex
};

std::string_view VerdictText(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kFailed:
      return "FAILED";
    case Verdict::kTimedOut:
      return "TIMEOUT";
  }
  return "?";
}

}  // namespace

bool ProbeReport::ok() const {
  return std::all_of(outcomes.begin(), outcomes.end(),
                     [](const ProbeOutcome& o) { return o.verdict == Verdict::kOk; });
}

ProbeReport RunProbes(std::vector<Probe> probes, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds grace) {
  using Steady = std::chrono::steady_clock;
  auto board = std::make_shared<Board>();
  board->outcomes.resize(probes.size());
  board->pending = probes.size();
  const Steady::time_point start = Steady::now();
  std::vector<std::string> names;
  names.reserve(probes.size());
  for (const Probe& probe : probes) names.push_back(probe.name);
  std::vector<std::thread> threads;
  threads.reserve(probes.size());
  for (size_t i = 0; i < probes.size(); ++i) {
    threads.emplace_back([board, i, start, timeout, probe = std::move(probes[i])]() mutable {
      ProbeOutcome outcome;
      outcome.name = probe.name;
      Result<std::string> found = probe.run(timeout);
      probe.run = nullptr;  // what it captured goes before the answer is posted
      outcome.duration =
          std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start);
      outcome.verdict = found.ok() ? Verdict::kOk : Verdict::kFailed;
      outcome.detail = found.ok() ? *found : found.status().message();
      std::lock_guard lock(board->mutex);
      board->outcomes[i] = std::move(outcome);
      --board->pending;
      board->answered.notify_all();
    });
  }
  ProbeReport report;
  report.outcomes.reserve(probes.size());
  std::vector<bool> answered(probes.size());
  {
    std::unique_lock lock(board->mutex);
    board->answered.wait_until(lock, start + timeout + grace, [&] { return board->pending == 0; });
    for (size_t i = 0; i < probes.size(); ++i) {
      answered[i] = board->outcomes[i].has_value();
      if (answered[i]) {
        report.outcomes.push_back(*board->outcomes[i]);
        continue;
      }
      report.abandoned = true;
      report.outcomes.push_back(ProbeOutcome{
          .name = names[i],
          .verdict = Verdict::kTimedOut,
          .detail = "no answer within " + SecondsText(timeout),
          .duration =
              std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now() - start)});
    }
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    if (answered[i]) {
      threads[i].join();  // it has posted its answer: only returning is left
    } else {
      threads[i].detach();
    }
  }
  return report;
}

std::string SecondsText(std::chrono::milliseconds duration) {
  return fmt::format("{:.3f}s", static_cast<double>(duration.count()) / 1000.0);
}

std::string FormatOutcomes(const std::vector<ProbeOutcome>& outcomes) {
  size_t width = 0;
  for (const ProbeOutcome& o : outcomes) width = std::max(width, o.name.size());
  std::string text;
  for (const ProbeOutcome& o : outcomes) {
    text += fmt::format("{:<7}  {:<{}}  {:>8}  {}\n", VerdictText(o.verdict), o.name, width,
                        SecondsText(o.duration), o.detail);
  }
  return text;
}

}  // namespace weir::app
