// Decode throughput with a 12-column JMESPath mapping (issue 14) against plain decode, MB/s of
// reference events per core, in one binary so the ratio is measured in one run:
//   build/release/bench/bench_mapping --benchmark_repetitions=3
//     --benchmark_report_aggregates_only=true
//
// - Decode:        JsonBatchBuilder on the events (the unmapped rate, as bench_decode).
// - Map:           RecordMapper::Apply alone (parse + 12 expressions; values borrowed).
// - MapIntoArrow:  Apply, then each value appended straight into a typed Arrow builder (the
//                  column kinds of decode/column_kind.h, fixed by the first record), finished
//                  into a batch: what wiring the mapping into decode does (the figure compared
//                  with Decode).
// - MappedDecoder: records::MappedBatchBuilder, the decoder `weir ingest` runs for a mapped
//                  dataset (values into decode::ColumnBuilder with kind promotion): **the
//                  figure for the target (≥ 60 % of Decode)**.
// - MapAndDecode:  Apply, then the 12 values as one JSON object into a JsonBatchBuilder (a
//                  second parse: the bound for wiring that re-decodes the mapped row).
// - PlainPaths{Dom,OnDemand}: the mapping's seven plain paths alone, through RecordMapper (DOM
//                  tape, read in place) and through simdjson's On-Demand API (JSON pointers,
//                  the document rewound for each), every value read: the choice of the DOM.
// - MapTreeWalk:   the same 12 expressions by the tree walk on an owned copy of each record
//                  (what the borrowed document and the plain-path fast path save).
// - DecodeVariant, DecodeVariantUnshredded: Decode, then the VARIANT companion of
//                  `properties` (records/variant_columns.h) built for the batch, shredded by
//                  its common keys and not: compared with Decode, the cost of VARIANT.
#include <benchmark/benchmark.h>

#include <arrow/builder.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "decode/column_kind.h"
#include "decode/json_batch_builder.h"
#include "event_generator.h"
#include "records/jmespath/mapping.h"
#include "records/mapped_batch_builder.h"
#include "records/variant_columns.h"

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

void DecodeVariant(benchmark::State& state, records::ShredOptions shred) {
  const auto& events = Events();
  auto builder = *decode::JsonBatchBuilder::Make({}, arrow::default_memory_pool());
  auto variant = *records::VariantColumns::Make({"properties"}, shred);
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!builder->Append(event).ok()) state.SkipWithError("decode failed");
      bytes += static_cast<int64_t>(event.size());
    }
    auto batch = builder->Finish();
    if (!batch.ok()) state.SkipWithError("finish failed");
    records::VariantOutcome outcome;
    auto with = variant.Apply(*batch, &outcome);
    if (!with.ok() || outcome.encoded != static_cast<int64_t>(events.size())) {
      state.SkipWithError("variant failed");
    }
    benchmark::DoNotOptimize(with);
  }
  Finish(state, bytes);
}
void BM_DecodeVariant(benchmark::State& state) { DecodeVariant(state, {}); }
BENCHMARK(BM_DecodeVariant)->Unit(benchmark::kMillisecond);
void BM_DecodeVariantUnshredded(benchmark::State& state) {
  DecodeVariant(state, {.min_share = 0.5, .max_keys = 0});
}
BENCHMARK(BM_DecodeVariantUnshredded)->Unit(benchmark::kMillisecond);

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

// Appends mapped rows to one Arrow builder per column, typed by the first row's values.
class RowAppender {
 public:
  bool Append(const std::vector<Value>& row) {
    if (builders_.empty()) Start(row);
    for (size_t i = 0; i < row.size(); ++i) {
      const Value& value = row[i];
      arrow::Status status;
      if (value.is_null()) {
        status = builders_[i]->AppendNull();
      } else if (kinds_[i] == decode::ColumnKind::kInt64 && value.is_integer()) {
        status = static_cast<arrow::Int64Builder&>(*builders_[i]).Append(value.integer());
      } else if (kinds_[i] == decode::ColumnKind::kDouble && value.is_number()) {
        status = static_cast<arrow::DoubleBuilder&>(*builders_[i]).Append(value.number());
      } else if (kinds_[i] == decode::ColumnKind::kBoolean &&
                 value.type() == records::jmespath::Type::kBoolean) {
        status = static_cast<arrow::BooleanBuilder&>(*builders_[i]).Append(value.boolean());
      } else if (kinds_[i] == decode::ColumnKind::kVarchar && value.is_string()) {
        status = static_cast<arrow::StringBuilder&>(*builders_[i]).Append(value.string());
      } else if (kinds_[i] == decode::ColumnKind::kVarchar &&
                 (value.is_array() || value.is_object())) {
        text_.clear();
        records::jmespath::AppendJson(value, &text_);
        status = static_cast<arrow::StringBuilder&>(*builders_[i]).Append(text_);
      } else {
        return false;  // another kind: the reference events never give one
      }
      if (!status.ok()) return false;
    }
    return true;
  }

  std::shared_ptr<arrow::RecordBatch> Finish() {
    arrow::FieldVector fields;
    arrow::ArrayVector arrays;
    for (size_t i = 0; i < builders_.size(); ++i) {
      std::shared_ptr<arrow::Array> array;
      if (!builders_[i]->Finish(&array).ok()) return nullptr;
      fields.push_back(arrow::field("c" + std::to_string(i), array->type()));
      arrays.push_back(std::move(array));
    }
    const int64_t rows = arrays.empty() ? 0 : arrays[0]->length();
    return arrow::RecordBatch::Make(arrow::schema(fields), rows, arrays);
  }

