// Decode throughput: reference events → JsonBatchBuilder → Arrow record batch, MB/s per core.
//   build/release/bench/bench_decode --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <arrow/memory_pool.h>

#include <string>
#include <vector>

#include "decode/json_batch_builder.h"
#include "event_generator.h"

namespace weir {
namespace {

const std::vector<std::string>& Events() {
  static const std::vector<std::string> events = [] {
    bench::EventGenerator generator(42);
    std::vector<std::string> out;
    for (int64_t i = 0; i < 20000; ++i) out.push_back(generator.Next(i));
    return out;
  }();
  return events;
}

void BM_DecodeReferenceEvents(benchmark::State& state) {
  const auto& events = Events();
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!builder->Append(event).ok()) state.SkipWithError("decode failed");
      bytes += static_cast<int64_t>(event.size());
    }
    benchmark::DoNotOptimize(builder->Finish());
  }
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(events.size()));
  state.counters["event_bytes"] = static_cast<double>(events[0].size());
}
BENCHMARK(BM_DecodeReferenceEvents)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
