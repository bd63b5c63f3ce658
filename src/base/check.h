// Assertions for programmer errors only; errors a user or the world can cause are Statuses.
#pragma once

#include <source_location>
#include <string_view>

namespace weir::internal {
[[noreturn]] void CheckFailed(std::string_view condition, std::source_location where);
}  // namespace weir::internal

// Logs the failed condition with its location and aborts, in every build type.
#define WEIR_CHECK(condition)                                                     \
  do {                                                                            \
    if (!(condition)) [[unlikely]] {                                              \
      ::weir::internal::CheckFailed(#condition, std::source_location::current()); \
    }                                                                             \
  } while (false)

#ifdef NDEBUG
#define WEIR_DCHECK(condition) \
  do {                         \
  } while (false && (condition))
#else
#define WEIR_DCHECK(condition) WEIR_CHECK(condition)
#endif
