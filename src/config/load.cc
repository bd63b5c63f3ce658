#include "config/load.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "config/millpond_env.h"
#include "config/raw_layer.h"
#include "config/setting_table.h"
#include "config/setting_value.h"
#include "config/validate.h"
#include "config/yaml_source.h"

extern char** environ;

namespace weir::config {
namespace {

constexpr std::string_view kWeirPrefix = "WEIR_";
constexpr std::string_view kDatasetPrefix = "WEIR_DATASET_";
constexpr std::string_view kTestPrefix = "WEIR_TEST_";  // the test harness's own variables
// Secrets weir serve reads when it creates a user (the first one, --add-user): never settings,
// so never in a file or on a command line.
constexpr std::string_view kServeSecrets[] = {"WEIR_SERVE_PASSWORD", "WEIR_SERVE_NEW_PASSWORD"};

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

struct Problems {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

// The names by which --set and WEIR_DATASET_<NAME>_ address YAML datasets: name, else table.
std::vector<std::string> DatasetKeys(const RawLayer& yaml) {
  std::vector<std::string> keys;
  for (const RawValues& values : yaml.datasets) {
    auto it = values.find("name");
    if (it == values.end()) it = values.find("table");
    keys.push_back(it == values.end() ? "" : it->second.text);
  }
  return keys;
}

RawValue Raw(std::string text, std::string origin) {
  RawValue raw;
  raw.text = std::move(text);
  raw.origin = std::move(origin);
  return raw;
}

void PutEntry(std::string key, std::string text, std::string origin, RawValue* raw) {
  if (!raw->entries) raw->entries.emplace();
  (*raw->entries)[std::move(key)] = std::move(text);
  raw->origin = std::move(origin);
}

// The dataset setting whose variable ends in `suffix` ("FLUSH_MAX_BYTES"), or nullptr.
const Setting* DatasetSettingBySuffix(std::string_view suffix) {
  for (const Setting& setting : SettingTable()) {
    if (setting.scope == Scope::kDataset && setting.env && DatasetEnvSuffix(setting) == suffix) {
      return &setting;
    }
  }
  return nullptr;
}

// The dataset map setting one of whose entries `suffix` ("MAPPING_USER_ID") names, or nullptr.
const Setting* DatasetMapSettingOf(std::string_view suffix) {
  for (const Setting& setting : SettingTable()) {
    if (setting.scope != Scope::kDataset || !setting.env ||
        setting.type != SettingType::kStringMap) {
      continue;
    }
    const std::string prefix = DatasetEnvSuffix(setting);
    if (StartsWith(suffix, prefix) && suffix.size() > prefix.size()) return &setting;
  }
  return nullptr;
}

// The dataset map setting one of whose entries `name` ("mapping.user_id") names, or nullptr.
const Setting* DatasetMapSettingNamed(std::string_view name) {
  for (const Setting& setting : SettingTable()) {
    if (setting.scope != Scope::kDataset || setting.type != SettingType::kStringMap) continue;
    if (StartsWith(name, std::string(setting.name) + ".") &&
        name.size() > setting.name.size() + 1) {
      return &setting;
    }
  }
  return nullptr;
}

void ReadDatasetVariable(const std::string& name, const std::string& text,
                         const std::vector<std::string>& keys, RawLayer* layer,
                         Problems* problems) {
  const std::string_view rest = std::string_view(name).substr(kDatasetPrefix.size());
  const std::string* best = nullptr;
  for (const std::string& key : keys) {
    const std::string token = EnvToken(key) + "_";
    if (!key.empty() && StartsWith(rest, token) &&
        (best == nullptr || token.size() > EnvToken(*best).size() + 1)) {
      best = &key;
    }
  }
  if (best == nullptr) {
    problems->errors.push_back(
        fmt::format("{}: no dataset named like this (datasets: {})", name, fmt::join(keys, ", ")));
    return;
  }
  const std::string_view suffix = rest.substr(EnvToken(*best).size() + 1);
  if (const Setting* map = DatasetMapSettingOf(suffix)) {
    const std::string prefix = DatasetEnvSuffix(*map);
    PutEntry(EnvMapKey(*map, suffix.substr(prefix.size())), text, name,
             &layer->named[*best][std::string(map->name)]);
    return;
  }
  const Setting* setting = DatasetSettingBySuffix(suffix);
  if (setting == nullptr) {
    problems->errors.push_back(
        fmt::format("{}: \"{}\" is not a dataset setting (dataset \"{}\")", name, suffix, *best));
    return;
  }
  layer->named[*best][std::string(setting->name)] = Raw(text, name);
}

bool IsServeSecret(std::string_view name) {
  for (const std::string_view secret : kServeSecrets) {
    if (name == secret) return true;
  }
  return false;
}

// Why `command` refuses a --set of a setting only another command reads.
std::string_view OtherCommands(Command command) {
  switch (command) {
    case Command::kServe:
      return "a setting of weir ingest, not of weir serve";
    case Command::kMaintain:
      return "a setting of weir serve, not of weir maintain";
    case Command::kIngest:
      break;
  }
  return "a setting of weir serve, not of weir ingest";
}

// The variables of `command`'s settings. Those of the other command's settings are known but
// left alone; other WEIR_ variables are warnings. `keys` name the YAML datasets (ingest).
RawLayer ReadWeirEnvironment(const std::map<std::string, std::string>& environment, Command command,
                             const std::vector<std::string>& keys, Problems* problems) {
  RawLayer layer;
  for (const auto& [name, text] : environment) {
    if (!StartsWith(name, kWeirPrefix) || StartsWith(name, kTestPrefix) || IsServeSecret(name)) {
      continue;
    }
    bool matched = false;
    for (const Setting& setting : SettingTable()) {
      const std::string env = EnvName(setting);
      if (env.empty()) continue;
      const bool map_entry = setting.type == SettingType::kStringMap && StartsWith(name, env) &&
                             name.size() > env.size();
      if (!map_entry && name != env) continue;
      matched = true;
      if (!UsedBy(setting, command)) continue;
      RawValues& values = setting.scope == Scope::kDataset ? layer.every_dataset : layer.process;
      if (map_entry) {
        PutEntry(EnvMapKey(setting, std::string_view(name).substr(env.size())), text, env + "*",
                 &values[std::string(setting.name)]);
      } else {
        values[std::string(setting.name)] = Raw(text, name);
      }
    }
    if (matched) continue;
    if (StartsWith(name, kDatasetPrefix)) {
      if (command != Command::kServe) ReadDatasetVariable(name, text, keys, &layer, problems);
      continue;
    }
    problems->warnings.push_back(fmt::format("{} is not a weir setting (ignored)", name));
  }
  return layer;
}

RawLayer ReadOverrides(const std::map<std::string, std::string>& overrides, Command command,
                       const std::vector<std::string>& keys, Problems* problems) {
  RawLayer layer;
  for (const auto& [name, text] : overrides) {
    const std::string origin = "--set " + name;
    if (const Setting* setting = FindSetting(Scope::kProcess, name)) {
      if (UsedBy(*setting, command)) {
        layer.process[name] = Raw(text, origin);
      } else {
        problems->errors.push_back(fmt::format("{}: {}", origin, OtherCommands(command)));
      }
      continue;
    }
    if (command == Command::kServe) {
      const bool ingest = StartsWith(name, "kafka.properties.") || StartsWith(name, "datasets") ||
                          FindSetting(Scope::kDataset, name) != nullptr;
      problems->errors.push_back(
          fmt::format("{}: {}", origin, ingest ? OtherCommands(command) : "unknown setting"));
      continue;
    }
    if (StartsWith(name, "kafka.properties.") && name.size() > 17) {
      PutEntry(name.substr(17), text, origin, &layer.process["kafka.properties"]);
      continue;
    }
    std::string_view dataset_name = name;
    const std::string* target = nullptr;
    if (StartsWith(dataset_name, "datasets[].")) {
      dataset_name.remove_prefix(11);
    } else if (StartsWith(dataset_name, "datasets.")) {
      dataset_name.remove_prefix(9);
      for (const std::string& key : keys) {
        if (!key.empty() && StartsWith(dataset_name, key + ".")) target = &key;
      }
      if (target == nullptr) {
        problems->errors.push_back(fmt::format("{}: no dataset named like this (datasets: {})",
                                               origin, fmt::join(keys, ", ")));
        continue;
      }
      dataset_name.remove_prefix(target->size() + 1);
    }
    RawValues& values = target ? layer.named[*target] : layer.every_dataset;
    if (const Setting* map = DatasetMapSettingNamed(dataset_name)) {
      PutEntry(std::string(dataset_name.substr(map->name.size() + 1)), text, origin,
               &values[std::string(map->name)]);
      continue;
    }
    if (FindSetting(Scope::kDataset, dataset_name) == nullptr) {
      problems->errors.push_back(fmt::format("{}: unknown setting", origin));
      continue;
    }
    values[std::string(dataset_name)] = Raw(text, origin);
  }
  return layer;
}

std::variant<Value, std::string> ToValue(const Setting& setting, const RawValue& raw) {
  if (raw.items) {
    if (setting.type != SettingType::kStringList) return std::string("must be a single value");
    return Value(*raw.items);
  }
  if (raw.entries) return Value(*raw.entries);
  return ParseValue(setting, raw.text);
}

// libpq conninfo quoting: bare when safe, else single quotes with \ and ' escaped.
std::string ConninfoValue(const std::string& value) {
  bool bare = !value.empty();
  for (const char c : value) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '\\') bare = false;
  }
  if (bare) return value;
  std::string out = "'";
  for (const char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// The trailing "-<n>" of a StatefulSet pod name ("weir-3" → 3).
std::optional<int> OrdinalOf(const std::string& host) {
  const size_t dash = host.rfind('-');
  if (dash == std::string::npos || dash + 1 == host.size() || host.size() - dash > 6) {
    return std::nullopt;
  }
  int ordinal = 0;
  for (size_t i = dash + 1; i < host.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(host[i]))) return std::nullopt;
    ordinal = ordinal * 10 + (host[i] - '0');
  }
  return ordinal;
}

// The libpq conninfo of a PostgreSQL catalog given by its parts.
void DeriveCatalog(const RawValues& process, CatalogSettings* catalog, Problems* problems) {
  // A PostgreSQL setting with catalog.kind left unset means a PostgreSQL catalog (as
  // DUCKLAKE_RDS_HOST does): never a silent SQLite lake beside the one the user named.
  if (process.count("catalog.kind") == 0 && catalog->kind == CatalogKind::kSqlite) {
    for (const char* name : {"catalog.postgres_dsn", "catalog.postgres_host"}) {
      const auto it = process.find(name);
      if (it == process.end()) continue;
      catalog->kind = CatalogKind::kPostgres;
      problems->warnings.push_back(fmt::format(
          "catalog.kind: not set; postgres, implied by {} (from {})", name, it->second.origin));
      break;
    }
  }
  if (catalog->kind == CatalogKind::kPostgres && !catalog->postgres_host.empty()) {
    if (!catalog->postgres_dsn.empty()) {
      problems->errors.push_back(SettingError("catalog.postgres_dsn",
                                              "set either it or catalog.postgres_host, not both",
                                              "", process.at("catalog.postgres_dsn").origin));
    } else {
      catalog->postgres_dsn =
          fmt::format("host={} port={} dbname={} user={}", ConninfoValue(catalog->postgres_host),
                      catalog->postgres_port, ConninfoValue(catalog->postgres_database),
                      ConninfoValue(catalog->postgres_user));
      if (!catalog->postgres_password.empty()) {
        catalog->postgres_dsn += " password=" + ConninfoValue(catalog->postgres_password);
      }
    }
  }
}

// Defaults that depend on other settings or on the environment.
void Derive(const std::map<std::string, std::string>& environment, bool millpond_contract,
            const RawValues& process, Command command, IngestSettings* settings,
            Problems* problems) {
  for (DatasetSettings& dataset : settings->datasets) {
    if (dataset.name.empty()) dataset.name = dataset.table;
  }
  KafkaSettings& kafka = settings->kafka;
  if (process.count("kafka.group_id") == 0 && !settings->datasets.empty()) {
    const DatasetSettings& first = settings->datasets.front();
    kafka.group_id =
        fmt::format("{}-{}-{}", millpond_contract ? "millpond" : "weir", first.topic, first.table);
  }
  if (NeedsOf(command).kafka && kafka.assignment == Assignment::kStatic &&
      process.count("kafka.ordinal") == 0) {
    std::optional<int> ordinal;
    std::vector<std::string> tried;
    for (const char* variable : {"POD_NAME", "HOSTNAME"}) {
      const auto it = environment.find(variable);
      if (it == environment.end()) continue;
      tried.push_back(fmt::format("{} \"{}\"", variable, it->second));
      if ((ordinal = OrdinalOf(it->second))) break;
    }
    if (ordinal) {
      kafka.ordinal = *ordinal;
    } else {
      problems->errors.push_back(fmt::format(
          "kafka.ordinal: not set, and {} (static assignment needs the replica's ordinal: set "
          "kafka.ordinal / WEIR_KAFKA_ORDINAL, or run as a StatefulSet pod named <name>-<n>)",
          tried.empty() ? "neither POD_NAME nor HOSTNAME is set"
                        : fmt::format("{} has no trailing -<n>", fmt::join(tried, " nor "))));
    }
  }
  DeriveCatalog(process, &settings->catalog, problems);
}

std::string Label(const RawValues& values, size_t index) {
  for (const char* key : {"name", "table"}) {
    const auto it = values.find(key);
    if (it != values.end() && !it->second.text.empty()) return it->second.text;
  }
  return fmt::format("#{}", index + 1);
}

// The configuration file (or the inline YAML) as a layer; its problems go to `problems`. Only
// an unreadable file stops here.
Result<RawLayer> ReadConfigFile(const LoadInput& in, Problems* problems) {
  std::optional<std::string> text = in.yaml_text;
  std::string source = "config";
  if (!text && in.yaml_path) {
    source = *in.yaml_path;
    std::ifstream file(*in.yaml_path);
    if (!file) {
      return Status::Invalid(fmt::format("config file \"{}\": cannot be read", *in.yaml_path));
    }
    std::stringstream content;
    content << file.rdbuf();
    text = content.str();
  }
  if (!text) return RawLayer{};
  YamlSource read = ReadYaml(*text, source);
  // A file that is not YAML stops here: every "required, not set" that would follow is only
  // its consequence.
  if (read.not_yaml) return Status::Invalid(read.errors.front());
  problems->errors.insert(problems->errors.end(), read.errors.begin(), read.errors.end());
  return std::move(read.layer);
}

void Apply(const Setting& setting, const Value& value, IngestSettings* settings) {
  setting.set_process(*settings, value);
}
void Apply(const Setting& setting, const Value& value, ServeSettings* settings) {
  setting.set_serve(*settings, value);
}
constexpr Command CommandOf(const IngestSettings*) { return Command::kIngest; }
constexpr Command CommandOf(const ServeSettings*) { return Command::kServe; }

// Parses the merged process values into `settings`. Values of the other command's settings
// (from a file or environment both commands read) are left alone.
template <typename Settings>
void ParseProcess(const RawValues& process, Settings* settings, Origins* origins,
                  Problems* problems) {
  for (const auto& [name, raw] : process) {
    const Setting* setting = FindSetting(Scope::kProcess, name);
    if (!UsedBy(*setting, CommandOf(settings))) continue;
    auto value = ToValue(*setting, raw);
    if (const auto* problem = std::get_if<std::string>(&value)) {
      problems->errors.push_back(SettingError(name, *problem, "", raw.origin));
      continue;
    }
    Apply(*setting, std::get<Value>(value), settings);
    origins->process[name] = raw.origin;
  }
}

// Parses one dataset's merged values into `dataset` (its origins into `origins`); `label` names
// it in errors.
void ParseDataset(const RawValues& values, const std::string& label, DatasetSettings* dataset,
                  std::map<std::string, std::string>* origins, Problems* problems) {
  for (const auto& [name, raw] : values) {
    const Setting* setting = FindSetting(Scope::kDataset, name);
    auto value = ToValue(*setting, raw);
    if (const auto* problem = std::get_if<std::string>(&value)) {
      problems->errors.push_back(SettingError(name, *problem, label, raw.origin));
      continue;
    }
    setting->set_dataset(*dataset, std::get<Value>(value));
    (*origins)[name] = raw.origin;
  }
  // Compaction's tiers follow its target unless set: small below an eighth, large from half.
  MaintainSettings& maintain = dataset->maintain;
  if (!values.count("maintain.tiers.small")) {
    maintain.small_file_size = maintain.target_file_size / 8;
  }
  if (!values.count("maintain.tiers.large")) {
    maintain.large_file_size = maintain.target_file_size / 2;
  }
}

// weir ingest's and weir maintain's settings: the same sources, read by `command`'s needs.
Result<LoadedSettings> LoadSettingsOf(const LoadInput& in, Command command) {
  Problems problems;
  WEIR_ASSIGN_OR_RAISE(const RawLayer yaml, ReadConfigFile(in, &problems));
  const std::vector<std::string> keys = DatasetKeys(yaml);
  MillpondEnvironment millpond = ReadMillpondEnvironment(in.environment);
  problems.errors.insert(problems.errors.end(), millpond.errors.begin(), millpond.errors.end());
  problems.warnings = std::move(millpond.warnings);
  const RawLayer layers[] = {yaml, millpond.layer,
                             ReadWeirEnvironment(in.environment, command, keys, &problems),
                             ReadOverrides(in.overrides, command, keys, &problems)};

  // Merge in precedence order. Dataset settings given without a YAML dataset describe one
  // (weir ingest), or, for a command that needs no dataset, one only when they name its table;
  // otherwise they apply to every table of the lake.
  RawValues process;
  RawValues every_table;
  size_t count = yaml.datasets.size();
  for (const RawLayer& layer : layers) {
    if (count == 0 && !layer.every_dataset.empty() &&
        (NeedsOf(command).datasets || layer.every_dataset.count("table") > 0)) {
      count = 1;
    }
  }
  std::vector<RawValues> datasets(count);
  for (const RawLayer& layer : layers) {
    for (const auto& [name, raw] : layer.process) Overlay(raw, &process[name]);
    if (count == 0) {
      for (const auto& [name, raw] : layer.every_dataset) Overlay(raw, &every_table[name]);
    }
    for (size_t i = 0; i < count; ++i) {
      for (const auto& [name, raw] : layer.every_dataset) Overlay(raw, &datasets[i][name]);
      if (i < layer.datasets.size()) {
        for (const auto& [name, raw] : layer.datasets[i]) Overlay(raw, &datasets[i][name]);
      }
      const auto named = i < keys.size() ? layer.named.find(keys[i]) : layer.named.end();
      if (named != layer.named.end()) {
        for (const auto& [name, raw] : named->second) Overlay(raw, &datasets[i][name]);
      }
    }
  }

  // Parse.
  LoadedSettings loaded;
  IngestSettings& settings = loaded.settings;
  Origins origins;
  ParseProcess(process, &settings, &origins, &problems);
  for (size_t i = 0; i < datasets.size(); ++i) {
    ParseDataset(datasets[i], Label(datasets[i], i), &settings.datasets.emplace_back(),
                 &origins.datasets.emplace_back(), &problems);
  }
  ParseDataset(every_table, "", &settings.every_table, &origins.every_table, &problems);
  Derive(in.environment, millpond.contract_used, process, command, &settings, &problems);
  settings.origins = origins.process;
  for (size_t i = 0; i < settings.datasets.size(); ++i) {
    settings.datasets[i].origins = origins.datasets[i];
  }
  settings.every_table.origins = origins.every_table;
  for (std::string& error : ValidationErrors(settings, origins, command)) {
    problems.errors.push_back(std::move(error));
  }
  if (!problems.errors.empty()) {
    return Status::Invalid(fmt::format("{}", fmt::join(problems.errors, "\n")));
  }
  loaded.warnings = std::move(problems.warnings);
  return loaded;
}

}  // namespace

