// Commit latency of weir's Iceberg table layer (IcebergTable::Commit: reload, fence, footers →
// metrics, manifest, merge-append, manifest list, the catalog's compare-and-swap), p50/p99 over
// many commits of 1, 16 and 64 files, on the SQLite SQL catalog and a REST catalog.
//
//   build/release/bench/bench_iceberg_commit [--commits 200] [--warmup 10] [--partitions 8]
//                                            [--files 1,16,64] [--catalogs sqlite,rest]
//
// Each (catalog, files) pair gets a fresh table: a SQLite catalog and warehouse in a temporary
// directory, or a new namespace on the REST catalog at WEIR_TEST_ICEBERG_REST_URI (skipped when
// unset; run under `python -m tests.harness run --only iceberg-rest -- ...`; its warehouse must
// be a local directory, as the harness's is). An Iceberg commit reads each data file's Parquet
// footer, so the files exist: hard links to one real 20,000-row, 5-column file written before
// the timing starts. Only Table::Commit is timed: wall time, and this process's CPU time over
// the same interval (the part of the wall time that the machine's load does not inflate; a REST
// catalog's own work is not in it). The warm-up commits (a JIT-cold server, the first commit's
// read of the table) are not in the figures; the first and the slowest of them are printed
// apart (warm1_ms, warm_max). Before the REST tables, a throwaway table of 100 commits warms the
// server's JIT (line `rest-warm`), which a long-running production catalog has long done.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <arrow/builder.h>
#include <arrow/record_batch.h>

#include "bench_util.h"
#include "files/parquet_file_writer.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "lake/table.h"

