// Small helpers every benchmark program shares: dying loudly on bad input, comma lists.
#pragma once

#include <cstdio>
#include <cstdlib>
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

}  // namespace weir::bench