Result<LoadedSettings> LoadIngestSettings(const LoadInput& in) {
  return LoadSettingsOf(in, Command::kIngest);
}

Result<LoadedSettings> LoadMaintainSettings(const LoadInput& in) {
  return LoadSettingsOf(in, Command::kMaintain);
}

Result<LoadedServeSettings> LoadServeSettings(const LoadInput& in) {
  Problems problems;
  WEIR_ASSIGN_OR_RAISE(const RawLayer yaml, ReadConfigFile(in, &problems));
  const RawLayer layers[] = {yaml, ReadMillpondEnvironment(in.environment).layer,
                             ReadWeirEnvironment(in.environment, Command::kServe, {}, &problems),
                             ReadOverrides(in.overrides, Command::kServe, {}, &problems)};
  RawValues process;
  for (const RawLayer& layer : layers) {
    for (const auto& [name, raw] : layer.process) Overlay(raw, &process[name]);
  }
  LoadedServeSettings loaded;
  Origins origins;
  ParseProcess(process, &loaded.settings, &origins, &problems);
  DeriveCatalog(process, &loaded.settings.catalog, &problems);
  loaded.settings.origins = origins.process;
  for (std::string& error : ValidationErrors(loaded.settings, origins)) {
    problems.errors.push_back(std::move(error));
  }
  if (!problems.errors.empty()) {
    return Status::Invalid(fmt::format("{}", fmt::join(problems.errors, "\n")));
  }
  loaded.warnings = std::move(problems.warnings);
  return loaded;
}

std::map<std::string, std::string> EnvironmentMap() {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    environment.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return environment;
}

Status AddOverride(std::string_view argument, std::map<std::string, std::string>* overrides) {
  const size_t eq = argument.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status::Invalid(fmt::format(
        "--set \"{}\": expected <setting>=<value>, e.g. kafka.group_id=ingest", argument));
  }
  (*overrides)[std::string(argument.substr(0, eq))] = std::string(argument.substr(eq + 1));
  return Status::OK();
}

}  // namespace weir::config
