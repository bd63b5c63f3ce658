#include "config/yaml_source.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/setting_table.h"

namespace weir::config {
namespace {

class YamlReader {
 public:
  YamlReader(std::string_view source, YamlSource* out) : source_(source), out_(out) {}

  void ReadRoot(const YAML::Node& root) {
    if (root.IsNull()) return;
    if (!root.IsMap()) {
      Error(root, "", "the top level must be a mapping of settings");
      return;
    }
    ReadMap(root, Scope::kProcess, "", "", &out_->layer.process);
  }

 private:
  // Reads the keys of `node`; `prefix` is the setting path so far, `shown` prefixes paths in
  // errors ("datasets[1].").
  void ReadMap(const YAML::Node& node, Scope scope, const std::string& prefix,
               const std::string& shown, RawValues* values) {
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      const YAML::Node& value = entry.second;
      if (scope == Scope::kProcess && path == "datasets") {
        ReadDatasets(value);
      } else if (const Setting* setting = FindSetting(scope, path)) {
        ReadValue(*setting, value, shown + path, values);
      } else if (IsSettingPrefix(scope, path) && value.IsMap()) {
        ReadMap(value, scope, path, shown, values);
      } else if (IsSettingPrefix(scope, path)) {
        Error(value, shown + path, "must be a mapping");
      } else {
        Error(entry.first, shown + path, "unknown key");
      }
    }
  }

  void ReadDatasets(const YAML::Node& node) {
    if (node.IsNull()) return;
    if (!node.IsSequence()) {
      Error(node, "datasets", "must be a list of datasets");
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string shown = fmt::format("datasets[{}].", i);
      RawValues& values = out_->layer.datasets.emplace_back();
      if (!node[i].IsMap()) {
        Error(node[i], shown.substr(0, shown.size() - 1), "must be a mapping of settings");
        continue;
      }
      ReadMap(node[i], Scope::kDataset, "", shown, &values);
    }
  }

  void ReadValue(const Setting& setting, const YAML::Node& node, const std::string& shown,
                 RawValues* values) {
    if (node.IsNull()) return;  // `key:` with nothing: unset
    RawValue raw;
    raw.origin = fmt::format("{} line {}", source_, node.Mark().line + 1);
    if (setting.type == SettingType::kStringList && node.IsSequence()) {
      raw.items.emplace();
      for (const auto& item : node) {
        if (!item.IsScalar()) {
          Error(item, shown, "items must be scalars");
          return;
        }
        raw.items->push_back(item.Scalar());
      }
    } else if (setting.type == SettingType::kStringMap) {
      if (!node.IsMap()) {
        Error(node, shown, "must be a mapping of names to values");
        return;
      }
      raw.entries.emplace();
      for (const auto& entry : node) {
        if (!entry.second.IsScalar()) {
          Error(entry.second, shown + "." + entry.first.as<std::string>(), "must be a scalar");
          return;
        }
        (*raw.entries)[entry.first.as<std::string>()] = entry.second.Scalar();
      }
    } else if (node.IsScalar()) {
      raw.text = node.Scalar();
    } else {
      Error(node, shown, "must be a single value");
      return;
    }
    (*values)[std::string(setting.name)] = std::move(raw);
  }

  void Error(const YAML::Node& node, const std::string& path, std::string_view problem) {
    out_->errors.push_back(fmt::format("{}: {} ({} line {})", path.empty() ? "(top level)" : path,
                                       problem, source_, node.Mark().line + 1));
  }

  std::string source_;
  YamlSource* out_;
};

}  // namespace

YamlSource ReadYaml(std::string_view text, std::string_view source) {
  YamlSource out;
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    YamlReader(source, &out).ReadRoot(root);
  } catch (const YAML::Exception& e) {
    out = YamlSource{};
    out.errors.push_back(fmt::format("{}: not valid YAML: {}", source, e.what()));
    out.not_yaml = true;
  }
  return out;
}

}  // namespace weir::config
