#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace weir::internal {

void CheckFailed(std::string_view condition, std::source_location where) {
  // Plain stdio: a failed check must be reported even if logging is what broke.
  std::fprintf(stderr, "weir: check failed: %.*s at %s:%u (%s)\n",
               static_cast<int>(condition.size()), condition.data(), where.file_name(),
               where.line(), where.function_name());
  std::fflush(stderr);
  std::abort();
}

}  // namespace weir::internal
