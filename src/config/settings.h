// The validated settings of `weir ingest` and `weir serve`: what the rest of the program reads.
//
// Plain values, built once by LoadIngestSettings / LoadServeSettings (config/load.h) before any
// thread starts and read-only afterwards. The defaults written here are the documented
// defaults: the settings table (config/setting_table.h) reads them back for
// docs/CONFIGURATION.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace weir::config {

enum class Assignment { kGroup, kStatic };
enum class CatalogKind { kSqlite, kPostgres };

std::string_view ToString(Assignment assignment);
std::string_view ToString(CatalogKind kind);
// How an Iceberg upsert deletes the older rows of its keys (upsert.iceberg_deletes).
enum class IcebergDeletes { kEquality, kDeletionVectors };
std::string_view ToString(IcebergDeletes deletes);  // "equality" | "deletion_vectors"

struct KafkaSettings {
  std::string bootstrap_servers;                   // required (weir ingest)
  std::string group_id;                            // default "weir-<topic>-<table>" of the first
                                                   // dataset ("millpond-..." under millpond env)
  Assignment assignment = Assignment::kGroup;      // "group" | "static"
  std::string group_protocol = "classic";          // classic | consumer (KIP-848); group only
  int replica_count = 1;                           // static only, >= 1
  int ordinal = 0;                                 // static: from POD_NAME / HOSTNAME "-<n>"
  std::string auto_offset_reset = "earliest";      // earliest | latest
  std::string isolation_level = "read_committed";  // read_committed | read_uncommitted
  int consume_batch_size = 1000;                   // 1..100000
  int fetch_min_bytes = 1048576;
  int fetch_max_wait_ms = 500;
  std::map<std::string, std::string> properties;  // librdkafka passthrough
};

struct CatalogSettings {
  CatalogKind kind = CatalogKind::kSqlite;
  std::string sqlite_path = "weir-lake/catalog.sqlite";
  std::string postgres_dsn;  // libpq conninfo; built from the postgres_* parts when empty
  std::string postgres_host;
  int postgres_port = 5432;
  std::string postgres_database = "ducklake";
  std::string postgres_user = "ducklake";
  std::string postgres_password;
};

struct StorageSettings {
  std::string data_path = "weir-lake/data/";  // local directory, s3://bucket/prefix/, abfss://...
  std::string s3_access_key_id;
  std::string s3_secret_access_key;
  std::string s3_region;
  std::string s3_endpoint;  // "localhost:9000" or "http://host:port"
  bool s3_use_ssl = true;
  std::string s3_url_style = "vhost";  // vhost | path
  std::string azure_account_name;      // Azure locations (abfss://, az://, ...)
  std::string azure_account_key;       // empty: the default credential chain
  std::string azure_endpoint;          // "http://127.0.0.1:10000" (Azurite); empty: Azure's own
};

struct FlushSettings {
  int64_t max_bytes = 100 * 1024 * 1024;
  std::chrono::milliseconds interval{60000};
  int64_t target_file_size = 128 * 1024 * 1024;
  int64_t part_bytes = 16 * 1024 * 1024;  // streamed flushes: the hand-off to the flush thread
  int encode_lanes = 2;                   // streamed flushes: parts encoded at once
};

// The record filters of a dataset (millpond's MILLPOND_FILTER_*).
struct FilterSettings {
  std::string keep_field;                // the allowlist's column; empty: no allowlist
  std::vector<std::string> keep_values;  // its static values (the pins of include_values)
  std::string drop_field;                // the denylist's column; empty: no denylist
  std::vector<std::string> drop_values;
};

// The allowlist's HTTP source (millpond's MILLPOND_INCLUDE_VALUES_*).
struct IncludeValuesSettings {
  std::string url;                                 // empty: the static keep_values only
  std::string mode;                                // "" (= shadow) | shadow | authoritative
  std::chrono::milliseconds poll_interval{60000};  // jittered ±10 %
  int removal_polls = 5;
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds startup_timeout{60000};
  std::string auth_header_name;
  std::string auth_token;
  int64_t max_bytes = 4 << 20;
};

// A dataset's routing (issue 14): rows to the table a template names from a field.
struct RouteSettings {
  std::string template_text;       // "events_{event}"; empty: no routing
  std::vector<std::string> allow;  // table names; empty: any
  int max_tables = 100;
};

