// Decode throughput with a 12-column JMESPath mapping (issue 14) against plain decode, MB/s of
// reference events per core, in one binary so the ratio is measured in one run:
//   build/release/bench/bench_mapping --benchmark_repetitions=3
//     --benchmark_report_aggregates_only=true
//
// - Decode:        JsonBatchBuilder on the events (the unmapped rate, as bench_decode).
// - Map:           RecordMapper::Apply alone (parse + 12 expressions; values borrowed).
// - MapAndDecode:  Apply, then the 12 values as one JSON object into a JsonBatchBuilder: the
//                  mapped rows end in an Arrow batch (the figure compared with Decode).
// - MapTreeWalk:   the same 12 expressions by the tree walk on an owned copy of each record
//                  (what the borrowed document and the plain-path fast path save).
#include <benchmark/benchmark.h>

#include <arrow/memory_pool.h>

#include <string>
#include <vector>

#include "decode/json_batch_builder.h"
#include "event_generator.h"
#include "records/jmespath/mapping.h"

namespace weir {
namespace {

using records::jmespath::Mapping;
using records::jmespath::MappingColumn;
using records::jmespath::RecordMapper;
using records::jmespath::Value;

const std::vector<std::string>& Events() {
  static const std::vector<std::string> events = [] {
    bench::EventGenerator generator(42);
    std::vector<std::string> out;
    for (int64_t i = 0; i < 20000; ++i) out.push_back(generator.Next(i));
    return out;
  }();
  return events;
}

// Seven plain paths, five with functions, a filter projection and a multi-select.
std::shared_ptr<const Mapping> TwelveColumns() {
  std::vector<MappingColumn> columns = {
      {"id", "uuid"},
      {"event", "event"},
      {"user", "distinct_id"},
      {"team", "team_id"},
      {"ts", "timestamp"},
      {"browser", "properties.\"$browser\""},
      {"revenue", "properties.revenue"},
      {"revenue_ceil", "ceil(properties.revenue)"},
      {"flags", "join(',', properties.\"$active_feature_flags\")"},
      {"beta_flags", "length(properties.\"$active_feature_flags\"[?starts_with(@, 'beta')])"},
      {"geo", "properties.{city: \"$geoip_city_name\", country: \"$geoip_country_code\"}"},
      {"source", "not_null(properties.utm_source, 'direct')"},
  };
  return *Mapping::Compile(std::move(columns));
}

void Finish(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(Events().size()));
}

void BM_Decode(benchmark::State& state) {
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
  Finish(state, bytes);
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

void BM_Map(benchmark::State& state) {
  const auto& events = Events();
  RecordMapper mapper(TwelveColumns());
  std::vector<Value> row;
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!mapper.Apply(event, &row).ok()) state.SkipWithError("mapping failed");
      benchmark::DoNotOptimize(row.data());
      bytes += static_cast<int64_t>(event.size());
    }
  }
  Finish(state, bytes);
}
BENCHMARK(BM_Map)->Unit(benchmark::kMillisecond);

void BM_MapAndDecode(benchmark::State& state) {
  const auto& events = Events();
  RecordMapper mapper(TwelveColumns());
  const Mapping& mapping = mapper.mapping();
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  std::vector<Value> row;
  std::string mapped;
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!mapper.Apply(event, &row).ok()) state.SkipWithError("mapping failed");
      mapped.assign("{");
      for (size_t i = 0; i < row.size(); ++i) {
        if (i > 0) mapped.push_back(',');
        mapped.append("\"").append(mapping.column(i).column).append("\":");
        records::jmespath::AppendJson(row[i], &mapped);
      }
      mapped.push_back('}');
      if (!builder->Append(mapped).ok()) state.SkipWithError("decode failed");
      bytes += static_cast<int64_t>(event.size());
    }
    benchmark::DoNotOptimize(builder->Finish());
  }
  Finish(state, bytes);
}
BENCHMARK(BM_MapAndDecode)->Unit(benchmark::kMillisecond);

void BM_MapTreeWalk(benchmark::State& state) {
  const auto& events = Events();
  const auto mapping = TwelveColumns();
  simdjson::dom::parser parser;
  std::vector<Value> row(mapping->size());
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      simdjson::dom::element root;
      if (parser.parse(event).get(root) != simdjson::SUCCESS) state.SkipWithError("parse");
      const Value owned = Value::Borrowed(root).Owned();
      for (size_t i = 0; i < mapping->size(); ++i) {
        if (!mapping->expression(i).EvaluateTree(owned, &row[i]).ok()) {
          state.SkipWithError("mapping failed");
        }
      }
      benchmark::DoNotOptimize(row.data());
      bytes += static_cast<int64_t>(event.size());
    }
  }
  Finish(state, bytes);
}
BENCHMARK(BM_MapTreeWalk)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace weir

BENCHMARK_MAIN();
