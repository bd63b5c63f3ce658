#include "config/describe.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/setting_table.h"
#include "config/setting_value.h"

namespace weir::config {
namespace {

// "  (from ORIGIN)" for a setting given a value, "  (derived)" for one that differs from its
// default by another setting's value, nullopt for one at its default.
std::optional<std::string> Provenance(const std::map<std::string, std::string>& origins,
                                      std::string_view name, const std::string& value,
                                      const std::string& default_value) {
  if (const auto it = origins.find(std::string(name)); it != origins.end()) {
    return fmt::format("  (from {})", it->second);
  }
  if (value != default_value) return std::string("  (derived)");
  return std::nullopt;
}

}  // namespace

std::string Describe(const IngestSettings& settings) {
  std::string out;
  for (const Setting& setting : SettingTable()) {
    if (setting.scope != Scope::kProcess || !UsedBy(setting, Command::kIngest)) continue;
    out += fmt::format("{} = {}\n", setting.name,
                       DisplayValue(setting, setting.get_process(settings)));
  }
  for (size_t i = 0; i < settings.datasets.size(); ++i) {
    for (const Setting& setting : SettingTable()) {
      if (setting.scope != Scope::kDataset) continue;
      out += fmt::format("datasets[{}].{} = {}\n", i, setting.name,
                         DisplayValue(setting, setting.get_dataset(settings.datasets[i])));
    }
  }
  if (settings.datasets.empty()) {  // weir maintain of every table of the lake
    for (const Setting& setting : SettingTable()) {
      if (setting.scope != Scope::kDataset) continue;
      out += fmt::format("tables[*].{} = {}\n", setting.name,
                         DisplayValue(setting, setting.get_dataset(settings.every_table)));
    }
  }
  return out;
}

std::string Describe(const ServeSettings& settings) {
  std::string out;
  for (const Setting& setting : SettingTable()) {
    if (!UsedBy(setting, Command::kServe)) continue;
    out +=
        fmt::format("{} = {}\n", setting.name, DisplayValue(setting, setting.get_serve(settings)));
  }
  return out;
}

std::string DescribeChanged(const IngestSettings& settings) {
  static const IngestSettings kDefaults;
  static const DatasetSettings kDatasetDefaults;
  std::string out;
  for (const Setting& setting : SettingTable()) {
    if (setting.scope != Scope::kProcess || !UsedBy(setting, Command::kIngest)) continue;
    const std::string value = DisplayValue(setting, setting.get_process(settings));
    const auto provenance = Provenance(settings.origins, setting.name, value,
                                       DisplayValue(setting, setting.get_process(kDefaults)));
    if (provenance) out += fmt::format("{} = {}{}\n", setting.name, value, *provenance);
  }
  for (size_t i = 0; i < settings.datasets.size(); ++i) {
    const DatasetSettings& dataset = settings.datasets[i];
    for (const Setting& setting : SettingTable()) {
      if (setting.scope != Scope::kDataset) continue;
      const std::string value = DisplayValue(setting, setting.get_dataset(dataset));
      const auto provenance =
          Provenance(dataset.origins, setting.name, value,
                     DisplayValue(setting, setting.get_dataset(kDatasetDefaults)));
      if (provenance)
        out += fmt::format("datasets[{}].{} = {}{}\n", i, setting.name, value, *provenance);
    }
  }
  if (settings.datasets.empty()) {  // weir maintain of every table of the lake
    for (const Setting& setting : SettingTable()) {
      if (setting.scope != Scope::kDataset) continue;
      const std::string value = DisplayValue(setting, setting.get_dataset(settings.every_table));
      const auto provenance =
          Provenance(settings.every_table.origins, setting.name, value,
                     DisplayValue(setting, setting.get_dataset(kDatasetDefaults)));
      if (provenance) out += fmt::format("tables[*].{} = {}{}\n", setting.name, value, *provenance);
    }
  }
  return out;
}

std::string DescribeChanged(const ServeSettings& settings) {
  static const ServeSettings kDefaults;
  std::string out;
  for (const Setting& setting : SettingTable()) {
    if (!UsedBy(setting, Command::kServe)) continue;
    const std::string value = DisplayValue(setting, setting.get_serve(settings));
    const auto provenance = Provenance(settings.origins, setting.name, value,
                                       DisplayValue(setting, setting.get_serve(kDefaults)));
    if (provenance) out += fmt::format("{} = {}{}\n", setting.name, value, *provenance);
  }
  return out;
}

}  // namespace weir::config
