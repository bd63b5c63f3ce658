#include "app/ingest_command.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <random>

#include <arrow/util/thread_pool.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/cli.h"
#include "app/file_source_setup.h"
#include "app/load_settings.h"
#include "app/record_filters.h"
#include "app/s3_settings.h"
#include "app/stop_signals.h"
#include "app/version.h"
#include "base/clock.h"
#include "base/logging.h"
#include "base/uuid.h"
#include "config/describe.h"
#include "config/load.h"
#include "config/validate.h"
#include "decode/field_names.h"
#include "files/writer_defaults.h"
#include "ingest/memory_pools.h"
#include "ingest/pipeline.h"
#include "ingest/wal_pipeline.h"
#include "kafka/admin.h"
#include "lake/duckdb_engine.h"
#include "lake/ducklake/ducklake_catalog.h"
#include "lake/iceberg/iceberg_lake_catalog.h"
#include "observe/http_server.h"
#include "observe/status_model.h"
#include "records/dataset_mapping.h"
#include "records/metadata_columns.h"
#include "records/route.h"
#include "records/typed_columns.h"
#include "records/variant_columns.h"

namespace weir::app {
namespace {

// A dataset's metadata columns and routing (issue 14; validated with the settings already).
Status AddMetadataAndRoute(const config::IngestSettings& s, const config::DatasetSettings& d,
                           ingest::DatasetOptions& o) {
  if (!d.metadata_columns.empty()) {
    auto columns = records::ParseMetadataColumns(d.metadata_columns);
    if (!columns.ok()) {
      return Status::Invalid("datasets[", d.name,
                             "].metadata_columns: ", columns.status().message());
    }
    o.metadata_columns = std::move(*columns);
  }
  if (d.route.template_text.empty()) return Status::OK();
  auto parsed = records::ParseRouteTemplate(d.route.template_text);
  if (!parsed.ok()) {
    return Status::Invalid("datasets[", d.name, "].route.template: ", parsed.status().message());
  }
  ingest::RouteConfig route;
  route.rule.route = std::move(*parsed);
  route.rule.fallback = decode::FoldName(d.table);
  for (const auto& name : d.route.allow) route.rule.allow.insert(decode::FoldName(name));
  // Tables weir writes otherwise: every dataset's rejects table, the other datasets' tables.
  for (const auto& other : s.datasets) {
    route.rule.reserved.insert(decode::FoldName(other.table + "_rejects"));
    if (other.schema == d.schema && other.table != d.table) {
      route.rule.reserved.insert(decode::FoldName(other.table));
    }
  }
  route.max_tables = d.route.max_tables;
  for (const auto& column : o.metadata_columns) {
    route.keep_columns.insert(decode::FoldName(column.column));
  }
  for (const auto& column : o.typed_columns.columns()) {
    route.keep_columns.insert(decode::FoldName(column.column));
  }
  for (const auto& [column, expression] : d.mapping) {
    route.keep_columns.insert(decode::FoldName(column));
  }
  spdlog::info("dataset {}: rows routed by {} (at most {} tables{}), the rest to {}", d.name,
               d.route.template_text, route.max_tables,
               route.rule.allow.empty() ? "" : fmt::format(", {} allowed", route.rule.allow.size()),
               d.table);
  o.route = std::move(route);
  return Status::OK();
}

}  // namespace

Result<std::vector<lake::PartitionKey>> PartitioningOf(const config::DatasetSettings& d) {
  std::vector<lake::PartitionKey> keys;
  for (const auto& text : d.partition_by) {
    // Validated when the settings were loaded; the config stage owns the grammar.
    const auto key = config::ParsePartitionKey(text);
    if (!key) return Status::Invalid("datasets[", d.name, "].partition_by: \"", text, "\"");
    auto transform = lake::ParseTransform(key->transform);
    if (!transform.ok()) {
      return Status::Invalid("datasets[", d.name, "].partition_by: ", transform.status().message());
    }
    keys.push_back(lake::PartitionKey{key->column, *transform});
  }
  return keys;
}

files::FileConfig FileConfigOf(const config::DatasetSettings& d) {
  files::FileConfig file;
  file.codec = d.compression == "snappy" ? files::Codec::kSnappy
               : d.compression == "lz4"  ? files::Codec::kLz4
               : d.compression == "gzip" ? files::Codec::kGzip
               : d.compression == "none" ? files::Codec::kNone
                                         : files::Codec::kZstd;
  file.compression_level = d.compression_level;
  file.row_group_rows = d.row_group_rows;
  file.bloom_filter_columns = d.bloom_filter_columns;
  return file;
}

std::vector<lake::SortKey> SortKeysOf(const config::DatasetSettings& d) {
  std::vector<lake::SortKey> keys;
  for (const auto& column : d.sort_by) {
    // millpond's pre-write sort: ascending, nulls last (pyarrow's sort_indices default).
    keys.push_back(lake::SortKey{.column = column, .descending = false, .nulls_first = false});
  }
  return keys;
}

int64_t KafkaPrefetchBytes(int64_t memory_budget) {
  return std::clamp<int64_t>(memory_budget / 16, 4 << 20, 32 << 20);
}

kafka::ConsumerConfig MakeConsumerConfig(const config::IngestSettings& s) {
  kafka::ConsumerConfig k;
  // librdkafka's prefetch is part of memory_budget: its consumer queue and one fetch response
  // are bounded by KafkaPrefetchBytes each (kafka.properties, applied last, may say otherwise).
  const int64_t prefetch = KafkaPrefetchBytes(s.memory_budget_bytes);
  k.queued_max_messages_kbytes = prefetch / 1024;
  k.bootstrap_servers = s.kafka.bootstrap_servers;
  k.group_id = s.kafka.group_id;
  k.assignment = s.kafka.assignment == config::Assignment::kGroup
                     ? kafka::ConsumerConfig::Assignment::kGroup
                     : kafka::ConsumerConfig::Assignment::kStatic;
  k.replica_count = s.kafka.replica_count;
  k.ordinal = s.kafka.ordinal;
  k.auto_offset_reset = s.kafka.auto_offset_reset;
  k.isolation_level = s.kafka.isolation_level;
  k.group_protocol = s.kafka.group_protocol == "consumer"
                         ? kafka::ConsumerConfig::GroupProtocol::kConsumer
                         : kafka::ConsumerConfig::GroupProtocol::kClassic;
  k.fetch_min_bytes = s.kafka.fetch_min_bytes;
  k.fetch_max_wait_ms = s.kafka.fetch_max_wait_ms;
  k.properties = s.kafka.properties;
  k.properties.emplace("fetch.max.bytes", std::to_string(prefetch));
  k.statistics_interval = std::chrono::seconds(15);  // librdkafka's numbers on /metrics
  return k;
}

namespace {

Result<ingest::PipelineOptions> MakePipelineOptions(const config::IngestSettings& s) {
  ingest::PipelineOptions options;
  options.consumer = MakeConsumerConfig(s);
  // What the prefetch does not take bounds the buffers.
  options.memory_budget_bytes =
      s.memory_budget_bytes - 2 * KafkaPrefetchBytes(s.memory_budget_bytes);
  options.consume_batch_size = s.kafka.consume_batch_size;
  options.decode_threads = s.decode_threads;
  options.drain_timeout = s.drain_timeout;
  for (const auto& d : s.datasets) {
    ingest::DatasetOptions o;
    o.config.name = d.name;
    o.config.topic = d.topic;
    o.config.schema = d.schema;
    o.config.table = d.table;
    WEIR_ASSIGN_OR_RAISE(o.config.partitioning, PartitioningOf(d));
    o.config.sort_keys = SortKeysOf(d);
    o.config.rejects_enabled = d.rejects_enabled;
    o.config.rejects_payload_limit = d.rejects_payload_limit;
    o.config.file = FileConfigOf(d);
    o.config.target_file_size = d.flush.target_file_size;
    o.config.encode_lanes = d.flush.encode_lanes;
    o.config.commit_max_attempts = s.commit_max_attempts;
    o.config.upsert_key = d.upsert.key;
    o.config.upsert_deletion_vectors =
        d.upsert.iceberg_deletes == config::IcebergDeletes::kDeletionVectors;
    o.config.wal_bloom_sidecar = d.wal_bloom_sidecar;
    o.upsert_key_from_kafka_key = d.upsert.key_from == "kafka_key";
    o.flush_max_bytes = d.flush.max_bytes;
    o.flush_part_bytes = d.flush.part_bytes;
    o.flush_interval = d.flush.interval;
    o.decode.max_record_bytes = static_cast<size_t>(d.max_record_bytes);
    if (!d.mapping.empty()) {
      // Compiled once per dataset, shared by its decoder (validated with the settings already).
      auto mapping = records::CompileDatasetMapping(d.mapping);
      if (!mapping.ok()) {
        return Status::Invalid("datasets[", d.name, "].mapping: ", mapping.status().message());
      }
      o.mapping = std::move(*mapping);
      spdlog::info("dataset {}: {} mapped column(s)", d.name, o.mapping->size());
    }
    if (!d.typed_columns.empty()) {
      auto typed = records::ParseTypedColumns(d.typed_columns);
      if (!typed.ok()) {
        return Status::Invalid("datasets[", d.name, "].typed_columns: ", typed.status().message());
      }
      auto made = records::TypedColumns::Make(std::move(*typed));
      if (!made.ok()) {
        return Status::Invalid("datasets[", d.name, "].typed_columns: ", made.status().message());
      }
      o.typed_columns = std::move(*made);
    }
    WEIR_ASSIGN_OR_RAISE(o.filter, MakeStaticFilter(d));
    WEIR_RETURN_NOT_OK(AddMetadataAndRoute(s, d, o));
    if (!d.variant_columns.empty()) {
      auto variant = records::VariantColumns::Make(d.variant_columns);
      if (!variant.ok()) {
        return Status::Invalid("datasets[", d.name,
                               "].variant_columns: ", variant.status().message());
      }
      o.variant_columns = std::move(*variant);
    }
    options.datasets.push_back(std::move(o));
  }
  return options;
}

Status ProbeTopics(const config::IngestSettings& s) {
  for (const auto& d : s.datasets) {
    auto partitions = kafka::PartitionCount(s.kafka.bootstrap_servers, d.topic, s.startup_timeout);
    if (!partitions.ok()) {
      return WithContext(partitions.status(),
                         "dataset " + d.name + ", broker " + s.kafka.bootstrap_servers);
    }
    spdlog::info("topic ok: {} has {} partition(s) (dataset {} → {}.{})", d.topic, *partitions,
                 d.name, d.schema, d.table);
  }
  return Status::OK();
}

// An Iceberg lake: its catalog reachable (and, for SQL, the warehouse directory made), its
// storage writable.
Result<std::unique_ptr<lake::Catalog>> ProbeIceberg(const config::IngestSettings& s,
                                                    std::stop_token stop) {
  auto config = MakeIcebergConfig(s);
  config.stop = std::move(stop);
  auto catalog = lake::iceberg::IcebergLakeCatalog::Open(config);
  if (!catalog.ok()) {
    return WithContext(catalog.status(), s.iceberg.catalog == "rest"
                                             ? "iceberg.uri " + s.iceberg.uri
                                         : s.iceberg.postgres_dsn.empty()
                                             ? "iceberg.sqlite_path " + s.iceberg.sqlite_path
                                             : std::string("iceberg.postgres_dsn"));
  }
  if (s.iceberg.catalog == "rest") {
    spdlog::info("Iceberg REST catalog ok: {}", s.iceberg.uri);
  } else {
    spdlog::info("Iceberg SQL catalog ok: {} (warehouse {})",
                 s.iceberg.postgres_dsn.empty() ? s.iceberg.sqlite_path : "PostgreSQL",
                 (*catalog)->warehouse());
  }
  std::vector<std::pair<std::string, std::string>> tables;
  for (const auto& d : s.datasets) tables.emplace_back(d.schema, d.table);
  auto probed = (*catalog)->ProbeStorage(tables);
  if (!probed.ok()) return probed.status();
  for (const auto& location : *probed) {
    spdlog::info("storage ok: wrote, read and deleted a marker object under {}", location);
  }
  return std::unique_ptr<lake::Catalog>(std::move(*catalog));
}

// The startup checks of ingest: every topic present, then catalog reachable and storage
// writable (a marker object). The lake format is chosen here, once, from the configuration:
// the pipeline sees only lake::Catalog. `kafka` false (--from): no topic is probed.
Result<std::unique_ptr<lake::Catalog>> ProbeLake(const config::IngestSettings& s,
                                                 std::stop_token stop, bool kafka) {
  // The topics first: a missing topic or an unreachable broker stops the start before the
  // catalog (and with it a new lake) is created.
  if (kafka) WEIR_RETURN_NOT_OK(ProbeTopics(s));
  if (s.lake_format == "iceberg") return ProbeIceberg(s, std::move(stop));
  auto config = MakeCatalogConfig(s);
  config.stop = std::move(stop);
  auto catalog = lake::ducklake::DuckLakeCatalog::Open(config);
  if (!catalog.ok()) {
    return WithContext(catalog.status(),
                       s.catalog.kind == config::CatalogKind::kSqlite
                           ? "catalog.sqlite_path " + s.catalog.sqlite_path
                           : std::string("catalog.postgres_dsn (or catalog.postgres_*)"));
  }
  spdlog::info(
      "catalog ok: {} (data path {})",
      s.catalog.kind == config::CatalogKind::kSqlite ? s.catalog.sqlite_path : "PostgreSQL",
      (*catalog)->store().uri());
  UuidV7Generator ids(Clock::System(), std::random_device{}());
  const std::string marker = ".weir-probe-" + ids.Next().ToString();
  auto probed = (*catalog)->store().Probe(marker);
  if (!probed.ok()) {
    return WithContext(
        probed, "storage.data_path " + (*catalog)->store().uri() + " (writing a marker object)");
  }
  spdlog::info("storage ok: wrote, read and deleted {}{}", (*catalog)->store().uri(), marker);
  return std::unique_ptr<lake::Catalog>(std::move(*catalog));
}

}  // namespace

lake::iceberg::IcebergLakeConfig MakeIcebergConfig(const config::IngestSettings& s) {
  lake::iceberg::IcebergLakeConfig c;
  const auto& i = s.iceberg;
  c.type =
      i.catalog == "rest" ? lake::iceberg::CatalogType::kRest : lake::iceberg::CatalogType::kSql;
  c.sqlite_path = i.sqlite_path;
  c.postgres_conninfo = i.postgres_dsn;
  c.catalog_name = i.catalog_name;
  c.warehouse = i.warehouse.empty() ? "weir-lake/warehouse" : i.warehouse;
  c.rest.uri = i.uri;
  c.rest.warehouse = i.warehouse;
  c.rest.token = i.token;
  c.rest.credential = i.credential;
  c.storage = StorageAccessOf(s.storage);
  c.max_attempts = s.commit_max_attempts;
  c.open_deadline = s.startup_timeout;
  return c;
}

lake::ducklake::CatalogConfig MakeCatalogConfig(const config::IngestSettings& s) {
  lake::ducklake::CatalogConfig c;
  c.kind = s.catalog.kind == config::CatalogKind::kSqlite ? lake::ducklake::SqlDialect::kSqlite
                                                          : lake::ducklake::SqlDialect::kPostgres;
  c.sqlite_path = s.catalog.sqlite_path;
  c.postgres_conninfo = s.catalog.postgres_dsn;
  c.data_path = s.storage.data_path;
  c.s3 = S3SettingsOf(s.storage);
  c.azure = AzureSettingsOf(s.storage);
  c.extension_directory = lake::ExtensionDirectory(s.duckdb_extension_dir);
  c.max_attempts = s.commit_max_attempts;
  c.open_deadline = s.startup_timeout;
  return c;
}

namespace {

ingest::WalModeOptions MakeWalModeOptions(const config::IngestSettings& s) {
  ingest::WalModeOptions w;
  w.dir = s.wal.dir;
  w.limits.max_file_bytes = s.wal.max_file_size;
  w.limits.max_age = s.wal.max_file_age;
  w.limits.max_open_segments = s.wal.max_open_segments_per_partition;
  w.disk_high_watermark_pct = s.wal.disk_high_watermark_pct;
  w.commit_interval = s.wal.commit_interval;
  w.recovery_deadline = s.startup_timeout;
  // The design checks ages every 30 s; a shorter wal.max_file_age is checked that often.
  w.age_check_interval =
      std::min<std::chrono::milliseconds>(w.age_check_interval, s.wal.max_file_age);
  return w;
}

// /healthz and /readyz of the pipeline, which is made after the HTTP server starts: until then
// alive and not ready ("starting"). Set once, from the main thread; read from HTTP threads.
class LiveProbes {
 public:
  using Time = std::chrono::steady_clock::time_point;
  void Set(std::function<observe::ProbeResult()> ready, std::function<Time()> last_loop) {
    std::lock_guard lock(mutex_);
    ready_ = std::move(ready);
    last_loop_ = std::move(last_loop);
  }
  observe::ProbeResult Health() const {
    std::lock_guard lock(mutex_);
    if (!last_loop_) return {true, "starting"};
    const bool ok = std::chrono::steady_clock::now() - last_loop_() < std::chrono::seconds(60);
    return {ok, ok ? "" : "the poll loop has not run for over 60 s (stuck in a rebalance?)"};
  }
  observe::ProbeResult Readiness() const {
    std::lock_guard lock(mutex_);
    if (!ready_) return {false, "starting: probing the catalog, storage and brokers"};
    return ready_();
  }

