#include "ingest/filter_metrics.h"

#include "observe/metric_names.h"

namespace weir::ingest {
namespace {

namespace m = observe;

using m::MetricDef;
using m::MetricType;

constexpr MetricDef kMode{"weir_include_values_mode",
                          "1 for the include-values mode this dataset runs (static, shadow, "
                          "authoritative).",
                          MetricType::kGauge,
                          {"dataset", "mode"}};
constexpr MetricDef kSize{"weir_include_values_size",
                          "Values of the include set the poller holds (pins included).",
                          MetricType::kGauge,
                          {"dataset"}};
constexpr MetricDef kPending{"weir_include_values_pending_removals",
                             "Values counting down to removal (absent from recent good polls).",
                             MetricType::kGauge,
                             {"dataset"}};
constexpr MetricDef kPinned{"weir_include_values_pinned",
                            "Static values (pins) of the include set.",
                            MetricType::kGauge,
                            {"dataset"}};
constexpr MetricDef kPinnedOnly{"weir_include_values_pinned_only",
                                "Pins the endpoint's last good poll did not serve.",
                                MetricType::kGauge,
                                {"dataset"}};
constexpr MetricDef kShadowOnlyStatic{
    "weir_include_values_shadow_only_static",
    "Shadow mode: static values the endpoint's last good poll lacked.",
    MetricType::kGauge,
    {"dataset"}};
constexpr MetricDef kShadowOnlyRemote{
    "weir_include_values_shadow_only_remote",
    "Shadow mode: values of the endpoint's last good poll the static list lacks.",
    MetricType::kGauge,
    {"dataset"}};
constexpr MetricDef kLastSuccess{"weir_include_values_last_success_timestamp_seconds",
                                 "Unix time of the last answered poll.",
                                 MetricType::kGauge,
                                 {"dataset"}};
constexpr MetricDef kRefused{"weir_include_values_refused_total",
                             "Answered polls refused (set kept), by reason (empty, "
                             "bulk_removal, type_flip).",
                             MetricType::kCounter,
                             {"dataset", "reason"}};
constexpr MetricDef kFailures{"weir_include_values_poll_failures_total",
                              "Polls that got no usable answer (the last good set is kept).",
                              MetricType::kCounter,
                              {"dataset"}};
constexpr MetricDef kChanges{"weir_include_values_changes_total",
                             "Values added to or removed from the include set, by action.",
                             MetricType::kCounter,
                             {"dataset", "action"}};

m::Labels Of(const std::string& dataset) { return {{"dataset", dataset}}; }

}  // namespace

void PublishFilterOutcome(observe::MetricsRegistry& metrics, const std::string& dataset,
                          const records::FilterOutcome& outcome) {
  for (const auto& [reason, records] : outcome.skipped) {
    if (records == 0) continue;
    metrics.Counter(m::kRecordsFiltered, {{"dataset", dataset}, {"reason", reason}})
        .Increment(static_cast<double>(records));
  }
  for (const auto& [value, records] : outcome.matched) {
    metrics.Counter(kFilterMatched, {{"dataset", dataset}, {"value", value}})
        .Increment(static_cast<double>(records));
  }
  if (outcome.invalid_values > 0) {
    metrics.Counter(m::kErrors, {{"type", "filter_value_invalid"}})
        .Increment(static_cast<double>(outcome.invalid_values));
  }
}

IncludeValuesMetrics::IncludeValuesMetrics(observe::MetricsRegistry& metrics,
                                           const std::string& dataset,
                                           records::IncludeValuesMode mode)
    : metrics_(metrics),
      dataset_(dataset),
      size_(metrics.Gauge(kSize, Of(dataset))),
      pending_removals_(metrics.Gauge(kPending, Of(dataset))),
      pinned_(metrics.Gauge(kPinned, Of(dataset))),
      pinned_only_(metrics.Gauge(kPinnedOnly, Of(dataset))),
      last_success_(metrics.Gauge(kLastSuccess, Of(dataset))),
      failures_(metrics.Counter(kFailures, Of(dataset))) {
  metrics.Gauge(kMode, {{"dataset", dataset}, {"mode", std::string(records::ToString(mode))}})
      .Set(1);
  if (mode == records::IncludeValuesMode::kShadow) {
    shadow_only_static_ = &metrics.Gauge(kShadowOnlyStatic, Of(dataset));
    shadow_only_remote_ = &metrics.Gauge(kShadowOnlyRemote, Of(dataset));
  }
}

void IncludeValuesMetrics::Report(const records::IncludeValuesReport& report) {
  if (!report.answered) {
    failures_.Increment();
    return;
  }
  const auto& v = report.verdict;
  if (!v.refused.empty()) {
    metrics_.Counter(kRefused, {{"dataset", dataset_}, {"reason", v.refused}}).Increment();
  }
  if (!v.added.empty()) {
    metrics_.Counter(kChanges, {{"dataset", dataset_}, {"action", "add"}})
        .Increment(static_cast<double>(v.added.size()));
  }
  if (!v.removed.empty()) {
    metrics_.Counter(kChanges, {{"dataset", dataset_}, {"action", "remove"}})
        .Increment(static_cast<double>(v.removed.size()));
  }
  size_.Set(static_cast<double>(report.size));
  pending_removals_.Set(static_cast<double>(report.pending_removals));
  pinned_.Set(static_cast<double>(report.pinned));
  pinned_only_.Set(static_cast<double>(report.pinned_only));
  last_success_.Set(report.last_success_unix_seconds);
  if (shadow_only_static_ && report.shadow_only_static) {
    shadow_only_static_->Set(static_cast<double>(*report.shadow_only_static));
  }
  if (shadow_only_remote_ && report.shadow_only_remote) {
    shadow_only_remote_->Set(static_cast<double>(*report.shadow_only_remote));
  }
}

}  // namespace weir::ingest
