// Loading `weir ingest` settings from YAML, the environment and --set overrides.
//
// Precedence, lowest first: defaults < YAML < millpond environment < WEIR_ environment < --set.
// Everything is read from LoadInput (never from the process directly), so tests stay hermetic.
// Call before any thread starts; nothing here has side effects.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/settings.h"

namespace weir::config {

struct LoadInput {
  std::optional<std::string> yaml_path;  // the configuration file, if any
  std::optional<std::string> yaml_text;  // YAML given inline (tests); used instead of the file
  std::map<std::string, std::string> environment;  // see EnvironmentMap()
  std::map<std::string, std::string> overrides;    // setting name → value, from --set
};

struct LoadedSettings {
  IngestSettings settings;
  // Things worth a log line that do not stop the start: unknown WEIR_ variables, millpond
  // variables weir does not use, unknown MILLPOND_ variables.
  std::vector<std::string> warnings;
};

// Loads and validates. All problems come back together in one Invalid status, one per line,
// each naming the setting, the value and where it came from.
Result<LoadedSettings> LoadIngestSettings(const LoadInput& in);

// The process environment (environ) as a map.
std::map<std::string, std::string> EnvironmentMap();

// Adds one `--set name=value` argument to `overrides`; Invalid when there is no '='.
Status AddOverride(std::string_view argument, std::map<std::string, std::string>* overrides);

}  // namespace weir::config
