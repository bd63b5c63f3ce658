// The metrics and log lines of typed columns (records/typed_columns.h) for one flush: per cast
// column exactly one of weir_columns_coerced_total and weir_column_coercion_errors_total, the
// nulled values on `nulled` (weir_values_nulled_total{reason="column_coercion"}), and a
// rate-limited warning per column with nulled values.
//
// Threading: called from a dataset's flush thread; the registry and the limiter are shared and
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/log_rate_limiter.h"
#include "observe/metrics_registry.h"
#include "records/typed_columns.h"

namespace weir::ingest {

void PublishCoercions(observe::MetricsRegistry& metrics, LogRateLimiter& limiter,
                      const std::string& dataset, observe::Counter& nulled,
                      const std::vector<records::ColumnCoercion>& coercions);

}  // namespace weir::ingest