// `weir maintain`'s policies for a dataset's tables (issue 16): the compaction target and tiers,
// snapshot expiry and the orphan sweep; `weir maintain --serve` runs them on their intervals
// (0 turns one off). Rows in setting_table_maintain.cc.
struct MaintainSettings {
  int64_t target_file_size = 128 * 1024 * 1024;  // compaction writes files of this size
  int64_t small_file_size = 16 * 1024 * 1024;    // tiers.small: below it, merged every pass
  int64_t large_file_size = 64 * 1024 * 1024;    // tiers.large: at or above it, never rewritten
  std::chrono::milliseconds compact_interval{3600000};          // small files
  std::chrono::milliseconds compact_medium_interval{86400000};  // medium files
  std::chrono::milliseconds expire_older_than{5 * 86400000LL};
  int64_t expire_retain_last = 1;
  std::chrono::milliseconds expire_queue_window{86400000};  // DuckLake's deletion queue
  std::chrono::milliseconds expire_interval{3600000};
  std::chrono::milliseconds orphans_older_than{86400000};
  std::chrono::milliseconds orphans_interval{6 * 3600000};
};

// An upsert dataset (issue 15): one row per key, the latest record's. Empty key: append.
struct UpsertSettings {
  std::vector<std::string> key;    // the key columns
  std::string key_from = "value";  // value | kafka_key (the message key's JSON fields)
  IcebergDeletes iceberg_deletes = IcebergDeletes::kEquality;  // equality | deletion_vectors
};

struct DatasetSettings {
  std::string name;   // defaults to table
  std::string topic;  // required (weir ingest)
  std::string schema = "main";
  std::string table;  // required
  // Identity columns ("team_id") or year|month|day|hour(<column>), in order.
  std::vector<std::string> partition_by;
  // Columns each flush's rows are sorted by (ascending, stable, nulls last), in order.
  std::vector<std::string> sort_by;
  // Columns whose Parquet files carry a native bloom filter per row group (issue 13).
  std::vector<std::string> bloom_filter_columns;
  // WAL mode: each uploaded file also gets `wal-<uuid>.bloom` (src/wal/bloom_sidecar.h).
  bool wal_bloom_sidecar = false;
  FlushSettings flush;
  bool rejects_enabled = true;
  int64_t rejects_payload_limit = 65536;
  int64_t max_record_bytes = 1048576;
  std::string compression = "zstd";  // zstd | snappy | lz4 | gzip | none
  int compression_level = 3;
  int64_t row_group_rows = 122880;
  // Output column → JMESPath expression; empty: top-level keys become columns.
  std::map<std::string, std::string> mapping;
  // `column:type` pins (timestamptz | bigint | double | boolean | varchar | uuid).
  std::vector<std::string> typed_columns;
  // Record filters and the dynamic allowlist (setting_table_filters.cc).
  FilterSettings filter;
  IncludeValuesSettings include_values;
  // Kafka metadata columns and routing (issue 14), setting_table_route.cc.
  std::vector<std::string> metadata_columns;  // `column:source` items
  RouteSettings route;
  // JSON-text columns also written as `<column>_variant` (Parquet Variant).
  std::vector<std::string> variant_columns;
  MaintainSettings maintain;  // weir maintain's policies (setting_table_maintain.cc)
  UpsertSettings upsert;      // an upsert dataset (setting_table_upsert.cc)
  // Where each setting given a value came from ("weir.yaml line 3", "WEIR_TOPIC"); a name
  // absent has its default or a derived value.
  std::map<std::string, std::string> origins;
};

// The Iceberg lake (lake.format iceberg): its catalog and warehouse.
struct IcebergSettings {
  std::string catalog = "sql";                       // sql | rest
  std::string sqlite_path = "weir-lake/catalog.db";  // sql on SQLite
  std::string postgres_dsn;                          // sql on PostgreSQL when set
  std::string catalog_name = "weir";                 // the SQL catalog's catalog_name column
  std::string warehouse;   // sql: the tables' root directory ("" = weir-lake/warehouse);
                           // rest: the warehouse sent to the server ("" = none)
  std::string uri;         // rest: required
  std::string token;       // rest: a bearer token; or
  std::string credential;  // rest: OAuth2 client credentials "id:secret"
};

