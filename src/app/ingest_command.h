// `weir ingest` and `weir check`: settings → catalog, storage and broker checks → pipeline.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>

namespace weir::app {

struct IngestArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set and the shortcut flags
};

// Runs the pipeline until SIGTERM/SIGINT (then drains); returns the process exit code.
int RunIngest(const IngestArgs& args, std::ostream& out, std::ostream& err);
// Validates the settings and probes broker, catalog and storage; returns the exit code.
int RunCheck(const IngestArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
