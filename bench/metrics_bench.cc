// The hot path of the metrics registry: a labelled counter incremented and a histogram
// observed from two threads at once (the same series, as the poll and flush threads share a
// dataset's), weir's hand-written registry (src/observe) against prometheus-cpp's core
// library; and the cost of one scrape of 200 series. Decides issue 17's "move the registry onto
// prometheus-cpp unless it is slower" (bench/README.md has the figures).
#include <benchmark/benchmark.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <string>
#include <vector>

#include "observe/metric_names.h"
#include "observe/metrics_registry.h"

namespace {

namespace o = weir::observe;

const o::Labels kLabels{{"dataset", "orders"}};

std::vector<double> SecondsBuckets() {
  const auto bounds = o::DefaultSecondsBuckets();
  return {bounds.begin(), bounds.end()};
}

struct Ours {
  o::MetricsRegistry registry;
  o::Counter& counter = registry.Counter(o::kRecordsConsumed, kLabels);
  o::Histogram& histogram = registry.Histogram(o::kFlushDuration, kLabels);
};

struct Theirs {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Counter& counter = prometheus::BuildCounter()
                                     .Name(std::string(o::kRecordsConsumed.name))
                                     .Help(std::string(o::kRecordsConsumed.help))
                                     .Register(*registry)
                                     .Add({{"dataset", "orders"}});
  prometheus::Histogram& histogram = prometheus::BuildHistogram()
                                         .Name(std::string(o::kFlushDuration.name))
                                         .Help(std::string(o::kFlushDuration.help))
                                         .Register(*registry)
                                         .Add({{"dataset", "orders"}}, SecondsBuckets());
};

Ours& OursInstance() {
  static Ours ours;
  return ours;
}

Theirs& TheirsInstance() {
  static Theirs theirs;
  return theirs;
}

void BM_CounterIncrement_Ours(benchmark::State& state) {
  o::Counter& counter = OursInstance().counter;
  for (auto _ : state) counter.Increment();
}
BENCHMARK(BM_CounterIncrement_Ours)->Threads(2)->UseRealTime();

void BM_CounterIncrement_PrometheusCpp(benchmark::State& state) {
  prometheus::Counter& counter = TheirsInstance().counter;
  for (auto _ : state) counter.Increment();
}
BENCHMARK(BM_CounterIncrement_PrometheusCpp)->Threads(2)->UseRealTime();

void BM_HistogramObserve_Ours(benchmark::State& state) {
  o::Histogram& histogram = OursInstance().histogram;
  double value = 0.001;
  for (auto _ : state) {
    histogram.Observe(value);
    value = value < 100 ? value * 1.7 : 0.001;
  }
}
BENCHMARK(BM_HistogramObserve_Ours)->Threads(2)->UseRealTime();

void BM_HistogramObserve_PrometheusCpp(benchmark::State& state) {
  prometheus::Histogram& histogram = TheirsInstance().histogram;
  double value = 0.001;
  for (auto _ : state) {
    histogram.Observe(value);
    value = value < 100 ? value * 1.7 : 0.001;
  }
}
BENCHMARK(BM_HistogramObserve_PrometheusCpp)->Threads(2)->UseRealTime();

// One scrape: 100 datasets, a counter and a histogram each.
void BM_Scrape200Series_Ours(benchmark::State& state) {
  o::MetricsRegistry registry;
  for (int i = 0; i < 100; ++i) {
    const o::Labels labels{{"dataset", "d" + std::to_string(i)}};
    registry.Counter(o::kRecordsConsumed, labels).Increment(i);
    registry.Histogram(o::kFlushDuration, labels).Observe(i * 0.01);
  }
  for (auto _ : state) benchmark::DoNotOptimize(registry.Render());
}
BENCHMARK(BM_Scrape200Series_Ours);

void BM_Scrape200Series_PrometheusCpp(benchmark::State& state) {
  auto registry = std::make_shared<prometheus::Registry>();
  auto& counters = prometheus::BuildCounter()
                       .Name(std::string(o::kRecordsConsumed.name))
                       .Help(std::string(o::kRecordsConsumed.help))
                       .Register(*registry);
  auto& histograms = prometheus::BuildHistogram()
                         .Name(std::string(o::kFlushDuration.name))
                         .Help(std::string(o::kFlushDuration.help))
                         .Register(*registry);
  for (int i = 0; i < 100; ++i) {
    counters.Add({{"dataset", "d" + std::to_string(i)}}).Increment(i);
    histograms.Add({{"dataset", "d" + std::to_string(i)}}, SecondsBuckets()).Observe(i * 0.01);
  }
  const prometheus::TextSerializer serializer;
  for (auto _ : state) benchmark::DoNotOptimize(serializer.Serialize(registry->Collect()));
}
BENCHMARK(BM_Scrape200Series_PrometheusCpp);

}  // namespace

BENCHMARK_MAIN();
