// librdkafka's statistics (the JSON it emits every statistics interval) as Prometheus gauges.
//
// Threading: Update runs on the poll thread (inside Consumer::Poll); Render runs on the HTTP
// thread through the registry's collector. A mutex guards the parsed values.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "observe/metrics_registry.h"

namespace weir::ingest {

class KafkaStatistics {
 public:
  // Registers the collector that renders the latest statistics.
  explicit KafkaStatistics(observe::MetricsRegistry* registry);

  // Parses one statistics document; a malformed one is ignored (and logged once).
  void Update(std::string_view json);

 private:
  void Render(std::string& out) const;

  mutable std::mutex mutex_;
  std::map<std::string, double> totals_;  // GUARDED_BY(mutex_): top-level counters
  // GUARDED_BY(mutex_): (topic, partition) → broker-side consumer lag and queued messages
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> partitions_;
  bool warned_ = false;
};

}  // namespace weir::ingest
