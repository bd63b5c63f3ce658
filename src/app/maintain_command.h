// `weir maintain`: look after the tables of a lake. It needs only the lake's settings
// (lake.format, catalog.* or iceberg.*, storage.*: config::LoadMaintainSettings); kafka.* and
// datasets may be given (a file shared with weir ingest) and are not required. The tables: the
// datasets' (and their rejects tables), or without datasets every table of the lake; --table
// picks tables of the lake (maintain_lake.h MaintainedTables).
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
//   fsck --repair  also drop the entries of missing or damaged data files in one new snapshot
//            (maintain/repair.h says exactly what it changes; never the offset ledger)
//   compact  merge each partition's small files into files of --target-size (default: the
//            dataset's flush.target_file_size), rows in sort_by order, one rewrite snapshot per
//            merge run; old files stay for time travel until an expiry releases them
//   --serve  run until SIGTERM: the lake metrics on /metrics (maintain.http_port) and the
//            maintain.* policies of every dataset on their intervals (maintain_serve.cc)
// --older-than, --retain-last and --queue-window default to the table's maintain.* settings
// (its dataset's, or those given without a dataset for every table).
// --dry-run says what a destructive action would do; a destructive run from a terminal needs
// --yes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/settings.h"

namespace weir::app {

struct MaintainArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set and the shortcut flags
  std::string action = "stats";
  std::vector<std::string> datasets;  // --dataset; empty: every dataset
  std::vector<std::string> tables;    // --table; empty: as the configuration has it
  bool json = false;
  bool dry_run = false;
  bool yes = false;
  bool repair = false;       // fsck --repair
  bool serve = false;        // --serve
  std::string older_than;    // empty: the dataset's maintain.* setting
  int64_t retain_last = 0;   // 0: the dataset's maintain.expire.retain_last
  std::string queue_window;  // empty: the dataset's maintain.expire.queue_window
  std::string target_size;   // compact; empty: the dataset's flush.target_file_size
  // Whether a person is at the keyboard (destructive runs then need --yes); set by the CLI.
  bool interactive = false;
};

int RunMaintain(const MaintainArgs& args, std::ostream& out, std::ostream& err);

// `weir maintain --serve` on loaded settings (maintain_serve.cc); `only` and `tables` are
// --dataset and --table.
int RunMaintainServe(const config::IngestSettings& settings, const std::vector<std::string>& only,
                     const std::vector<std::string>& tables, std::ostream& err);

}  // namespace weir::app
