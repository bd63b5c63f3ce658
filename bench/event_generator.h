// The reference event generator: PostHog-like ~1 KB JSON events, deterministic for a seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace weir::bench {

// Produces events with uuid, event, distinct_id, team_id, timestamp (ISO-8601 text), a nested
// `properties` object of ~30 keys of mixed types, person_id and elements_chain. The same seed
// gives the same sequence. Not thread-safe: one generator per thread.
class EventGenerator {
 public:
  explicit EventGenerator(uint64_t seed) : random_(seed) {}

  // The next event; `index` is written as properties.$seq so every event is unique.
  std::string Next(int64_t index);

 private:
  std::mt19937_64 random_;
};

}  // namespace weir::bench
