// `weir ingest`: settings → catalog, storage and broker checks → pipeline.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/settings.h"
#include "kafka/consumer_config.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/iceberg/iceberg_lake_catalog.h"

namespace weir::app {

struct IngestArgs {
  std::optional<std::string> config_path;
  std::map<std::string, std::string> overrides;  // --set and the shortcut flags
  // --from FILE...: ingest these files (or "-", standard input) instead of Kafka, then exit.
  std::vector<std::string> from;
  std::string dataset;  // --dataset: the one the files feed (needed when several are configured)
};

// The catalog writer's configuration from the settings (shared with `weir check`).
lake::ducklake::CatalogConfig MakeCatalogConfig(const config::IngestSettings& s);
// The Iceberg lake of lake.format iceberg (the embedded SQLite catalog by default).
lake::iceberg::IcebergLakeConfig MakeIcebergConfig(const config::IngestSettings& s);

// The Kafka consumer's configuration from the settings (the pipeline adds the topics).
kafka::ConsumerConfig MakeConsumerConfig(const config::IngestSettings& s);
// The bytes of `memory_budget` that librdkafka's consumer queue may hold, and one fetch response
// as much again: a sixteenth of the budget each, 4-32 MiB (16 MiB each of the default 256 MiB,
// which keeps up with a consumer at 800,000 events/s in bench_consume_ceiling).
int64_t KafkaPrefetchBytes(int64_t memory_budget);

// A dataset's partition_by as lake partition keys (the settings validated it already).
Result<std::vector<lake::PartitionKey>> PartitioningOf(const config::DatasetSettings& d);

// A dataset's Parquet settings and sort keys, as its flushes (and compaction) write files.
files::FileConfig FileConfigOf(const config::DatasetSettings& d);
std::vector<lake::SortKey> SortKeysOf(const config::DatasetSettings& d);

// Runs the pipeline until SIGTERM/SIGINT (then drains); returns the process exit code.
int RunIngest(const IngestArgs& args, std::ostream& out, std::ostream& err);

}  // namespace weir::app
