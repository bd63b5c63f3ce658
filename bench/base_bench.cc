// Micro-benchmarks of base/: UUIDv7 generation sits on every flush's object name.
#include <benchmark/benchmark.h>

#include "base/uuid.h"

namespace weir {
namespace {

void BM_UuidV7Next(benchmark::State& state) {
  UuidV7Generator generator(Clock::System(), 42);
  for (auto _ : state) benchmark::DoNotOptimize(generator.Next());
}
BENCHMARK(BM_UuidV7Next);

void BM_UuidToString(benchmark::State& state) {
  UuidV7Generator generator(Clock::System(), 42);
  const Uuid uuid = generator.Next();
  for (auto _ : state) benchmark::DoNotOptimize(uuid.ToString());
}
BENCHMARK(BM_UuidToString);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
