// Loading the settings of `weir ingest`, `weir maintain` and `weir serve` from YAML, the
// environment and --set overrides.
//
// Precedence, lowest first: defaults < YAML < millpond environment < WEIR_ environment < --set.
// Each command reads its own settings and those it shares (config/setting_table.h); the other
// command's settings in the same file or environment are left alone, so one file and one
// environment can configure both. Everything is read from LoadInput (never from the process
// directly), so tests stay hermetic. Call before any thread starts; nothing here has side
// effects.
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

struct LoadedServeSettings {
  ServeSettings settings;
  std::vector<std::string> warnings;  // unknown WEIR_ variables
};

// Loads and validates. All problems come back together in one Invalid status, one per line,
// each naming the setting, the value and where it came from.
Result<LoadedSettings> LoadIngestSettings(const LoadInput& in);

// The same settings for `weir maintain`, which needs only the lake: kafka.* and datasets are
// read when given (a shared file) but not required, the rules between kafka.* settings are
// left to weir ingest, and dataset settings given without a dataset and without a `table`
// (WEIR_MAINTAIN_EXPIRE_INTERVAL, --set maintain.target_file_size=256MiB) are
// `IngestSettings::every_table`, the settings of every table of the lake.
Result<LoadedSettings> LoadMaintainSettings(const LoadInput& in);

// The same for `weir serve`: serve.*, and the catalog.*, storage.s3_* and log.* settings it
// shares with ingest. Of the millpond environment it takes only those shared settings (its
// refusals concern ingest). A setting of ingest only given with --set is an error.
Result<LoadedServeSettings> LoadServeSettings(const LoadInput& in);

// The process environment (environ) as a map.
std::map<std::string, std::string> EnvironmentMap();

// Adds one `--set name=value` argument to `overrides`; Invalid when there is no '='.
Status AddOverride(std::string_view argument, std::map<std::string, std::string>* overrides);

}  // namespace weir::config