 private:
  mutable std::mutex mutex_;
  std::function<observe::ProbeResult()> ready_;  // GUARDED_BY(mutex_)
  std::function<Time()> last_loop_;              // GUARDED_BY(mutex_)
};

}  // namespace

int RunIngest(const IngestArgs& args, std::ostream& /*out*/, std::ostream& err) {
  auto overrides = args.overrides;
  if (!args.from.empty()) {
    // The file source needs no broker: the required setting is filled in, and never used.
    overrides.try_emplace("kafka.bootstrap_servers", "unused-by-ingest-from:9092");
  }
  auto settings =
      LoadSettings(config::LoadIngestSettings, args.config_path, overrides, "weir", err);
  if (!settings) return kExitFailure;
  if (!args.from.empty() && settings->origins.count("http.port") == 0) {
    // A backfill beside a running ingest on the same host must not take its port: no HTTP
    // server unless http.port is given.
    settings->http_port = 0;
  }
  const bool wal_mode = settings->ingest_mode == "wal";
  if (wal_mode && !args.from.empty()) {
    err << "weir ingest: --from is direct mode's only (ingest.mode: wal reads Kafka)\n";
    return kExitFailure;
  }
  auto signals = StopSignals::Install();
  if (!signals.ok()) {
    spdlog::error("{}", signals.status().message());
    return kExitFailure;
  }
  const std::stop_token stop = (*signals)->token();
  spdlog::info("weir ingest starting; settings given or derived (the rest at their defaults):\n{}",
               config::DescribeChanged(*settings));
  spdlog::debug("every setting:\n{}", config::Describe(*settings));
  auto options = MakePipelineOptions(*settings);
  if (!options.ok()) {
    spdlog::error("{}", options.status().message());
    return kExitFailure;
  }
  std::unique_ptr<FileSourceRun> file_source;
  if (!args.from.empty()) {
    auto prepared = PrepareFileSource(args.from, args.dataset, &*options);
    if (!prepared.ok()) {
      spdlog::error("{}", prepared.status().message());
      return kExitFailure;
    }
    file_source = std::move(*prepared);
  }
  // Declared in the order they must outlive each other (destroyed in reverse): the catalog,
  // the metrics and status the pipeline feeds, the include-values pollers, then direct mode's
  // pipeline or WAL mode's (src/wal through ingest/wal_pipeline.h), then the HTTP server,
  // whose probes call the pipeline.
  std::unique_ptr<lake::Catalog> catalog;
  observe::MetricsRegistry registry;
  observe::StatusModel status("ingest", kVersion);
  options->status = &status;
  std::unique_ptr<IncludeValuesPollers> pollers;
  std::unique_ptr<ingest::Pipeline> direct;
  std::unique_ptr<ingest::WalPipeline> wal;
  LiveProbes live;
  // The HTTP server answers from before the first probe (a port in use stops the start before
  // anything is created) to the end of the drain.
  std::unique_ptr<observe::HttpServer> http;
  if (settings->http_port != 0) {
    observe::HttpServerOptions http_options;
    http_options.host = settings->http_host;
    http_options.port = settings->http_port;
    http_options.registry = &registry;
    http_options.status = &status;
    http_options.health = [&live] { return live.Health(); };
    http_options.readiness = [&live] { return live.Readiness(); };
    auto server = observe::HttpServer::Make(http_options);
    const Status started = server.ok() ? (*server)->Start() : server.status();
    if (!started.ok()) {
      spdlog::error("HTTP server (http.host {}, http.port {}): {}", settings->http_host,
                    settings->http_port, started.message());
      return kExitFailure;
    }
    http = std::move(*server);
    spdlog::info("HTTP on {}:{}: /metrics /healthz /readyz /status /status.json",
                 settings->http_host, http->port());
  }
  auto probed = ProbeLake(*settings, stop, file_source == nullptr);
  if (!probed.ok()) {
    spdlog::error("startup check failed: {}", probed.status().message());
    return kExitFailure;
  }
  catalog = std::move(*probed);
  // Include-values pollers before consuming: an authoritative one waits for its first good poll.
  auto started_pollers = IncludeValuesPollers::Start(*settings, &*options, &registry, stop);
  if (!started_pollers.ok()) {
    spdlog::error("startup check failed: {}", started_pollers.status().message());
    return kExitFailure;
  }
  pollers = std::move(*started_pollers);
  lake::Catalog* lake = catalog.get();
  // Every Parquet writer of the process allocates from the encode pool (weir_arrow_pool_bytes)
  // and, unless encode_threads is 1, encodes a row group's columns in parallel.
  files::SetWriterDefaults({ingest::EncodePool(), settings->encode_threads != 1});
  if (settings->encode_threads > 1) {
    // Arrow's CPU pool runs the Parquet column encoders (its default: one thread per core).
    if (Status sized = arrow::SetCpuThreadPoolCapacity(settings->encode_threads); !sized.ok()) {
      spdlog::warn("encode_threads: {}", sized.message());
    }
  }
  if (wal_mode) {
    auto made = ingest::WalPipeline::Make(std::move(*options), MakeWalModeOptions(*settings), lake,
                                          &registry);
    if (!made.ok()) {
      spdlog::error("{}", made.status().message());
      return kExitFailure;
    }
    wal = std::move(*made);
    live.Set([p = wal.get()] { return p->Readiness(); },
             [p = wal.get()] { return p->last_loop(); });
  } else {
    auto made = ingest::Pipeline::Make(std::move(*options), lake, &registry);
    if (!made.ok()) {
      spdlog::error("{}", made.status().message());
      return kExitFailure;
    }
    direct = std::move(*made);
    live.Set([p = direct.get()] { return p->Readiness(); },
             [p = direct.get()] { return p->last_loop(); });
  }
  // The HTTP server (metrics) stays up through the drain: it stops after Run returns.
  const Status ran = wal ? wal->Run(stop) : direct->Run(stop);
  pollers->Stop();
  if (http) http->Stop();
  if (!ran.ok()) {
    spdlog::error("weir ingest stopped: {}", ran.ToString());
    return kExitFailure;
  }
  if (file_source != nullptr) {
    if (stop.stop_requested()) {
      spdlog::info(
          "weir ingest --from stopped by a signal: what was read is committed; the same "
          "command again resumes from the offset ledger");
    } else {
      spdlog::info("weir ingest --from: every file read to its end and committed");
    }
    return kExitOk;
  }
  spdlog::info("weir ingest stopped cleanly: everything consumed is committed");
  return kExitOk;
}

}  // namespace weir::app
