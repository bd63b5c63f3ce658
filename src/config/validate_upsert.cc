#include "config/validate_upsert.h"

#include <set>

#include <fmt/format.h>

#include "config/validate.h"

namespace weir::config {

std::vector<std::pair<std::string, std::string>> UpsertSettingProblems(
    const DatasetSettings& dataset) {
  std::vector<std::pair<std::string, std::string>> problems;
  const UpsertSettings& upsert = dataset.upsert;
  if (upsert.key.empty()) {
    if (upsert.key_from != "value") {
      problems.emplace_back("upsert.key_from",
                            fmt::format("value \"{}\" needs upsert.key (the key JSON's fields "
                                        "that make the key)",
                                        upsert.key_from));
    }
    if (upsert.iceberg_deletes != IcebergDeletes::kEquality) {
      problems.emplace_back("upsert.iceberg_deletes",
                            "value \"deletion_vectors\" needs upsert.key (only upserts delete)");
    }
    return problems;
  }
  std::set<std::string> keys;
  for (const std::string& key : upsert.key) {
    if (!IsIdentifier(key)) {
      problems.emplace_back(
          "upsert.key",
          fmt::format("value \"{}\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)", key));
    } else if (key == "_inserted_at") {
      problems.emplace_back("upsert.key",
                            "column \"_inserted_at\" is the commit time, not a key column");
    } else if (!keys.insert(key).second) {
      problems.emplace_back("upsert.key", fmt::format("column \"{}\" is listed twice", key));
    }
  }
  // A key's rows must all lie in one partition, so that the delete of its older rows and the
  // insert of its new one meet in the same files' partition.
  std::vector<std::string> outside;
  for (const std::string& text : dataset.partition_by) {
    const auto partition = ParsePartitionKey(text);
    if (partition && !keys.count(partition->column)) outside.push_back(partition->column);
  }
  if (!outside.empty()) {
    problems.emplace_back(
        "partition_by",
        fmt::format("partition source column(s) {} are not in upsert.key ({}): every "
                    "partition source column of an upsert dataset must be a key column",
                    fmt::join(outside, ", "), fmt::join(upsert.key, ", ")));
  }
  if (!dataset.route.template_text.empty()) {
    problems.emplace_back("route.template", "an upsert dataset (upsert.key) cannot be routed");
  }
  if (!dataset.mapping.empty() && upsert.key_from == "kafka_key") {
    problems.emplace_back("upsert.key_from",
                          "value \"kafka_key\" cannot be combined with mapping (the key fields "
                          "are added to the record before it is decoded)");
  }
  return problems;
}

}  // namespace weir::config
