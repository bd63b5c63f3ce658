// The YAML configuration file as a RawLayer: keys checked against the settings table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/raw_layer.h"

namespace weir::config {

struct YamlSource {
  RawLayer layer;                   // datasets by position
  std::vector<std::string> errors;  // unknown keys, wrong shapes, YAML syntax
  bool not_yaml = false;            // a syntax error: nothing was read (and errors says where)
};

// Reads YAML `text`; `source` names it in origins and errors ("weir.yaml").
YamlSource ReadYaml(std::string_view text, std::string_view source);

}  // namespace weir::config
