#include "wal/fault.h"

#include <cstdio>
#include <cstdlib>

namespace weir::wal {

#ifndef NDEBUG
void FaultPoint(std::string_view point) {
  const char* fault = std::getenv("WEIR_TEST_WAL_FAULT");
  if (fault == nullptr || point != fault) return;
  std::fprintf(stderr, "WEIR_TEST_WAL_FAULT=%s: exiting here\n", fault);
  std::fflush(stderr);
  std::_Exit(137);
}
#endif

}  // namespace weir::wal