// WAL mode (ingest.mode wal; src/wal): the local write-ahead log and its batched committer.
struct WalSettings {
  std::string dir = "weir-wal";  // one subdirectory per dataset
  int64_t max_file_size = 64LL << 20;
  std::chrono::milliseconds max_file_age{5 * 60 * 1000};
  int max_open_segments_per_partition = 256;
  int disk_high_watermark_pct = 80;
  std::chrono::milliseconds commit_interval{20000};
};

struct IngestSettings {
  KafkaSettings kafka;
  std::string ingest_mode = "direct";  // direct | wal
  WalSettings wal;
  std::string lake_format = "ducklake";  // ducklake | iceberg
  IcebergSettings iceberg;
  CatalogSettings catalog;
  StorageSettings storage;
  std::vector<DatasetSettings> datasets;  // at least one; names, topics and tables unique
  // weir maintain without datasets: the dataset settings given without a dataset (maintain.*,
  // parquet.*), applied to every table of the lake. Unused otherwise.
  DatasetSettings every_table;
  int64_t memory_budget_bytes = 256LL << 20;
  int decode_threads = 1;             // decode workers per streaming dataset; 1: the poll thread
  int encode_threads = 0;             // Parquet column encoders in parallel; 0: one per core
  std::string http_host = "0.0.0.0";  // http.host
  int http_port = 8000;               // 0 = off
  std::string log_level = "info";     // trace | debug | info | warn | error
  std::string log_format = "text";    // text | json
  std::string duckdb_extension_dir;   // "" = the build's
  std::chrono::milliseconds drain_timeout{96000};            // shutdown.drain_timeout
  int commit_max_attempts = 10;                              // retry budget for lake commits
  std::chrono::milliseconds check_timeout{5000};             // weir check: each probe's deadline
  std::chrono::milliseconds startup_timeout{15000};          // the start's broker and catalog
  int maintain_http_port = 8001;                             // weir maintain --serve; 0 = any free
  std::chrono::milliseconds maintain_stats_interval{60000};  // weir maintain --serve
  std::map<std::string, std::string> origins;  // as DatasetSettings::origins, of these
};

struct ServeSettings {
  std::string lake_format = "ducklake";  // the same lake.format and iceberg.* as weir ingest
  IcebergSettings iceberg;               // (weir serve: the REST catalog only)
  CatalogSettings catalog;               // the same catalog.* settings as weir ingest
  StorageSettings storage;  // its s3_* credentials; data_path is ingest's (the catalog has it)
  std::string host = "127.0.0.1";
  int port = 5432;                              // 0 = any free port
  std::string tls_dir = "weir-lake/serve-tls";  // certificate, key and the users file
  int max_connections = 100;                    // in total; more get FATAL 53300
  int max_connections_per_ip = 20;              // per client address
  int max_failed_logins = 5;                    // per address within 60 s, then a ban
  int ban_seconds = 300;
  std::chrono::milliseconds statement_timeout{0};           // default of SET; 0 = none
  std::chrono::milliseconds idle_session_timeout{3600000};  // 0 = never
  std::chrono::milliseconds shutdown_timeout{30000};        // grace on SIGTERM
  std::chrono::milliseconds authentication_timeout{60000};  // TLS + startup + SCRAM, in all
  std::chrono::milliseconds send_timeout{60000};  // a client reading nothing for this long ends
  int64_t session_memory_bytes = 256LL << 20;     // buffered results per session
  std::string memory_limit;                       // DuckDB's memory_limit ("" = DuckDB's own)
  int threads = 0;                                // DuckDB worker threads (0 = DuckDB's default)
  int http_port = -1;                             // /metrics /healthz /readyz (-1 off, 0 any)
  bool query_log = true;                          // one log line per statement
  std::string log_level = "info";                 // the same log.* settings as weir ingest
  std::string log_format = "text";
  std::string duckdb_extension_dir;                  // "" = the build's (as weir ingest)
  std::chrono::milliseconds iceberg_timeout{30000};  // each HTTP request of the iceberg extension
  std::vector<std::string> iceberg_locations;        // the sandbox's; empty = derived at startup
  std::map<std::string, std::string> origins;        // as DatasetSettings::origins, of these
};

}  // namespace weir::config
