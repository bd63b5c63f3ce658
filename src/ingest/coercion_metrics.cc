#include "ingest/coercion_metrics.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "observe/metric_names.h"

namespace weir::ingest {

namespace m = observe;

void PublishCoercions(observe::MetricsRegistry& metrics, LogRateLimiter& limiter,
                      const std::string& dataset, observe::Counter& nulled,
                      const std::vector<records::ColumnCoercion>& coercions) {
  int64_t values = 0;
  for (const records::ColumnCoercion& coercion : coercions) {
    const m::Labels labels{
        {std::string(m::kLabelDataset), dataset},
        {std::string(m::kLabelColumn), coercion.column},
        {std::string(m::kLabelTargetType), std::string(ToString(coercion.type))}};
    if (coercion.nulled == 0) {
      metrics.Counter(m::kColumnsCoerced, labels).Increment();
      continue;
    }
    metrics.Counter(m::kColumnCoercionErrors, labels).Increment();
    values += coercion.nulled;
    const auto suppressed =
        limiter.Admit(dataset + "/coercion/" + coercion.column, std::chrono::steady_clock::now());
    if (suppressed) {
      spdlog::warn("dataset {}: {} value(s) of column {} could not be cast to {} and are null{}",
                   dataset, coercion.nulled, coercion.column, ToString(coercion.type),
                   *suppressed > 0 ? fmt::format(" ({} more such flush(es))", *suppressed) : "");
    }
  }
  if (values > 0) nulled.Increment(static_cast<double>(values));
}

}  // namespace weir::ingest
