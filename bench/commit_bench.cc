// Commit latency of weir's DuckLake catalog writer (Table::Commit: files + offset ledger in one
// transaction), p50/p99 over many commits of 1, 16 and 64 files, on SQLite and PostgreSQL.
//
//   build/h-bench/bench/bench_commit [--commits 200] [--warmup 10] [--partitions 8]
//                                    [--files 1,16,64] [--catalogs sqlite,postgres]
//
// Each (catalog, files) pair gets a fresh catalog: a SQLite file in a temporary directory, or a
// new database on the PostgreSQL server named by WEIR_TEST_PG_DSN (skipped when unset; run under
// `python -m tests.harness run --only postgres -- ...`). The data files are not written: only
// the catalog commit is timed.
#include <libpq-fe.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/table.h"

namespace weir {
namespace {

using bench::Die;

using Options = bench::CommitBenchOptions;

// Runs one statement on a PostgreSQL server; dies on failure.
void PgExec(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string error = PQerrorMessage(conn);
    PQfinish(conn);
    Die("cannot connect to PostgreSQL (" + conninfo + "): " + error);
  }
  PGresult* result = PQexec(conn, sql.c_str());
  const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
  const std::string error = ok ? "" : PQerrorMessage(conn);
  PQclear(result);
  PQfinish(conn);
  if (!ok) Die(sql + ": " + error);
}

// A fresh catalog location; cleans up after itself.
class Scratch {
 public:
  Scratch(const std::string& kind, const std::string& pg_dsn, const std::string& tag) {
    char pattern[] = "/tmp/weir-bench-commit-XXXXXX";
    if (mkdtemp(pattern) == nullptr) Die("mkdtemp failed");
    dir_ = pattern;
    config_.data_path = dir_ + "/data/";
    config_.extension_directory = lake::DefaultExtensionDirectory();
    if (kind == "sqlite") {
      config_.kind = lake::ducklake::SqlDialect::kSqlite;
      config_.sqlite_path = dir_ + "/catalog.sqlite";
    } else {
      config_.kind = lake::ducklake::SqlDialect::kPostgres;
      pg_dsn_ = pg_dsn;
      database_ = "bench_commit_" + std::to_string(getpid()) + "_" + tag;
      PgExec(pg_dsn_, "CREATE DATABASE " + database_);
      config_.postgres_conninfo = pg_dsn_ + " dbname=" + database_;
    }
  }
  ~Scratch() {
    if (!database_.empty())
      PgExec(pg_dsn_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  const lake::ducklake::CatalogConfig& config() const { return config_; }

 private:
  std::string dir_;
  std::string pg_dsn_;
  std::string database_;
  lake::ducklake::CatalogConfig config_;
};

// Plausible statistics of a file of `rows` reference rows whose ids start at `first_id`.
files::FileInfo MakeInfo(const std::vector<lake::Column>& columns, const std::string& path,
                         int64_t rows, int64_t first_id) {
  files::FileInfo info;
  info.path = path;
  info.rows = rows;
  info.size_bytes = rows * 180;
  info.footer_bytes = 2400;
  const int64_t now_us = 1764400000000000 + first_id;
  for (const lake::Column& column : columns) {
    files::ColumnStats stats;
    stats.field_id = static_cast<int>(column.id);
    stats.name = column.name;
    stats.value_count = rows;
    stats.compressed_bytes = info.size_bytes / static_cast<int64_t>(columns.size());
    switch (column.type) {
      case lake::ColumnType::kBigint:
      case lake::ColumnType::kInteger:
        stats.min = std::to_string(first_id);
        stats.max = std::to_string(first_id + rows - 1);
        break;
      case lake::ColumnType::kVarchar:
        stats.min = "alice";
        stats.max = "zoe";
        stats.null_count = rows / 10;
        break;
      case lake::ColumnType::kDouble:
      case lake::ColumnType::kFloat:
        stats.min = "-12.5";
        stats.max = "1.5";
        break;
      case lake::ColumnType::kBoolean:
        stats.min = "false";
        stats.max = "true";
        break;
      case lake::ColumnType::kTimestampTz:
        stats.min = std::to_string(now_us);
        stats.max = std::to_string(now_us);
        break;
      case lake::ColumnType::kUuid:
        stats.min = "00000000-0000-0000-0000-000000000000";
        stats.max = "ffffffff-ffff-ffff-ffff-ffffffffffff";
        break;
      case lake::ColumnType::kVariant:
      case lake::ColumnType::kOther:
        stats.null_count = rows;
        break;
    }
    info.columns.push_back(std::move(stats));
  }
  return info;
}

bench::Summary RunOne(const std::string& kind, const std::string& pg_dsn, int files_per_commit,
                      const Options& options) {
  Scratch scratch(kind, pg_dsn, std::to_string(files_per_commit));
  auto catalog = lake::ducklake::DuckLakeCatalog::Open(scratch.config());
  if (!catalog.ok()) Die("opening the catalog: " + catalog.status().ToString());
  auto opened =
      (*catalog)->OpenTable(lake::TableSpec{"main",
                                            "t",
                                            {{"id", lake::ColumnType::kBigint},
                                             {"name", lake::ColumnType::kVarchar},
                                             {"score", lake::ColumnType::kDouble},
                                             {"ok", lake::ColumnType::kBoolean},
                                             {"_inserted_at", lake::ColumnType::kTimestampTz}},
                                            {},
                                            {}},
                            lake::OpenMode::kOpenOrCreate);
  if (!opened.ok()) Die("opening the table: " + opened.status().ToString());
  if (opened->status != lake::OpenStatus::kOpened) Die("opening the table: " + opened->reason);
  lake::Table& t = *opened->table;

  const std::string topic = "bench-topic";
  const int64_t rows_per_file = 20000;
  const int64_t records_per_partition = rows_per_file * files_per_commit / options.partitions + 1;
  std::vector<int64_t> next(static_cast<size_t>(options.partitions), 0);
  int64_t next_id = 0;
  std::vector<double> latencies;
  const int total = options.warmup + options.commits;
  for (int c = 0; c < total; ++c) {
    lake::CommitRequest request;
    request.writer = "bench-" + std::to_string(getpid()) + "-" + kind + "-" +
                     std::to_string(files_per_commit) + "-" + std::to_string(c);
    request.message = "bench_commit";
    for (int f = 0; f < files_per_commit; ++f) {
      lake::DataFile file;
      file.relative_path = t.NewFilePath({});
      file.info = MakeInfo(t.columns(), file.relative_path, rows_per_file, next_id);
      next_id += rows_per_file;
      request.files.push_back(std::move(file));
    }
    for (int p = 0; p < options.partitions; ++p) {
      int64_t& offset = next[static_cast<size_t>(p)];
      request.offsets.push_back({topic, p, offset, offset + records_per_partition});
      offset += records_per_partition;
    }
    const auto start = std::chrono::steady_clock::now();
    auto result = t.Commit(request);
    const auto end = std::chrono::steady_clock::now();
    if (!result.ok()) Die("commit " + std::to_string(c) + ": " + result.status().ToString());
    if (result->status != lake::CommitStatus::kCommitted || result->snapshot_id < 0) {
      Die("commit " + std::to_string(c) + " was " + std::string(lake::ToString(result->status)));
    }
    if (c >= options.warmup) {
      latencies.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
  return bench::Summarise(std::move(latencies));
}

int Main(int argc, char** argv) {
  const Options options = bench::ParseCommitBenchArgs(argc, argv, {"sqlite", "postgres"});
  const char* pg = std::getenv("WEIR_TEST_PG_DSN");
  const std::string pg_dsn = pg == nullptr ? "" : pg;

  std::printf("%-9s %6s %8s %9s %9s %9s %9s\n", "catalog", "files", "commits", "p50_ms", "p99_ms",
              "mean_ms", "max_ms");
  std::fflush(stdout);
  for (const std::string& kind : options.catalogs) {
    if (kind != "sqlite" && kind != "postgres") Die("unknown catalog " + kind);
    if (kind == "postgres" && pg_dsn.empty()) {
      std::printf(
          "postgres: skipped, WEIR_TEST_PG_DSN is not set (run under `.deps/venv/bin/python -m "
          "tests.harness run --only postgres -- ...`)\n");
      continue;
    }
    for (int files : options.files) {
      const bench::Summary s = RunOne(kind, pg_dsn, files, options);
      std::printf("%-9s %6d %8d %9.2f %9.2f %9.2f %9.2f\n", kind.c_str(), files, options.commits,
                  s.p50_ms, s.p99_ms, s.mean_ms, s.max_ms);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace weir

int main(int argc, char** argv) { return weir::Main(argc, argv); }
