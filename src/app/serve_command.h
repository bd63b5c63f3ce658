// `weir serve`: the PostgreSQL wire endpoint over the lake, configured by the serve.* settings
// (and the catalog, S3 and log settings it shares with ingest; config/load.h).
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>

namespace weir::app {

struct ServeArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set and the shortcut flags
  std::string add_user;                          // add (or replace) this user, then exit
  std::string role = "write";                    // the added user's role: read or write
};

// Loads and checks the settings (exit 1 naming the bad ones), then serves until SIGTERM/SIGINT;
// with add_user, adds the user and exits. Returns the process exit code.
int RunServe(const ServeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
