// The metrics of the record filters and the include-values poller (issue 14), named as
// millpond's with the weir_ prefix and a dataset label:
//  - weir_records_filtered_total{dataset,reason}: records skipped (filter_field_missing,
//    filter_excluded, filter_value_invalid, filter_dropped);
//  - weir_filter_matched_total{dataset,value}: records the allowlist kept, per matched value;
//  - weir_errors_total{type="filter_value_invalid"}: flushes whose set had values that are not
//    UUIDs against a uuid column;
//  - weir_include_values_*: the poller's mode, set size, pending removals, pins, shadow diffs,
//    last good poll time, refusals, failures and changes.
//
// Threading: PublishFilterOutcome from a dataset's flush thread; IncludeValuesMetrics::Report
// from that dataset's poll thread. The registry is thread-safe.
#pragma once

#include <string>

#include "observe/metrics_registry.h"
#include "records/include_values.h"
#include "records/record_filter.h"

namespace weir::ingest {

inline constexpr observe::MetricDef kFilterMatched{
    "weir_filter_matched_total",
    "Records the allowlist kept, by matched value (bounded by the include set).",
    observe::MetricType::kCounter,
    {"dataset", "value"}};

// Counts what filtering one committed flush skipped and matched.
void PublishFilterOutcome(observe::MetricsRegistry& metrics, const std::string& dataset,
                          const records::FilterOutcome& outcome);

// The gauges and counters of one dataset's include-values poller.
class IncludeValuesMetrics {
 public:
  IncludeValuesMetrics(observe::MetricsRegistry& metrics, const std::string& dataset,
                       records::IncludeValuesMode mode);
  void Report(const records::IncludeValuesReport& report);

 private:
  observe::MetricsRegistry& metrics_;
  std::string dataset_;
  observe::Gauge& size_;
  observe::Gauge& pending_removals_;
  observe::Gauge& pinned_;
  observe::Gauge& pinned_only_;
  observe::Gauge& last_success_;
  observe::Counter& failures_;
  observe::Gauge* shadow_only_static_ = nullptr;
  observe::Gauge* shadow_only_remote_ = nullptr;
};

}  // namespace weir::ingest
