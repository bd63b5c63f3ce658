#include "wal/fault.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace weir::wal {

#ifndef NDEBUG
void FaultPoint(std::string_view point) {
  const char* fault = std::getenv("WEIR_TEST_WAL_FAULT");
  if (fault == nullptr || point != fault) return;
  std::fprintf(stderr, "WEIR_TEST_WAL_FAULT=%s: exiting here\n", fault);
  std::fflush(stderr);
  std::_Exit(137);
}

void FaultPause(std::string_view point) {
  const char* fault = std::getenv("WEIR_TEST_WAL_FAULT");
  if (fault == nullptr || point != fault) return;
  std::fprintf(stderr, "WEIR_TEST_WAL_FAULT=%s: pausing 5 s here\n", fault);
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::seconds(5));
}
#endif

}  // namespace weir::wal
