#include "config/validate_maintain.h"

#include <fmt/format.h>

namespace weir::config {

std::vector<std::pair<std::string, std::string>> MaintainSettingProblems(
    const DatasetSettings& dataset) {
  std::vector<std::pair<std::string, std::string>> problems;
  const MaintainSettings& m = dataset.maintain;
  if (m.small_file_size >= m.large_file_size) {
    problems.emplace_back("maintain.tiers.small",
                          fmt::format("value \"{}\" is not below maintain.tiers.large ({})",
                                      m.small_file_size, m.large_file_size));
  }
  if (m.large_file_size > m.target_file_size) {
    problems.emplace_back("maintain.tiers.large",
                          fmt::format("value \"{}\" is above maintain.target_file_size ({})",
                                      m.large_file_size, m.target_file_size));
  }
  // A policy that runs more often than once a second only loads the catalog.
  const std::pair<const char*, std::chrono::milliseconds> intervals[] = {
      {"maintain.compact.interval", m.compact_interval},
      {"maintain.compact.medium_interval", m.compact_medium_interval},
      {"maintain.expire.interval", m.expire_interval},
      {"maintain.orphans.interval", m.orphans_interval}};
  for (const auto& [name, value] : intervals) {
    if (value.count() > 0 && value.count() < 1000) {
      problems.emplace_back(
          name, fmt::format("value \"{}ms\" is below 1s (0 turns the policy off)", value.count()));
    }
  }
  return problems;
}

}  // namespace weir::config
