#include "observe/metrics_registry.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/check.h"

namespace weir::observe {
namespace {

constexpr double kDefaultSecondsBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                             1,     2.5,  5,     10,   30,  60,   120};

bool LabelsMatchDef(const MetricDef& def, const Labels& labels) {
  size_t declared = 0;
  for (std::string_view name : def.label_names) {
    if (name.empty()) continue;
    ++declared;
    if (labels.find(name) == labels.end()) return false;
  }
  return declared == labels.size();
}

}  // namespace

std::string_view ToString(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

std::span<const double> DefaultSecondsBuckets() { return kDefaultSecondsBuckets; }

void Counter::Increment(double amount) {
  WEIR_DCHECK(amount >= 0);
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  // The first bucket whose upper bound is >= value; NaN lands in +Inf, as in Prometheus' own
  // clients.
  const size_t bucket =
      std::isnan(value)
          ? bounds_.size()
          : static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> cumulative(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i < cumulative.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    cumulative[i] = running;
  }
  return cumulative;
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(std::string_view name, std::string_view help,
                                                    MetricType type, const Labels& labels,
                                                    std::span<const double> bounds) {
  WEIR_CHECK(IsValidMetricName(name));
  for (const auto& [label_name, value] : labels) {
    WEIR_CHECK(IsValidLabelName(label_name));
    WEIR_CHECK(!(type == MetricType::kHistogram && label_name == "le"));
  }
  auto it = families_.find(name);
  if (it == families_.end()) {
    if (type == MetricType::kHistogram) {
      WEIR_CHECK(!bounds.empty());
      for (size_t i = 0; i < bounds.size(); ++i) {
        WEIR_CHECK(std::isfinite(bounds[i]));
        WEIR_CHECK(i == 0 || bounds[i - 1] < bounds[i]);
      }
    }
    Family family;
    family.type = type;
    family.help = std::string(help);
    if (type == MetricType::kHistogram) family.bounds.assign(bounds.begin(), bounds.end());
    it = families_.emplace(std::string(name), std::move(family)).first;
    return it->second;
  }
  Family& family = it->second;
  WEIR_CHECK(family.type == type);
  WEIR_CHECK(family.help == help);
  WEIR_CHECK(type != MetricType::kHistogram ||
             std::equal(family.bounds.begin(), family.bounds.end(), bounds.begin(), bounds.end()));
  return family;
}

Counter& MetricsRegistry::Counter(std::string_view name, std::string_view help,
                                  const Labels& labels) {
  std::lock_guard lock(mutex_);
  Family& family = FamilyFor(name, help, MetricType::kCounter, labels, {});
  auto& slot = family.counters[labels];
  if (slot == nullptr) slot.reset(new observe::Counter());
  return *slot;
}

Gauge& MetricsRegistry::Gauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mutex_);
  Family& family = FamilyFor(name, help, MetricType::kGauge, labels, {});
  auto& slot = family.gauges[labels];
  if (slot == nullptr) slot.reset(new observe::Gauge());
  return *slot;
}

Histogram& MetricsRegistry::Histogram(std::string_view name, std::string_view help,
                                      const Labels& labels, std::span<const double> bounds) {
  std::lock_guard lock(mutex_);
  Family& family = FamilyFor(name, help, MetricType::kHistogram, labels, bounds);
  auto& slot = family.histograms[labels];
  if (slot == nullptr) slot.reset(new observe::Histogram(family.bounds));
  return *slot;
}

Counter& MetricsRegistry::Counter(const MetricDef& def, const Labels& labels) {
  WEIR_CHECK(def.type == MetricType::kCounter);
  WEIR_CHECK(LabelsMatchDef(def, labels));
  return Counter(def.name, def.help, labels);
}

Gauge& MetricsRegistry::Gauge(const MetricDef& def, const Labels& labels) {
  WEIR_CHECK(def.type == MetricType::kGauge);
  WEIR_CHECK(LabelsMatchDef(def, labels));
  return Gauge(def.name, def.help, labels);
}

Histogram& MetricsRegistry::Histogram(const MetricDef& def, const Labels& labels,
                                      std::span<const double> bounds) {
  WEIR_CHECK(def.type == MetricType::kHistogram);
  WEIR_CHECK(LabelsMatchDef(def, labels));
  return Histogram(def.name, def.help, labels, bounds);
}

void MetricsRegistry::AddCollector(std::function<void(std::string& out)> collector) {
  WEIR_CHECK(collector != nullptr);
  std::lock_guard lock(mutex_);
  collectors_.push_back(std::move(collector));
}

std::string MetricsRegistry::Render() const {
  std::string out;
  std::vector<std::function<void(std::string&)>> collectors;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [name, family] : families_) {
      AppendFamilyHeader(out, name, family.help, ToString(family.type));
      switch (family.type) {
        case MetricType::kCounter:
          for (const auto& [labels, counter] : family.counters) {
            AppendSample(out, name, labels, counter->value());
          }
          break;
        case MetricType::kGauge:
          for (const auto& [labels, gauge] : family.gauges) {
            AppendSample(out, name, labels, gauge->value());
          }
          break;
        case MetricType::kHistogram: {
          const std::string bucket_name = name + "_bucket";
          for (const auto& [labels, histogram] : family.histograms) {
            // Counts first, sum after: _count always equals the +Inf bucket; the sum may
            // already include an observation a concurrent Observe() is still counting.
            const std::vector<uint64_t> cumulative = histogram->CumulativeCounts();
            for (size_t i = 0; i < cumulative.size(); ++i) {
              const std::string le =
                  i < family.bounds.size() ? FormatSampleValue(family.bounds[i]) : "+Inf";
              out += bucket_name;
              AppendLabels(out, labels, "le", le);
              out += ' ';
              out += std::to_string(cumulative[i]);
              out += '\n';
            }
            AppendSample(out, name + "_sum", labels, histogram->sum());
            out += name;
            out += "_count";
            AppendLabels(out, labels);
            out += ' ';
            out += std::to_string(cumulative.back());
            out += '\n';
          }
          break;
        }
      }
    }
    collectors = collectors_;
  }
  for (const auto& collector : collectors) collector(out);
  return out;
}

}  // namespace weir::observe
