// Runs `weir check`'s probes: every probe on its own thread at once, each under the same
// deadline, so a check takes as long as its slowest probe and never much longer than the
// deadline, whatever is unreachable.
//
// Threading: RunProbes is called from one thread and returns once every probe has answered
// or the deadline plus the grace has passed. A probe still running then is reported as timed
// out and left running on its detached thread (it owns copies of everything it reads); the
// caller should then end the process without running static destructors (std::_Exit).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace weir::app {

struct Probe {
  std::string name;  // "topic events", "catalog", "storage"
  // Returns what it found (shown after the verdict) or why it failed; should answer within
  // `timeout`.
  std::function<Result<std::string>(std::chrono::milliseconds timeout)> run;
};

enum class Verdict { kOk, kFailed, kTimedOut };

struct ProbeOutcome {
  std::string name;
  Verdict verdict = Verdict::kTimedOut;
  std::string detail;  // what was found, the error, or "no answer within <timeout>"
  std::chrono::milliseconds duration{0};
};

struct ProbeReport {
  std::vector<ProbeOutcome> outcomes;  // in the order of the probes
  bool abandoned = false;              // some probe is still running on a detached thread
  bool ok() const;                     // every probe passed
};

// Starts every probe, waits for them up to `timeout` + `grace`, and reports each one.
ProbeReport RunProbes(std::vector<Probe> probes, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds grace);

// "0.012s", "2.001s".
std::string SecondsText(std::chrono::milliseconds duration);

// One line per outcome: verdict, name, duration, detail; names padded to line up.
std::string FormatOutcomes(const std::vector<ProbeOutcome>& outcomes);

}  // namespace weir::app
