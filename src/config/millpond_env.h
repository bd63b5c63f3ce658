// The millpond environment contract, accepted as-is for a single-dataset DuckLake deployment.
//
// Most millpond variables are the `millpond_env` of a setting in the table; this file adds the
// few with extra meaning (REPLICA_COUNT implies static assignment, DUCKLAKE_RDS_HOST a
// PostgreSQL catalog, FLUSH_INTERVAL_MS is in milliseconds, KAFKA_CONSUMER_* are librdkafka
// properties) and the ones weir refuses or does not use.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/raw_layer.h"

namespace weir::config {

// What weir does with a millpond variable that is not a plain alias of one setting.
enum class MillpondHandling { kSpecial, kRefused, kIgnored };

struct MillpondVariable {
  std::string_view name;  // a variable, or a prefix ending in '*'
  MillpondHandling handling;
  std::string_view note;  // what it becomes, or why it is refused / not used
};

// The variables beyond the table's aliases, in documentation order.
const std::vector<MillpondVariable>& MillpondVariables();

struct MillpondEnvironment {
  RawLayer layer;
  bool contract_used = false;  // KAFKA_TOPIC or DUCKLAKE_TABLE set: group id millpond-<t>-<t>
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

// A librdkafka property from an environment suffix: SECURITY_PROTOCOL → security.protocol.
std::string LibrdkafkaPropertyName(std::string_view suffix);

// Reads the millpond variables of `environment` into a layer; refused variables are errors,
// unused ones and unknown MILLPOND_* variables are warnings.
MillpondEnvironment ReadMillpondEnvironment(const std::map<std::string, std::string>& environment);

}  // namespace weir::config
