// Small helpers every benchmark program shares: dying loudly on bad input, comma lists,
// latency percentiles.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
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

}  // namespace weir::bench