 private:
  void Start(const std::vector<Value>& row) {
    for (const Value& value : row) {
      decode::ColumnKind kind = decode::ColumnKind::kVarchar;
      if (value.is_number()) {
        kind = value.is_integer() ? decode::ColumnKind::kInt64 : decode::ColumnKind::kDouble;
      } else if (value.type() == records::jmespath::Type::kBoolean) {
        kind = decode::ColumnKind::kBoolean;
      }
      kinds_.push_back(kind);
      std::unique_ptr<arrow::ArrayBuilder> builder;
      if (!arrow::MakeBuilder(arrow::default_memory_pool(), decode::ArrowType(kind), &builder)
               .ok()) {
        std::abort();
      }
      builders_.push_back(std::move(builder));
    }
  }

  std::vector<decode::ColumnKind> kinds_;
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders_;
  std::string text_;
};

void BM_MapIntoArrow(benchmark::State& state) {
  const auto& events = Events();
  RecordMapper mapper(TwelveColumns());
  RowAppender appender;
  std::vector<Value> row;
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!mapper.Apply(event, &row).ok()) state.SkipWithError("mapping failed");
      if (!appender.Append(row)) state.SkipWithError("append failed");
      bytes += static_cast<int64_t>(event.size());
    }
    benchmark::DoNotOptimize(appender.Finish());
  }
  Finish(state, bytes);
}
BENCHMARK(BM_MapIntoArrow)->Unit(benchmark::kMillisecond);

// The decoder weir ingest runs for a mapped dataset (records::MappedBatchBuilder): the figure
// for the target, measured on the production code path rather than a stand-in.
void BM_MappedDecoder(benchmark::State& state) {
  const auto& events = Events();
  auto builder =
      *records::MappedBatchBuilder::Make(TwelveColumns(), {}, arrow::default_memory_pool());
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!builder->Append(event).ok()) state.SkipWithError("mapping failed");
      bytes += static_cast<int64_t>(event.size());
    }
    benchmark::DoNotOptimize(builder->Finish());
  }
  Finish(state, bytes);
}
BENCHMARK(BM_MappedDecoder)->Unit(benchmark::kMillisecond);

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
      mapped.clear();
      mapped.push_back('{');
      for (size_t i = 0; i < row.size(); ++i) {
        if (i > 0) mapped.push_back(',');
        mapped.push_back('"');
        mapped.append(mapping.column(i).column);
        mapped.push_back('"');
        mapped.push_back(':');
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

constexpr const char* kPlainPaths[][2] = {{"uuid", "/uuid"},
                                          {"event", "/event"},
                                          {"distinct_id", "/distinct_id"},
                                          {"team_id", "/team_id"},
                                          {"timestamp", "/timestamp"},
                                          {"properties.\"$browser\"", "/properties/$browser"},
                                          {"properties.revenue", "/properties/revenue"}};

void BM_PlainPathsDom(benchmark::State& state) {
  const auto& events = Events();
  std::vector<MappingColumn> columns;
  for (const auto& path : kPlainPaths) columns.push_back({path[1], path[0]});
  RecordMapper mapper(*Mapping::Compile(std::move(columns)));
  std::vector<Value> row;
  int64_t bytes = 0;
  size_t read = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      if (!mapper.Apply(event, &row).ok()) state.SkipWithError("mapping failed");
      for (const Value& value : row) {
        read += value.is_string() ? value.string().size() : value.is_number() ? 1 : 0;
      }
      bytes += static_cast<int64_t>(event.size());
    }
  }
  benchmark::DoNotOptimize(read);
  Finish(state, bytes);
}
BENCHMARK(BM_PlainPathsDom)->Unit(benchmark::kMillisecond);

void BM_PlainPathsOnDemand(benchmark::State& state) {
  namespace ondemand = simdjson::ondemand;
  const auto& events = Events();
  ondemand::parser parser;
  std::vector<char> buffer;
  int64_t bytes = 0;
  size_t read = 0;
  for (auto _ : state) {
    for (const auto& event : events) {
      const size_t needed = event.size() + simdjson::SIMDJSON_PADDING;
      if (buffer.size() < needed) buffer.resize(needed);
      std::memcpy(buffer.data(), event.data(), event.size());
      std::memset(buffer.data() + event.size(), 0, simdjson::SIMDJSON_PADDING);
      ondemand::document doc;
      if (parser.iterate(buffer.data(), event.size(), buffer.size()).get(doc)) {
        state.SkipWithError("parse failed");
      }
      for (const auto& path : kPlainPaths) {
        ondemand::value value;
        if (doc.at_pointer(path[1]).get(value)) state.SkipWithError("no such path");
        ondemand::json_type type;
        if (value.type().get(type)) state.SkipWithError("bad value");
        if (type == ondemand::json_type::string) {
          std::string_view text;
          if (value.get_string().get(text)) state.SkipWithError("bad string");
          read += text.size();
        } else {
          double number = 0;
          if (value.get_double().get(number)) state.SkipWithError("bad number");
          read += 1;
        }
      }
      bytes += static_cast<int64_t>(event.size());
    }
  }
  benchmark::DoNotOptimize(read);
  Finish(state, bytes);
}
BENCHMARK(BM_PlainPathsOnDemand)->Unit(benchmark::kMillisecond);

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
