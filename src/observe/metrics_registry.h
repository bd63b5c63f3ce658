// A hand-written Prometheus metrics registry: counters, gauges and fixed-bucket histograms,
// rendered in the text exposition format 0.0.4.
//
// Threading: the registry is shared by every thread. Registration (Counter(), Gauge(),
// Histogram(), AddCollector()) takes the registry mutex and may wait for a scrape in progress,
// so callers register once and keep the returned reference. Updating a series (Increment, Set,
// Add, Observe) is lock-free (relaxed atomics) and never waits for anything. Render() runs on
// the HTTP server's threads; it holds the registry mutex while it reads the series and calls
// the collectors after releasing it.
//
// Ownership: the registry owns every family and series; references stay valid for the
// registry's lifetime (series are never removed). The registry must outlive its users.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "observe/exposition.h"

namespace weir::observe {

enum class MetricType { kCounter, kGauge, kHistogram };

std::string_view ToString(MetricType type);  // "counter", "gauge", "histogram"

// A metric family declared once (see metric_names.h) so producers and tests agree on its name,
// help, type and label names. Unused label slots are empty.
struct MetricDef {
  std::string_view name;
  std::string_view help;
  MetricType type;
  std::array<std::string_view, 3> label_names;
};

// Upper bounds for durations in seconds: 5 ms to 2 min.
std::span<const double> DefaultSecondsBuckets();

// A monotonically increasing value.
class Counter {
 public:
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `amount`, which must not be negative.
  void Increment(double amount = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  friend class MetricsRegistry;
  Counter() = default;

  std::atomic<double> value_{0};
};

// A value that goes up and down.
class Gauge {
 public:
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  friend class MetricsRegistry;
  Gauge() = default;

  std::atomic<double> value_{0};
};

// Observations counted into fixed buckets (upper bounds inclusive, plus +Inf), with their sum.
class Histogram {
 public:
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void Observe(double value);

  const std::vector<double>& bounds() const { return bounds_; }
  // Per-bucket counts, cumulative as exposed: entry i counts observations <= bounds()[i]; the
  // last entry (+Inf) is the total count.
  std::vector<uint64_t> CumulativeCounts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  friend class MetricsRegistry;
  explicit Histogram(std::vector<double> bounds);

  const std::vector<double> bounds_;
  // Non-cumulative: counts_[i] for bucket i, counts_[bounds_.size()] for +Inf.
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The series of family `name` with `labels`, created on first use. A family's type, help
  // (and a histogram's buckets) are fixed by its first registration; registering the same name
  // with another type, help or buckets, or invalid names, is a programmer error (WEIR_CHECK).
  observe::Counter& Counter(std::string_view name, std::string_view help, const Labels& labels);
  observe::Gauge& Gauge(std::string_view name, std::string_view help, const Labels& labels);
  observe::Histogram& Histogram(std::string_view name, std::string_view help, const Labels& labels,
                                std::span<const double> bounds = DefaultSecondsBuckets());

  // The same through a declared family; `labels` must have exactly the declared label names.
  observe::Counter& Counter(const MetricDef& def, const Labels& labels);
  observe::Gauge& Gauge(const MetricDef& def, const Labels& labels);
  observe::Histogram& Histogram(const MetricDef& def, const Labels& labels,
                                std::span<const double> bounds = DefaultSecondsBuckets());

  // Adds text rendered elsewhere (complete families, see AppendGauge) to every Render(), after
  // the registry's own families. Called on the scraping thread; must not block or call back
  // into registration of this registry.
  void AddCollector(std::function<void(std::string& out)> collector);

  // The text exposition of every family (sorted by name, series sorted by labels), then the
  // collectors' text.
  std::string Render() const;

 private:
  struct Family {
    MetricType type = MetricType::kCounter;
    std::string help;
    std::vector<double> bounds;  // histograms only
    std::map<Labels, std::unique_ptr<observe::Counter>> counters;
    std::map<Labels, std::unique_ptr<observe::Gauge>> gauges;
    std::map<Labels, std::unique_ptr<observe::Histogram>> histograms;
  };

  // The family `name`, created on first use; checks the type, help and bounds agree.
  Family& FamilyFor(std::string_view name, std::string_view help, MetricType type,
                    const Labels& labels, std::span<const double> bounds);

  mutable std::mutex mutex_;
  std::map<std::string, Family, std::less<>> families_;        // guarded by mutex_
  std::vector<std::function<void(std::string&)>> collectors_;  // guarded by mutex_
};

}  // namespace weir::observe
