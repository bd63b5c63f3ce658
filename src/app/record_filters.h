// The record filters of weir ingest's datasets, built from the settings: the static filter of
// each dataset, and for a dataset with include_values.url its poller (over the HTTP client of
// lake/iceberg) started before consumption — in authoritative mode blocking until its first
// good poll — with the filter reading the poller's set.
//
// Threading: the owner's (RunIngest) thread; the pollers run threads of their own until Stop.
#pragma once

#include <memory>
#include <stop_token>
#include <vector>

#include "base/status.h"
#include "config/settings.h"
#include "ingest/filter_metrics.h"
#include "ingest/pipeline.h"
#include "observe/metrics_registry.h"
#include "records/include_values.h"
#include "records/record_filter.h"

namespace weir::app {

// The dataset's filter with its static keep values; null when it has none.
Result<std::shared_ptr<const records::RecordFilter>> MakeStaticFilter(
    const config::DatasetSettings& dataset);

// A GET of the include-values URL: the timeouts and the body cap of the settings, the auth
// header, redirects refused, anything but 200 a failure.
Result<records::FetchIncludeValues> MakeHttpFetch(const config::IncludeValuesSettings& settings);

// The running pollers; Stop ends them all.
class IncludeValuesPollers {
 public:
  // Starts a poller for each dataset with include_values.url (settings and options are
  // parallel) and points its filter at it; an authoritative one that gets no good poll in time
  // fails the start. Every dataset's mode is exported (static without a URL).
  static Result<std::unique_ptr<IncludeValuesPollers>> Start(const config::IngestSettings& settings,
                                                             ingest::PipelineOptions* options,
                                                             observe::MetricsRegistry* metrics,
                                                             std::stop_token stop);
  ~IncludeValuesPollers() { Stop(); }
  void Stop();

 private:
  std::vector<std::unique_ptr<ingest::IncludeValuesMetrics>> metrics_;
  std::vector<std::shared_ptr<records::IncludeValuesPoller>> pollers_;
};

}  // namespace weir::app
