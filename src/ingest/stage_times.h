// Where the pipeline's threads spend their time: the counters of weir_stage_busy_seconds_total
// and weir_stage_idle_seconds_total (observe/metric_names.h), resolved once.
//
// Threading: the counters are atomic; any thread may add to them.
#pragma once

#include <chrono>

#include "observe/metric_names.h"
#include "observe/metrics_registry.h"

namespace weir::ingest {

struct StageTimes {
  explicit StageTimes(observe::MetricsRegistry& metrics)
      : kafka(Busy(metrics, "kafka")),
        decode(Busy(metrics, "decode")),
        seal(Busy(metrics, "seal")),
        encode(Busy(metrics, "encode")),
        commit(Busy(metrics, "commit")),
        lanes(Busy(metrics, "lanes")),
        kafka_idle(Idle(metrics, "kafka")),
        paused(Idle(metrics, "paused")),
        flush_idle(Idle(metrics, "flush")) {}

  observe::Counter& kafka;
  observe::Counter& decode;
  observe::Counter& seal;
  observe::Counter& encode;
  observe::Counter& commit;
  observe::Counter& lanes;  // encode lanes encoding parts (summed over lanes; encode_lanes.h)
  observe::Counter& kafka_idle;
  observe::Counter& paused;
  observe::Counter& flush_idle;

  static double Seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
  }

 private:
  static observe::Counter& Busy(observe::MetricsRegistry& metrics, const char* stage) {
    return metrics.Counter(observe::kStageBusy, {{std::string(observe::kLabelStage), stage}});
  }
  static observe::Counter& Idle(observe::MetricsRegistry& metrics, const char* stage) {
    return metrics.Counter(observe::kStageIdle, {{std::string(observe::kLabelStage), stage}});
  }
};

}  // namespace weir::ingest
