// Setting values as one source gives them, before parsing: the common shape of YAML, the
// millpond environment, WEIR_ variables and --set overrides, so precedence is one merge.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weir::config {

struct RawValue {
  std::string text;                                           // a scalar, parsed by type
  std::optional<std::vector<std::string>> items;              // a YAML sequence
  std::optional<std::map<std::string, std::string>> entries;  // map entries (merged by key)
  std::string origin;  // "weir.yaml line 3", "WEIR_TOPIC", "FLUSH_SIZE (millpond)", "--set x"
};

// By setting name within its scope ("kafka.group_id", "flush.max_bytes").
using RawValues = std::map<std::string, RawValue>;

// One source's values. Dataset values come by position (YAML), for every dataset (unprefixed
// variables), or by dataset name (WEIR_DATASET_<NAME>_..., --set datasets.<name>....).
struct RawLayer {
  RawValues process;
  RawValues every_dataset;
  std::vector<RawValues> datasets;
  std::map<std::string, RawValues> named;
};

// Puts `value` over `into`: map entries merge by key, everything else is replaced.
inline void Overlay(const RawValue& value, RawValue* into) {
  if (value.entries && into->entries) {
    for (const auto& [key, item] : *value.entries) (*into->entries)[key] = item;
    into->origin = value.origin;
    return;
  }
  *into = value;
}

}  // namespace weir::config
