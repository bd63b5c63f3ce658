#include "config/setting_table.h"

#include <cctype>

#include "config/millpond_env.h"
#include "config/setting_rows.h"

namespace weir::config {
namespace {

using table_rows::Assign;
using table_rows::FilterRows;
using table_rows::kGiB;
using table_rows::kMiB;
using table_rows::ServeRows;
using table_rows::ToValue;

// Designated initializers name only what differs from Setting's defaults; GCC's -Wextra would
// flag every member left to its default member initializer.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<Setting> BuildTable() {
  using S = SettingType;
  constexpr Scope kD = Scope::kDataset;
  std::vector<Setting> table = {
      // Kafka.
      {.name = "kafka.bootstrap_servers",
       .type = S::kString,
       .required = {Command::kIngest},
       .millpond_env = "KAFKA_BOOTSTRAP_SERVERS",
       .description = "Kafka brokers, comma separated host:port.",
       WEIR_PROCESS_FIELD(kafka.bootstrap_servers)},
      {.name = "kafka.group_id",
       .type = S::kString,
       .millpond_env = "GROUP_ID",
       .default_note = "`weir-<topic>-<table>` of the first dataset; `millpond-<topic>-<table>` "
                       "when KAFKA_TOPIC or DUCKLAKE_TABLE is set",
       .description = "Kafka group.id. With static assignment it only stores offsets. Changing "
                      "it loses Kafka's committed offsets (the lake's offset ledger still holds "
                      "them).",
       WEIR_PROCESS_FIELD(kafka.group_id)},
      {.name = "kafka.assignment",
       .type = S::kEnum,
       .allowed = {"group", "static"},
       .default_note = "`group`; `static` when REPLICA_COUNT is set",
       .description = "`group`: a consumer group with cooperative rebalancing. `static`: "
                      "partition p belongs to the replica whose ordinal is p % replica_count.",
       WEIR_PROCESS_FIELD(kafka.assignment)},
      {.name = "kafka.group_protocol",
       .type = S::kEnum,
       .allowed = {"classic", "consumer"},
       .description = "Group mode's rebalance protocol. `classic`: the group coordinator "
                      "protocol with cooperative-sticky assignment in the client. `consumer`: "
                      "KIP-848, the broker assigns partitions and rebalances incrementally "
                      "(Kafka 4.0 and later; session.timeout.ms and heartbeat.interval.ms are "
                      "then broker settings).",
       WEIR_PROCESS_FIELD(kafka.group_protocol)},
      {.name = "kafka.replica_count",
       .type = S::kInt,
       .min = 1,
       .max = 100000,
       .millpond_env = "REPLICA_COUNT",
       .description = "Static assignment: number of replicas (the StatefulSet's replicas).",
       WEIR_PROCESS_FIELD(kafka.replica_count)},
      {.name = "kafka.ordinal",
       .type = S::kInt,
       .min = 0,
       .max = 99999,
       .default_note = "the trailing `-<n>` of POD_NAME, else of HOSTNAME (static only)",
       .description = "Static assignment: this replica's ordinal, below replica_count.",
       WEIR_PROCESS_FIELD(kafka.ordinal)},
      {.name = "kafka.auto_offset_reset",
       .type = S::kEnum,
       .allowed = {"earliest", "latest"},
       .millpond_env = "KAFKA_AUTO_OFFSET_RESET",
       .description = "Where a partition with no committed offset starts.",
       WEIR_PROCESS_FIELD(kafka.auto_offset_reset)},
      {.name = "kafka.isolation_level",
       .type = S::kEnum,
       .allowed = {"read_committed", "read_uncommitted"},
       .description = "read_committed never lands records of aborted transactions.",
       WEIR_PROCESS_FIELD(kafka.isolation_level)},
      {.name = "kafka.consume_batch_size",
       .type = S::kInt,
       .min = 1,
       .max = 100000,
       .millpond_env = "CONSUME_BATCH_SIZE",
       .description = "Most messages taken per poll.",
       WEIR_PROCESS_FIELD(kafka.consume_batch_size)},
      {.name = "kafka.fetch_min_bytes",
       .type = S::kBytes,
       .min = 1,
       .max = 100000000,
       .millpond_env = "FETCH_MIN_BYTES",
       .description = "Broker waits for at least this many bytes before answering a fetch.",
       WEIR_PROCESS_FIELD(kafka.fetch_min_bytes)},
      {.name = "kafka.fetch_max_wait_ms",
       .type = S::kInt,
       .min = 0,
       .max = 300000,
       .millpond_env = "FETCH_MAX_WAIT_MS",
       .description = "Longest broker wait (ms) while fetch_min_bytes is not reached.",
       WEIR_PROCESS_FIELD(kafka.fetch_max_wait_ms)},
      {.name = "kafka.properties",
       .type = S::kStringMap,
       .millpond_env = "KAFKA_CONSUMER_*",
       .description = "librdkafka properties passed through (`security.protocol: SASL_SSL`). "
                      "Values of password, secret and JAAS properties are masked in logs. "
                      "`session.timeout.ms` (librdkafka's default 45 s) is how long a killed "
                      "member's partitions wait before the group gives them to another.",
       WEIR_PROCESS_FIELD(kafka.properties)},
      // The lake format.
      {.name = "lake.format",
       .type = S::kEnum,
       .allowed = {"ducklake", "iceberg"},
       .description =
           "The table format `weir ingest` writes and `weir serve` serves: DuckLake (the "
           "`catalog.*` and `storage.*` settings) or Iceberg (the `iceberg.*` "
           "settings; weir serve reads Iceberg through a REST catalog only).",
       WEIR_SHARED_FIELD(lake_format)},
      {.name = "iceberg.catalog",
       .type = S::kEnum,
       .allowed = {"sql", "rest"},
       .description = "The Iceberg catalog (lake.format iceberg): `sql` (the iceberg_tables of "
                      "a SQLite file or PostgreSQL database, as pyiceberg's SqlCatalog and "
                      "Iceberg's JdbcCatalog share it) or `rest` (a REST catalog at iceberg.uri).",
       WEIR_SHARED_FIELD(iceberg.catalog)},
      {.name = "iceberg.sqlite_path",
       .type = S::kString,
       .description = "The SQL catalog's SQLite file (iceberg.catalog sql, when "
                      "iceberg.postgres_dsn is not set).",
       WEIR_SHARED_FIELD(iceberg.sqlite_path)},
      {.name = "iceberg.postgres_dsn",
       .type = S::kString,
       .secrecy = Secrecy::kConninfo,
       .description = "libpq connection string of a PostgreSQL SQL catalog (iceberg.catalog sql).",
       WEIR_SHARED_FIELD(iceberg.postgres_dsn)},
      {.name = "iceberg.catalog_name",
       .type = S::kString,
       .description = "The SQL catalog's catalog name (the `catalog_name` column).",
       WEIR_SHARED_FIELD(iceberg.catalog_name)},
      {.name = "iceberg.warehouse",
       .type = S::kString,
       .default_note = "sql: `weir-lake/warehouse`; rest: none",
       .description = "sql: where tables are created (`<warehouse>/<schema>/<table>`): a local "
                      "directory, `s3://bucket/prefix` or an Azure location (the storage.* "
                      "settings reach it); rest: the warehouse sent to the server.",
       WEIR_SHARED_FIELD(iceberg.warehouse)},
      {.name = "iceberg.uri",
       .type = S::kString,
       .description = "The REST catalog's base URI, e.g. `http://host:8181` (iceberg.catalog "
                      "rest: required).",
       WEIR_SHARED_FIELD(iceberg.uri)},
      {.name = "iceberg.token",
       .type = S::kString,
       .secrecy = Secrecy::kSecret,
       .description = "A bearer token for the REST catalog. Never printed.",
       WEIR_SHARED_FIELD(iceberg.token)},
      {.name = "iceberg.credential",
       .type = S::kString,
       .secrecy = Secrecy::kSecret,
       .description = "OAuth2 client credentials `client_id:client_secret` for the REST "
                      "catalog (instead of iceberg.token). Never printed.",
       WEIR_SHARED_FIELD(iceberg.credential)},
      // Catalog.
      {.name = "catalog.kind",
       .type = S::kEnum,
       .allowed = {"sqlite", "postgres"},
       .default_note = "`sqlite`; `postgres` when DUCKLAKE_RDS_HOST is set",
       .description = "Where the DuckLake catalog lives.",
       WEIR_SHARED_FIELD(catalog.kind)},
      {.name = "catalog.sqlite_path",
       .type = S::kString,
       .description = "SQLite catalog file (kind sqlite).",
       WEIR_SHARED_FIELD(catalog.sqlite_path)},
      {.name = "catalog.postgres_dsn",
       .type = S::kString,
       .default_note = "built from the postgres_* settings",
       .secrecy = Secrecy::kConninfo,
       .description = "libpq connection string or postgres:// URI (kind postgres). Set either "
                      "this or postgres_host, not both.",
       WEIR_SHARED_FIELD(catalog.postgres_dsn)},
      {.name = "catalog.postgres_host",
       .type = S::kString,
       .millpond_env = "DUCKLAKE_RDS_HOST",
       .description = "PostgreSQL host (kind postgres, when postgres_dsn is not set).",
       WEIR_SHARED_FIELD(catalog.postgres_host)},
      {.name = "catalog.postgres_port",
       .type = S::kInt,
       .min = 1,
       .max = 65535,
       .millpond_env = "DUCKLAKE_RDS_PORT",
       .description = "PostgreSQL port.",
       WEIR_SHARED_FIELD(catalog.postgres_port)},
      {.name = "catalog.postgres_database",
       .type = S::kString,
       .millpond_env = "DUCKLAKE_RDS_DATABASE",
       .description = "PostgreSQL database.",
       WEIR_SHARED_FIELD(catalog.postgres_database)},
      {.name = "catalog.postgres_user",
       .type = S::kString,
       .millpond_env = "DUCKLAKE_RDS_USERNAME",
       .description = "PostgreSQL user.",
       WEIR_SHARED_FIELD(catalog.postgres_user)},
      {.name = "catalog.postgres_password",
       .type = S::kString,
       .millpond_env = "DUCKLAKE_RDS_PASSWORD",
       .secrecy = Secrecy::kSecret,
       .description = "PostgreSQL password. Never printed.",
       WEIR_SHARED_FIELD(catalog.postgres_password)},
      // Storage.
      {.name = "storage.data_path",
       .type = S::kString,
       .millpond_env = "DUCKLAKE_DATA_PATH",
       .description = "Where data files go: a local directory, `s3://bucket/prefix/` or an "
                      "Azure container (`abfss://container/prefix/`, `az://container/prefix/`).",
       WEIR_PROCESS_FIELD(storage.data_path)},
      {.name = "storage.s3_access_key_id",
       .type = S::kString,
       .millpond_env = "DUCKDB_S3_ACCESS_KEY_ID",
       .description = "S3 access key id; empty uses the default credential chain.",
       WEIR_SHARED_FIELD(storage.s3_access_key_id)},
      {.name = "storage.s3_secret_access_key",
       .type = S::kString,
       .millpond_env = "DUCKDB_S3_SECRET_ACCESS_KEY",
       .secrecy = Secrecy::kSecret,
       .description = "S3 secret access key. Never printed.",
       WEIR_SHARED_FIELD(storage.s3_secret_access_key)},
      {.name = "storage.s3_region",
       .type = S::kString,
       .millpond_env = "DUCKDB_S3_REGION",
       .description = "S3 region. An s3:// data_path needs a region or an endpoint.",
       WEIR_SHARED_FIELD(storage.s3_region)},
      {.name = "storage.s3_endpoint",
       .type = S::kString,
       .millpond_env = "DUCKDB_S3_ENDPOINT",
       .description = "S3-compatible endpoint (`localhost:9000`, `http://minio:9000`).",
       WEIR_SHARED_FIELD(storage.s3_endpoint)},
      {.name = "storage.s3_use_ssl",
       .type = S::kBool,
       .millpond_env = "DUCKDB_S3_USE_SSL",
       .description = "HTTPS to the endpoint.",
       WEIR_SHARED_FIELD(storage.s3_use_ssl)},
      {.name = "storage.s3_url_style",
       .type = S::kEnum,
       .allowed = {"vhost", "path"},
       .millpond_env = "DUCKDB_S3_URL_STYLE",
       .description = "Bucket in the host name (vhost) or in the path (path, for MinIO); with an "
                      "explicit storage.s3_endpoint the bucket is always in the path.",
       WEIR_SHARED_FIELD(storage.s3_url_style)},
      {.name = "storage.azure_account_name",
       .type = S::kString,
       .description = "Azure storage account of Azure locations (`abfss://container/prefix/`, "
                      "`az://container/prefix/`); may instead be named in the location "
                      "(`abfss://container@account.dfs.core.windows.net/prefix/`).",
       WEIR_SHARED_FIELD(storage.azure_account_name)},
      {.name = "storage.azure_account_key",
       .type = S::kString,
       .secrecy = Secrecy::kSecret,
       .description = "Azure storage account key; empty uses the default credential chain "
                      "(environment, managed identity, Azure CLI). Never printed.",
       WEIR_SHARED_FIELD(storage.azure_account_key)},
      {.name = "storage.azure_endpoint",
       .type = S::kString,
       .description = "Blob endpoint of an Azure-compatible emulator (`http://127.0.0.1:10000`, "
                      "the account in the path, as Azurite serves it); empty for Azure's own "
                      "`https://<account>.blob.core.windows.net`.",
       WEIR_SHARED_FIELD(storage.azure_endpoint)},
      // Process.
      {.name = "memory_budget",
       .type = S::kBytes,
       .min = 16 * kMiB,
       .max = 1024 * kGiB,
       .description = "Bound on the memory of ingested data. A sixteenth of it (4-32 MiB) "
                      "bounds librdkafka's prefetch queue and another sixteenth one fetch response "
                      "(`queued.max.messages.kbytes`, `fetch.max.bytes`; `kafka.properties` may "
                      "set them). The rest bounds buffered data of all datasets (open buffers, "
                      "records queued for the decode workers, the parts and flushes handed to the "
                      "flush threads); at that bound the open buffers are handed over and "
                      "consumption pauses until the flush threads free room. What the Parquet "
                      "writers hold on top is one open row group per partition and encode lane "
                      "(an eighth of `flush.target_file_size` at most), and the freed blocks "
                      "the decode and encode pools keep for reuse (about a part, and a row "
                      "group per lane; a quarter of the budget each at most); "
                      "`weir_arrow_pool_bytes{stage}`, "
                      "`weir_buffer_bytes` and `weir_librdkafka_msg_size` show each.",
       WEIR_PROCESS_FIELD(memory_budget_bytes)},
      {.name = "decode_threads",
       .type = S::kInt,
       .min = 1,
       .max = 64,
       .description = "Threads that decode the records of each dataset whose flushes stream, "
                      "each on its own Kafka partitions (partition modulo the count); 1: on "
                      "the poll thread. Routed, sorted and upsert datasets are always decoded "
                      "on the poll thread (their flushes are written whole).",
       WEIR_PROCESS_FIELD(decode_threads)},
      {.name = "encode_threads",
       .type = S::kInt,
       .min = 0,
       .max = 256,
       .description =
           "Threads that encode and compress the columns of a Parquet row group in "
           "parallel (Arrow's CPU pool, shared by every dataset); 0: one per core; 1: "
           "on each dataset's flush thread alone. Decoding runs meanwhile, one part ahead "
           "(`decode_threads`).",
       WEIR_PROCESS_FIELD(encode_threads)},
      {.name = "http.host",
       .type = S::kString,
       .description = "Address the HTTP server of /metrics, /healthz, /readyz and /status "
                      "listens on: every interface by default, so that a kubelet's probes and "
                      "Prometheus reach a pod (the pages are read-only); `127.0.0.1` keeps them "
                      "on the host.",
       WEIR_PROCESS_FIELD(http_host)},
      {.name = "http.port",
       .type = S::kInt,
       .min = 0,
       .max = 65535,
       .millpond_env = "MILLPOND_HTTP_PORT",
       .description = "Port of /metrics, /healthz, /readyz and /status; 0 turns HTTP off. "
                      "`weir ingest --from` (a backfill) starts no HTTP server unless this is "
                      "set.",
       WEIR_PROCESS_FIELD(http_port)},
      {.name = "log.level",
       .type = S::kEnum,
       .allowed = {"trace", "debug", "info", "warn", "error"},
       .aliases = {{"warning", "warn"}},
       .millpond_env = "LOG_LEVEL",
       .description = "Log level, any case; millpond's WARNING means warn.",
       WEIR_SHARED_FIELD(log_level)},
      {.name = "log.format",
       .type = S::kEnum,
       .allowed = {"text", "json"},
       .description = "Log line format.",
       WEIR_SHARED_FIELD(log_format)},
      {.name = "duckdb.extension_dir",
       .type = S::kString,
       .default_note = "the build's (`.deps/duckdb/extensions`)",
       .description = "Directory of DuckDB's extensions (ducklake, sqlite, postgres, httpfs, "
                      "...), in DuckDB's layout (`v<version>/<platform>/<name>.duckdb_extension`); "
                      "nothing is ever downloaded.",
       WEIR_SHARED_FIELD(duckdb_extension_dir)},
      {.name = "shutdown.drain_timeout",
       .type = S::kDuration,
       .min = 1000,
       .max = 3600000,
       .description = "On SIGTERM, time to flush and commit what is buffered before exiting "
                      "anyway (recovery finishes the work).",
       WEIR_PROCESS_FIELD(drain_timeout)},
      {.name = "commit.max_attempts",
       .type = S::kInt,
       .min = 1,
       .max = 1000,
       .description = "Attempts of a lake write or commit (exponential backoff from 1s, cap 30s) "
                      "before the process exits non-zero, losing nothing.",
       WEIR_PROCESS_FIELD(commit_max_attempts)},
      {.name = "check.timeout",
       .type = S::kDuration,
       .min = 100,
       .max = 600000,
       .description = "`weir check`: the deadline of each probe (broker and topic, catalog, "
                      "storage), which run in parallel; a probe still running then fails as "
                      "timed out. `weir wal check`: how long it retries reading each dataset's "
                      "committed offsets and opening the catalog.",
       WEIR_PROCESS_FIELD(check_timeout)},
      {.name = "startup.timeout",
       .type = S::kDuration,
       .min = 1000,
       .max = 3600000,
       .description = "How long a start keeps trying to reach the broker (each topic's "
                      "metadata) and the catalog before it fails, naming what it could not "
                      "reach. Later outages are retried under `commit.max_attempts`.",
       WEIR_PROCESS_FIELD(startup_timeout)},
  };
  for (Setting& row : table_rows::WalRows()) table.push_back(std::move(row));
  for (Setting& row : ServeRows()) table.push_back(std::move(row));
  std::vector<Setting> datasets = {
      // Datasets.
      {.name = "name",
       .scope = kD,
       .type = S::kString,
       .default_note = "the table",
       .env = false,
       .description = "Dataset name in metrics, logs and `WEIR_DATASET_<NAME>_` variables; an "
                      "identifier.",
       WEIR_DATASET_FIELD(name)},
      {.name = "topic",
       .scope = kD,
       .type = S::kString,
       .required = {Command::kIngest},
       .millpond_env = "KAFKA_TOPIC",
       .description = "Kafka topic read into the table.",
       WEIR_DATASET_FIELD(topic)},
      {.name = "schema",
       .scope = kD,
       .type = S::kString,
       .millpond_env = "DUCKLAKE_SCHEMA",
       .description = "Lake schema; an identifier (`[A-Za-z_][A-Za-z0-9_]*`).",
       WEIR_DATASET_FIELD(schema)},
      {.name = "table",
       .scope = kD,
       .type = S::kString,
       .required = {Command::kIngest, Command::kMaintain},
       .millpond_env = "DUCKLAKE_TABLE",
       .description = "Lake table, created on first write; an identifier.",
       WEIR_DATASET_FIELD(table)},
      {.name = "partition_by",
       .scope = kD,
       .type = S::kStringList,
       .millpond_env = "DUCKLAKE_PARTITION_BY",
       .description = "Partition keys declared at table creation: a column name (identity) or "
                      "`year|month|day|hour(<column>)`, e.g. `year(_inserted_at),month("
                      "_inserted_at)`; Iceberg also takes `bucket[N](<column>)` and "
                      "`truncate[W](<column>)` (N, W ≥ 1).",
       WEIR_DATASET_FIELD(partition_by)},
      {.name = "sort_by",
       .scope = kD,
       .type = S::kStringList,
       .millpond_env = "MILLPOND_SORT_BY",
       .description = "Columns each flush's rows are sorted by before they are written: "
                      "ascending, left to right, stable, nulls last. A flush lacking one of "
                      "them, or holding one that cannot be sorted, is written unsorted and "
                      "counted (`weir_sort_skipped_total`, one warning per key set). Iceberg "
                      "tables also declare them as their sort order.",
       WEIR_DATASET_FIELD(sort_by)},
      {.name = "bloom_filter_columns",
       .scope = kD,
       .type = S::kStringList,
       .description = "Columns whose data files carry a Parquet-native split-block bloom filter "
                      "in every row group (false-positive rate 5 %, sized to the row group), "
                      "so that readers skip row groups on equality (`WHERE id = ...`): the "
                      "files of direct mode, of WAL mode (written into the segment, uploaded "
                      "as is) and of compaction. Boolean columns cannot carry one. With a "
                      "`mapping`, every column must be a mapped, metadata or variant column or "
                      "`_inserted_at` (refused at startup otherwise); without one, a listed "
                      "column a file lacks gets no filter in that file.",
       WEIR_DATASET_FIELD(bloom_filter_columns)},
      {.name = "flush.max_bytes",
       .scope = kD,
       .type = S::kBytes,
       .min = 1024,
       .max = 64 * kGiB,
       .millpond_env = "FLUSH_SIZE",
       .description = "Flush when the dataset's buffered bytes reach this.",
       WEIR_DATASET_FIELD(flush.max_bytes)},
      {.name = "flush.interval",
       .scope = kD,
       .type = S::kDuration,
       .min = 100,
       .max = 86400000,
       .millpond_env = "FLUSH_INTERVAL_MS",
       .description = "Flush when the oldest buffered record is this old.",
       WEIR_DATASET_FIELD(flush.interval)},
      {.name = "flush.target_file_size",
       .scope = kD,
       .type = S::kBytes,
       .min = 64 * 1024,
       .max = 64 * kGiB,
       .description = "Parquet bytes at which a data file is finished and the next one begun, "
                      "within a flush: files rotate independently of `flush.max_bytes` and "
                      "`flush.interval` (which bound how long data waits). Row groups are "
                      "closed at an eighth of it at most. Every file but the last of each flush "
                      "and partition is this size, give or take a fraction of a row group.",
       WEIR_DATASET_FIELD(flush.target_file_size)},
      {.name = "flush.part_bytes",
       .scope = kD,
       .type = S::kBytes,
       .min = 0,
       .max = 64 * kGiB,
       .description = "Buffered bytes at which a flush's records are handed to the flush thread "
                      "as a part and encoded into the flush's open files at once, so a flush "
                      "of `flush.max_bytes` never sits in memory whole; the files are committed "
                      "together when the flush ends. At most a quarter of `memory_budget`; 0 "
                      "writes every flush whole. Flushes of a routed or sorted (`sort_by`) "
                      "dataset are always written whole.",
       WEIR_DATASET_FIELD(flush.part_bytes)},
      {.name = "flush.encode_lanes",
       .scope = kD,
       .type = S::kInt,
       .min = 1,
       .max = 16,
       .description = "Lanes that encode the parts of a streamed flush into Parquet at once, "
                      "each into its own open files (one per partition tuple), all committed "
                      "together. A part goes to the lowest idle lane, so while the flush thread "
                      "keeps up one lane writes everything; under a backlog the others take "
                      "parts too (a flush then ends with up to this many files per tuple below "
                      "`flush.target_file_size`). Each busy lane holds an open row group and a "
                      "part, inside `memory_budget`.",
       WEIR_DATASET_FIELD(flush.encode_lanes)},
      {.name = "rejects.enabled",
       .scope = kD,
       .type = S::kBool,
       .description = "Undecodable records go to `<table>_rejects`; off: dropped and counted.",
       WEIR_DATASET_FIELD(rejects_enabled)},
      {.name = "rejects.payload_limit",
       .scope = kD,
       .type = S::kBytes,
       .min = 0,
       .max = 16 * kMiB,
       .description = "Raw payload bytes kept per reject (truncated beyond).",
       WEIR_DATASET_FIELD(rejects_payload_limit)},
      {.name = "max_record_bytes",
       .scope = kD,
       .type = S::kBytes,
       .min = 1,
       .max = 256 * kMiB,
       .description = "Larger records are rejected (record_too_large).",
       WEIR_DATASET_FIELD(max_record_bytes)},
      {.name = "parquet.compression",
       .scope = kD,
       .type = S::kEnum,
       .allowed = {"zstd", "snappy", "lz4", "gzip", "none"},
       .description = "Parquet compression codec.",
       WEIR_DATASET_FIELD(compression)},
      {.name = "parquet.compression_level",
       .scope = kD,
       .type = S::kInt,
       .min = 1,
       .max = 22,
       .description = "Codec level (zstd 1-22, gzip 1-9; ignored by the others).",
       WEIR_DATASET_FIELD(compression_level)},
      {.name = "parquet.row_group_rows",
       .scope = kD,
       .type = S::kInt,
       .min = 1024,
       .max = 1LL << 30,
       .description = "Rows per Parquet row group.",
       WEIR_DATASET_FIELD(row_group_rows)},
      {.name = "mapping",
       .scope = kD,
       .type = S::kStringMap,
       .keys_are_columns = true,
       .description =
           "Record mapping: output column → JMESPath expression (the whole specification, "
           "functions included), e.g. `user: properties.user_id`, `flags: join(',', "
           "properties.flags)`. Set: the table gets exactly these columns (in name order; types "
           "inferred from the results, arrays and objects as JSON text) and a record an "
           "expression fails on goes to the rejects table as `mapping_failed`; unset: top-level "
           "keys become columns (a key that is not an identifier `[A-Za-z_][A-Za-z0-9_]*` or is "
           "longer than 63 bytes is dropped and counted in `weir_fields_dropped_total`; integers "
           "beyond int64 become doubles: docs/OPERATIONS.md). Compiled at startup: a bad "
           "expression or column name stops it. "
           "From the environment one variable per column, the column lower-cased "
           "(`WEIR_MAPPING_USER_ID=properties.user_id`).",
       WEIR_DATASET_FIELD(mapping)},
      {.name = "typed_columns",
       .scope = kD,
       .type = S::kStringList,
       .millpond_env = "MILLPOND_TYPED_COLUMNS",
       .description =
           "Columns pinned to a type before each write, `column:type` with type timestamptz, "
           "bigint, double, boolean, varchar or uuid, e.g. "
           "`timestamp:timestamptz,project_id:bigint,uuid:uuid`. "
           "A value that cannot be cast is nulled (only that value); per column and flush "
           "either `weir_columns_coerced_total` or `weir_column_coercion_errors_total` counts "
           "it. Timestamps: `YYYY-MM-DD[ |T]HH:MM[:SS[.ffffff]][Z|±HH[:MM]]` (UTC implied) or a "
           "date. A typed timestamptz column may be partitioned by year/month/day/hour. "
           "uuid: 8-4-4-4-12 or 32 hex digits (any case), optionally in `{}` or after a "
           "lower-case `urn:uuid:`; written as a uuid column (Parquet UUID). On an existing "
           "table the live column's type wins (uuid text into a varchar column, text parsed "
           "into a uuid column).",
       WEIR_DATASET_FIELD(typed_columns)},
      {.name = "variant_columns",
       .scope = kD,
       .type = S::kStringList,
       .millpond_env = "MILLPOND_VARIANT_COLUMNS",
       .description =
           "JSON-text columns also written as `<column>_variant`, a VARIANT column (the Parquet "
           "Variant encoding: a DuckLake `variant` column, or an Iceberg `variant` column, which "
           "makes the table Iceberg format version 3), e.g. `properties,person_properties`. The "
           "source "
           "column is kept; a value that is not JSON nulls only the companion "
           "(`weir_values_nulled_total{reason=\"variant_invalid_json\"}`); payload fields named "
           "`<column>_variant` (any case) are dropped "
           "(`weir_fields_dropped_total{reason=\"variant_companion\"}`). Names are "
           "identifiers and do not end in `_variant` (list the source).",
       WEIR_DATASET_FIELD(variant_columns)},
  };
  for (Setting& row : datasets) table.push_back(std::move(row));
  for (Setting& row : FilterRows()) table.push_back(std::move(row));
  for (Setting& row : table_rows::MetadataAndRouteRows()) table.push_back(std::move(row));
  for (Setting& row : table_rows::MaintainRows()) table.push_back(std::move(row));
  for (Setting& row : table_rows::UpsertRows()) table.push_back(std::move(row));
  return table;
}

#pragma GCC diagnostic pop

}  // namespace

