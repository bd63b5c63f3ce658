// The settings table: every setting of `weir ingest` and `weir serve` declared once.
//
// Loading (config/load.h), validation, Describe and docs/CONFIGURATION.md all read this table.
// A setting's default is the value of its field in a default-constructed IngestSettings /
// DatasetSettings / ServeSettings (config/settings.h); the table reads it back through `get`.
// Settings that mean the same to both commands (the catalog, S3 credentials, logging) are
// declared once and bound to a field of each.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/settings.h"

namespace weir::config {

enum class SettingType { kString, kInt, kBool, kBytes, kDuration, kEnum, kStringList, kStringMap };

// Process settings apply once; dataset settings apply to each entry of `datasets:`.
enum class Scope { kProcess, kDataset };

// The commands that read settings: `weir ingest` (and `weir check`, `weir wal`), `weir serve`,
// and `weir maintain`, which reads ingest's settings but needs only the lake's.
enum class Command { kIngest, kServe, kMaintain };

// A set of commands: those that cannot run without a setting (Setting::required).
class CommandSet {
 public:
  constexpr CommandSet() = default;
  constexpr CommandSet(std::initializer_list<Command> commands) {
    for (const Command command : commands) bits_ |= Bit(command);
  }
  constexpr bool Has(Command command) const { return (bits_ & Bit(command)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }

 private:
  static constexpr unsigned Bit(Command command) { return 1u << static_cast<unsigned>(command); }
  unsigned bits_ = 0;
};

// What a command needs of a configuration beyond its required settings, declared once here and
// applied by loading and validation.
struct CommandNeeds {
  // At least one dataset; dataset settings given without a dataset (WEIR_TOPIC, --set
  // flush.interval=1s) describe one. Without this need (weir maintain) they describe one only
  // with its `table`, and otherwise apply to every table of the lake (IngestSettings::
  // every_table).
  bool datasets = false;
  // Kafka is read: the rules between kafka.* settings are checked and kafka.ordinal derived.
  // Without it kafka.* values are parsed (a shared file's typo is still one) and left alone.
  bool kafka = false;
};

CommandNeeds NeedsOf(Command command);

// How Describe prints a value: as is, fully masked, or with the password of a conninfo masked.
enum class Secrecy { kPublic, kSecret, kConninfo };

// A parsed value. kInt and kBytes are int64_t, kEnum is the canonical allowed value.
using Value = std::variant<std::string, int64_t, bool, std::chrono::milliseconds,
                           std::vector<std::string>, std::map<std::string, std::string>>;

struct Setting {
  std::string_view name;  // dotted YAML path, relative to its scope ("flush.max_bytes")
  Scope scope = Scope::kProcess;
  SettingType type = SettingType::kString;
  CommandSet required;         // the commands that stop when it is not set (it has no default)
  std::optional<int64_t> min;  // bounds of kInt / kBytes (milliseconds for kDuration)
  std::optional<int64_t> max;
  std::vector<std::string_view> allowed;                               // kEnum values, lower case
  std::vector<std::pair<std::string_view, std::string_view>> aliases;  // accepted → canonical
  std::string_view millpond_env;  // the millpond variable for it, if any
  std::string_view default_note;  // replaces the rendered default when it is computed
  Secrecy secrecy = Secrecy::kPublic;
  bool env = true;  // settable from WEIR_ variables
  // kStringMap: the keys are column names (a variable's key is lower-cased and keeps its `_`),
  // not librdkafka property names (lower-cased with `_` → `.`).
  bool keys_are_columns = false;
  std::string_view description;
  // The fields it binds to: a dataset setting has the dataset pair; a process setting the
  // process pair (read by weir ingest), the serve pair (read by weir serve), or both.
  void (*set_process)(IngestSettings&, const Value&) = nullptr;
  Value (*get_process)(const IngestSettings&) = nullptr;
  void (*set_dataset)(DatasetSettings&, const Value&) = nullptr;
  Value (*get_dataset)(const DatasetSettings&) = nullptr;
  void (*set_serve)(ServeSettings&, const Value&) = nullptr;
  Value (*get_serve)(const ServeSettings&) = nullptr;
};

// Every setting, in documentation order.
const std::vector<Setting>& SettingTable();

// The setting named `name` in `scope`, or nullptr.
const Setting* FindSetting(Scope scope, std::string_view name);

// True when some setting of `scope` is nested under `prefix` ("kafka", "flush").
bool IsSettingPrefix(Scope scope, std::string_view prefix);

// True when `command` reads the setting.
bool UsedBy(const Setting& setting, Command command);
// True when `command` cannot run without the setting set.
bool IsRequired(const Setting& setting, Command command);

// The setting's default value: its field in default-constructed settings of a command that
// reads it.
Value DefaultValue(const Setting& setting);

// The full name in docs: "kafka.group_id", "datasets[].flush.max_bytes".
std::string FullName(const Setting& setting);

// The WEIR_ variable: WEIR_KAFKA_BOOTSTRAP_SERVERS; dataset settings without the dataset
// (WEIR_FLUSH_MAX_BYTES); map settings are a prefix (WEIR_KAFKA_PROPERTIES_). Empty when the
// setting has no variable.
std::string EnvName(const Setting& setting);

// The per-dataset form, "WEIR_DATASET_<NAME>_" + suffix: the suffix for a dataset setting.
std::string DatasetEnvSuffix(const Setting& setting);

// The map key a variable's suffix stands for: a column name (MAPPING_USER_ID → user_id) or a
// librdkafka property (SECURITY_PROTOCOL → security.protocol).
std::string EnvMapKey(const Setting& setting, std::string_view suffix);

// Upper case with every character outside [A-Za-z0-9] turned into '_' ("my-events" → MY_EVENTS).
std::string EnvToken(std::string_view text);

}  // namespace weir::config
