// The start of every command that takes settings: load them (file, environment, --set), set up
// logging from them, and log the loader's warnings.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "base/logging.h"
#include "config/load.h"

namespace weir::app {

// `load` is config::LoadIngestSettings or config::LoadServeSettings. Prints the problem to
// `err` (prefixed with `command`) and returns nullopt on failure.
template <typename Load>
auto LoadSettings(Load load, const std::optional<std::string>& config_path,
                  const std::map<std::string, std::string>& overrides, std::string_view command,
                  std::ostream& err) -> std::optional<decltype(load({})->settings)> {
  config::LoadInput input;
  input.yaml_path = config_path;
  input.environment = config::EnvironmentMap();
  input.overrides = overrides;
  auto loaded = load(input);
  if (!loaded.ok()) {
    err << command << ": invalid configuration:\n" << loaded.status().message() << "\n";
    return std::nullopt;
  }
  const auto& s = loaded->settings;
  const Status logging =
      ConfigureLogging(s.log_level, s.log_format == "json" ? LogFormat::kJson : LogFormat::kText);
  if (!logging.ok()) {
    err << command << ": " << logging.message() << "\n";
    return std::nullopt;
  }
  for (const auto& warning : loaded->warnings) spdlog::warn("{}", warning);
  return s;
}

}  // namespace weir::app
