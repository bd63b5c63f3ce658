// Time sources, passed to components so tests can drive time by hand.
#pragma once

#include <chrono>
#include <cstdint>

namespace weir {

// Wall time (for names, timestamps) and monotonic time (for deadlines). Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
  virtual std::chrono::steady_clock::time_point Monotonic() const = 0;

  // The process-wide real clock.
  static const Clock& System();
};

// A clock that moves only when told to; for tests. Not thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::chrono::system_clock::time_point start) : now_(start) {}

  std::chrono::system_clock::time_point Now() const override { return now_; }
  std::chrono::steady_clock::time_point Monotonic() const override {
    return std::chrono::steady_clock::time_point(now_.time_since_epoch());
  }
  void Advance(std::chrono::nanoseconds by) { now_ += by; }

 private:
  std::chrono::system_clock::time_point now_;
};

// Milliseconds since the Unix epoch of a wall-clock time point.
inline int64_t UnixMillis(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Milliseconds since the Unix epoch, now (the system clock: stamps of snapshots and files).
inline int64_t NowUnixMillis() { return UnixMillis(std::chrono::system_clock::now()); }

// Microseconds since the Unix epoch (the resolution of TIMESTAMPTZ columns).
inline int64_t UnixMicros(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace weir
