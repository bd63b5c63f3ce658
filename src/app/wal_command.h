// `weir wal`: look at the write-ahead log of WAL mode (ingest.mode wal) without changing it.
//   ls     every dataset's segment files (wal.dir/<dataset>/): state, topic, partition, offset
//          range, size; files that are not segments are listed as unknown
//   check  what recovery would do at the next start (src/wal/recovery.h), reading the group's
//          committed Kafka offsets and the lake, and doing nothing; exit 1 when recovery would
//          refuse to start (the message names the files) or the offsets cannot be read
// --json prints the same as JSON.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>

namespace weir::app {

struct WalArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set
  std::string action = "ls";
  bool json = false;
};

int RunWal(const WalArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
