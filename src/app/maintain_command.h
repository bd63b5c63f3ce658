// `weir maintain`: look after the lake tables of an ingest configuration.
//   stats    files, rows, bytes, a file-size histogram, snapshots, the oldest snapshot's age and
//            orphans per table (a table, or --json)
//   fsck     stats, plus every live file looked up in the store: missing objects and objects
//            whose size differs from the catalog's (exit 1 when there is any)
//   orphans  delete the objects under a table's directory that no kept snapshot references and
//            that are older than --older-than (default 24h)
//   expire   remove snapshots older than --older-than (default 5d) beyond the newest
//            --retain-last (default 1), never a protected one (lake/inspection.h); Iceberg
//            deletes what only they referenced at once, DuckLake queues it and deletes what was
//            queued longer than --queue-window (default 24h) ago
//   compact  merge each partition's small files into files of --target-size (default: the
//            dataset's flush.target_file_size), rows in sort_by order, one rewrite snapshot per
//            merge run; old files stay for time travel until an expiry releases them
// --dry-run says what a destructive action would do; a destructive run from a terminal needs
// --yes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace weir::app {

struct MaintainArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set and the shortcut flags
  std::string action = "stats";
  std::vector<std::string> datasets;  // --dataset; empty: every dataset
  bool json = false;
  bool dry_run = false;
  bool yes = false;
  std::string older_than;  // empty: the action's default
  int64_t retain_last = 1;
  std::string queue_window = "24h";
  std::string target_size;  // compact; empty: the dataset's flush.target_file_size
  // Whether a person is at the keyboard (destructive runs then need --yes); set by the CLI.
  bool interactive = false;
};

int RunMaintain(const MaintainArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
