// Fault points for the WAL kill-loop tests: in a debug build, a process whose WEIR_TEST_WAL_FAULT
// environment variable names `point` exits at once (status 137, as a SIGKILL would leave it)
// when it reaches it. Release builds compile it to nothing.
//   exit_after_rename   a rotation's files are ready_*, its Kafka offset not committed
//   exit_after_upload   a dataset's ready files are uploaded, the table commit not made
//   exit_after_commit   the table commit landed, the local files not deleted
//   exit_after_rejects_commit  (a table that does not commit its companion: Iceberg) the
//                       rejects table's commit landed, the rows' commit not made
// FaultPause waits instead, for a test to break something at that moment:
//   pause_before_recovery  5 s before WAL recovery reads the lake (after the startup probes)
#pragma once

#include <string_view>

namespace weir::wal {

#ifdef NDEBUG
inline void FaultPoint(std::string_view) {}
inline void FaultPause(std::string_view) {}
#else
void FaultPoint(std::string_view point);
void FaultPause(std::string_view point);
#endif

}  // namespace weir::wal