const std::vector<Setting>& SettingTable() {
  static const std::vector<Setting> table = BuildTable();
  return table;
}

const Setting* FindSetting(Scope scope, std::string_view name) {
  for (const Setting& setting : SettingTable()) {
    if (setting.scope == scope && setting.name == name) return &setting;
  }
  return nullptr;
}

bool IsSettingPrefix(Scope scope, std::string_view prefix) {
  const std::string with_dot = std::string(prefix) + ".";
  for (const Setting& setting : SettingTable()) {
    if (setting.scope == scope && setting.name.substr(0, with_dot.size()) == with_dot) {
      return true;
    }
  }
  return false;
}

bool UsedBy(const Setting& setting, Command command) {
  // weir maintain reads ingest's configuration (a shared file), needing less of it.
  return command == Command::kServe
             ? setting.set_serve != nullptr
             : setting.set_process != nullptr || setting.set_dataset != nullptr;
}

bool IsRequired(const Setting& setting, Command command) {
  return UsedBy(setting, command) && setting.required.Has(command);
}

CommandNeeds NeedsOf(Command command) {
  switch (command) {
    case Command::kIngest:
      return {.datasets = true, .kafka = true};
    case Command::kServe:
    case Command::kMaintain:
      return {};  // the lake only
  }
  return {};
}

Value DefaultValue(const Setting& setting) {
  if (setting.get_dataset != nullptr) return setting.get_dataset(DatasetSettings{});
  if (setting.get_process != nullptr) return setting.get_process(IngestSettings{});
  return setting.get_serve(ServeSettings{});
}

std::string FullName(const Setting& setting) {
  return setting.scope == Scope::kDataset ? "datasets[]." + std::string(setting.name)
                                          : std::string(setting.name);
}

std::string EnvMapKey(const Setting& setting, std::string_view suffix) {
  if (!setting.keys_are_columns) return LibrdkafkaPropertyName(suffix);
  std::string out;
  for (const char c : suffix) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string EnvToken(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += std::isalnum(static_cast<unsigned char>(c))
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  return out;
}

std::string DatasetEnvSuffix(const Setting& setting) {
  return EnvToken(setting.name) + (setting.type == SettingType::kStringMap ? "_" : "");
}

std::string EnvName(const Setting& setting) {
  if (!setting.env) return "";
  return "WEIR_" + DatasetEnvSuffix(setting);
}

}  // namespace weir::config
