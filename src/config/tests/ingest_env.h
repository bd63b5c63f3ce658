// The smallest environment an ingest configuration loads from (one topic into one table): the
// settings tests add the variables under test to it.
#pragma once

#include <map>
#include <string>

#include "config/load.h"

namespace weir::config::test_env {

using Env = std::map<std::string, std::string>;

inline Result<LoadedSettings> Load(const Env& env) {
  LoadInput in;
  in.environment = env;
  in.environment["WEIR_KAFKA_BOOTSTRAP_SERVERS"] = "k:9092";
  in.environment["WEIR_TOPIC"] = "events";
  in.environment["WEIR_TABLE"] = "events";
  return LoadIngestSettings(in);
}

}  // namespace weir::config::test_env
