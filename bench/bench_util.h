// Small helpers every benchmark program shares: dying loudly on bad input, comma lists,
// latency percentiles.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace weir::bench {

[[noreturn]] inline void Die(const std::string& message) {
  std::fprintf(stderr, "FATAL: %s\n", message.c_str());
  std::fflush(stderr);
  std::exit(1);
}

// "a,b,,c" -> {"a", "b", "c"}
inline std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Summary {
  double p50_ms = 0;
  double p99_ms = 0;
  double mean_ms = 0;
  double max_ms = 0;
};

// Nearest-rank percentiles, mean and max of latencies in milliseconds (not empty).
inline Summary Summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    const size_t index =
        std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5));
    return ms[index];
  };
  Summary out;
  out.p50_ms = at(0.50);
  out.p99_ms = at(0.99);
  out.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  out.max_ms = ms.back();
  return out;
}

// The options both commit benchmarks (bench_commit, bench_iceberg_commit) take.
struct CommitBenchOptions {
  int commits = 200;
  int warmup = 10;
  int partitions = 8;
  std::vector<int> files = {1, 16, 64};
  std::vector<std::string> catalogs;
};

// --commits N --warmup N --partitions N --files 1,16,64 --catalogs a,b; `catalogs` is the
// default list and names the choices in the usage line.
inline CommitBenchOptions ParseCommitBenchArgs(int argc, char** argv,
                                               std::vector<std::string> catalogs) {
  CommitBenchOptions options;
  std::string choices;
  for (const std::string& c : catalogs) choices += (choices.empty() ? "" : ",") + c;
  options.catalogs = std::move(catalogs);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--commits") {
      options.commits = std::stoi(value());
    } else if (arg == "--warmup") {
      options.warmup = std::stoi(value());
    } else if (arg == "--partitions") {
      options.partitions = std::stoi(value());
    } else if (arg == "--files") {
      options.files.clear();
      for (const auto& item : SplitComma(value())) options.files.push_back(std::stoi(item));
    } else if (arg == "--catalogs") {
      options.catalogs = SplitComma(value());
    } else {
      Die("unknown argument " + arg +
          " (--commits N --warmup N --partitions N --files 1,16,64 --catalogs " + choices + ")");
    }
  }
  if (options.commits < 1 || options.partitions < 1 || options.files.empty()) {
    Die("--commits, --partitions and --files must be positive");
  }
  return options;
}

}  // namespace weir::bench