namespace weir {
namespace {

using bench::Die;

using Options = bench::CommitBenchOptions;

lake::TableSpec Spec(const std::string& schema) {
  return lake::TableSpec{schema,
                         "t",
                         {{"id", lake::ColumnType::kBigint},
                          {"name", lake::ColumnType::kVarchar},
                          {"score", lake::ColumnType::kDouble},
                          {"ok", lake::ColumnType::kBoolean},
                          {"_inserted_at", lake::ColumnType::kTimestampTz}},
                         {},
                         {}};
}

template <typename T>
void Check(const T& status, const std::string& what) {
  if (!status.ok()) Die(what + ": " + status.ToString());
}

// Writes `rows` reference rows with the table's field ids to `path`; returns their FileInfo.
files::FileInfo WriteTemplate(lake::Table& t, const std::string& path, int64_t rows) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  arrow::DoubleBuilder scores;
  arrow::BooleanBuilder oks;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  static const char* kNames[] = {"alice", "bob", "carol", "dave", "zoe"};
  for (int64_t i = 0; i < rows; ++i) {
    Check(ids.Append(i), "building ids");
    if (i % 10 == 0) {
      Check(names.AppendNull(), "building names");
    } else {
      Check(names.Append(kNames[i % 5]), "building names");
    }
    Check(scores.Append(static_cast<double>(i % 1000) / 7.0 - 12.5), "building scores");
    Check(oks.Append(i % 2 == 0), "building oks");
    Check(ts.Append(1'764'547'200'000'000 + i * 1000), "building timestamps");
  }
  std::vector<std::shared_ptr<arrow::Array>> arrays(5);
  Check(ids.Finish(&arrays[0]), "ids");
  Check(names.Finish(&arrays[1]), "names");
  Check(scores.Finish(&arrays[2]), "scores");
  Check(oks.Finish(&arrays[3]), "oks");
  Check(ts.Finish(&arrays[4]), "timestamps");
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<int> field_ids;
  for (size_t c = 0; c < arrays.size(); ++c) {
    fields.push_back(arrow::field(t.columns()[c].name, arrays[c]->type()));
    field_ids.push_back(static_cast<int>(t.columns()[c].id));
  }
  auto schema = files::WithFieldIds(*arrow::schema(fields), field_ids);
  Check(schema.status(), "field ids");
  const auto batch = arrow::RecordBatch::Make(*schema, rows, arrays);
  auto writer = files::ParquetFileWriter::Create(t.filesystem(), path, *schema, {});
  Check(writer.status(), "creating " + path);
  Check((*writer)->Append(*batch), "writing " + path);
  auto info = (*writer)->Finish();
  Check(info.status(), "finishing " + path);
  return *info;
}

Result<std::unique_ptr<lake::Catalog>> OpenCatalog(const std::string& kind,
                                                   const std::string& dir) {
  lake::iceberg::IcebergLakeConfig config;
  if (kind == "sqlite") {
    config.sqlite_path = dir + "/catalog.db";
    config.warehouse = dir + "/warehouse";
  } else {
    config.type = lake::iceberg::CatalogType::kRest;
    config.rest.uri = std::getenv("WEIR_TEST_ICEBERG_REST_URI");
    if (const char* w = std::getenv("WEIR_TEST_ICEBERG_REST_WAREHOUSE")) config.rest.warehouse = w;
  }
  WEIR_ASSIGN_OR_RAISE(auto catalog, lake::iceberg::IcebergLakeCatalog::Open(config));
  return std::unique_ptr<lake::Catalog>(std::move(catalog));
}

double ProcessCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Timings {
  bench::Summary wall;
  bench::Summary cpu;
  double warmup_first_ms = 0;  // the table's first commit (a JIT-cold server, a cold cache)
  double warmup_max_ms = 0;    // the slowest of the warm-up commits
};

Timings RunOne(const std::string& kind, int files_per_commit, const Options& options,
               const std::string& name_suffix = "") {
  char pattern[] = "/tmp/weir-bench-iceberg-commit-XXXXXX";
  if (mkdtemp(pattern) == nullptr) Die("mkdtemp failed");
  const std::string dir = pattern;
  auto catalog = OpenCatalog(kind, dir);
  Check(catalog.status(), "opening the " + kind + " catalog");
  const std::string schema =
      "bench_" + std::to_string(getpid()) + "_" + std::to_string(files_per_commit) + name_suffix;
  auto opened = (*catalog)->OpenTable(Spec(schema), lake::OpenMode::kOpenOrCreate);
  Check(opened.status(), "opening the table");
  if (opened->status != lake::OpenStatus::kOpened) Die("opening the table: " + opened->reason);
  lake::Table& t = *opened->table;

  const int64_t rows_per_file = 20000;
  const std::string data = t.DataDirectory();
  std::filesystem::create_directories(data);
  const std::string template_path = dir + "/template.parquet";
  const files::FileInfo info = WriteTemplate(t, template_path, rows_per_file);

  const std::string topic = "bench-topic";
  const int64_t records_per_partition = rows_per_file * files_per_commit / options.partitions + 1;
  std::vector<int64_t> next(static_cast<size_t>(options.partitions), 0);
  std::vector<double> latencies;
  std::vector<double> cpu;
  double warmup_first_ms = 0, warmup_max_ms = 0;
  const int total = options.warmup + options.commits;
  for (int c = 0; c < total; ++c) {
    lake::CommitRequest request;
    request.writer = "bench-" + std::to_string(getpid()) + "-" + kind + "-" +
                     std::to_string(files_per_commit) + "-" + std::to_string(c);
    request.message = "bench_iceberg_commit";
    for (int f = 0; f < files_per_commit; ++f) {
      lake::DataFile file;
      file.relative_path = t.NewFilePath({});
      std::error_code ec;
      std::filesystem::create_hard_link(template_path, data + file.relative_path, ec);
      if (ec) Die("linking " + data + file.relative_path + ": " + ec.message());
      file.info = info;
      file.info.path = data + file.relative_path;
      request.files.push_back(std::move(file));
    }
    for (int p = 0; p < options.partitions; ++p) {
      int64_t& offset = next[static_cast<size_t>(p)];
      request.offsets.push_back({topic, p, offset, offset + records_per_partition});
      offset += records_per_partition;
    }
    const double cpu_start = ProcessCpuMs();
    const auto start = std::chrono::steady_clock::now();
    auto result = t.Commit(request);
    const auto end = std::chrono::steady_clock::now();
    const double cpu_end = ProcessCpuMs();
    Check(result.status(), "commit " + std::to_string(c));
    if (result->status != lake::CommitStatus::kCommitted || result->snapshot_id < 0) {
      Die("commit " + std::to_string(c) + " was " + std::string(lake::ToString(result->status)) +
          ": " + result->reason);
    }
    const double wall_ms = std::chrono::duration<double, std::milli>(end - start).count();
    if (c >= options.warmup) {
      latencies.push_back(wall_ms);
      cpu.push_back(cpu_end - cpu_start);
    } else {
      if (c == 0) warmup_first_ms = wall_ms;
      warmup_max_ms = std::max(warmup_max_ms, wall_ms);
    }
  }
  opened->table.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  // A REST table's files live in the server's warehouse (the harness's temporary directory).
  return Timings{bench::Summarise(std::move(latencies)), bench::Summarise(std::move(cpu)),
                 warmup_first_ms, warmup_max_ms};
}

int Main(int argc, char** argv) {
  const Options options = bench::ParseCommitBenchArgs(argc, argv, {"sqlite", "rest"});
  const char* rest = std::getenv("WEIR_TEST_ICEBERG_REST_URI");

  std::printf("%-9s %6s %8s %9s %9s %9s %9s %11s %11s %10s %9s\n", "catalog", "files", "commits",
              "p50_ms", "p99_ms", "mean_ms", "max_ms", "cpu_p50_ms", "cpu_p99_ms", "warm1_ms",
              "warm_max");
  std::fflush(stdout);
  for (const std::string& kind : options.catalogs) {
    if (kind != "sqlite" && kind != "rest") Die("unknown catalog " + kind);
    if (kind == "rest" && (rest == nullptr || *rest == '\0')) {
      std::printf(
          "rest: skipped, WEIR_TEST_ICEBERG_REST_URI is not set (run under `.deps/venv/bin/python "
          "-m tests.harness run --only iceberg-rest -- ...`)\n");
      continue;
    }
    if (kind == "rest") {
      // A REST catalog in production is a long-running, JIT-warm server; the harness's starts
      // cold, and whichever table came first paid its warm-up (p50 ~31 ms against ~22 ms for the
      // same table later). A throwaway table warms it; its figures are printed, not counted.
      Options warm = options;
      warm.warmup = 0;
      warm.commits = std::max(options.warmup * 10, 100);
      const Timings t = RunOne(kind, options.files.front(), warm, "_warm");
      std::printf("%-9s %6d %8d %9.2f  (the server's JIT warm-up table; not a result)\n",
                  "rest-warm", options.files.front(), warm.commits, t.wall.p50_ms);
      std::fflush(stdout);
    }
    for (int files : options.files) {
      const Timings t = RunOne(kind, files, options);
      std::printf("%-9s %6d %8d %9.2f %9.2f %9.2f %9.2f %11.2f %11.2f %10.2f %9.2f\n", kind.c_str(),
                  files, options.commits, t.wall.p50_ms, t.wall.p99_ms, t.wall.mean_ms,
                  t.wall.max_ms, t.cpu.p50_ms, t.cpu.p99_ms, t.warmup_first_ms, t.warmup_max_ms);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) { return weir::Main(argc, argv); }
