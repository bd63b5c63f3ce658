#include "config/describe.h"

#include <fmt/format.h>

#include "config/setting_table.h"
#include "config/setting_value.h"

namespace weir::config {

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

}  // namespace weir::config
