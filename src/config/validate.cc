#include "config/validate.h"

#include <cctype>
#include <initializer_list>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "config/setting_table.h"
#include "config/validate_bloom.h"
#include "config/validate_filters.h"
#include "config/validate_maintain.h"
#include "config/validate_unused.h"
#include "config/validate_upsert.h"

#include "base/text.h"
#include "decode/field_names.h"
#include "lake/table_spec.h"
#include "records/dataset_mapping.h"
#include "records/metadata_columns.h"
#include "records/route.h"
#include "records/typed_columns.h"
#include "records/variant_columns.h"

namespace weir::config {
namespace {

std::string Lookup(const std::map<std::string, std::string>& origins, const std::string& name) {
  const auto it = origins.find(name);
  return it == origins.end() ? "" : it->second;
}

// The index ErrorList::Dataset takes for IngestSettings::every_table.
constexpr size_t kEveryTable = static_cast<size_t>(-1);

// Collects messages `<setting>: <problem> (dataset "x", from <origin>)`.
class ErrorList {
 public:
  ErrorList(const Origins& origins, std::vector<std::string>* errors)
      : origins_(origins), errors_(errors) {}

  void Process(const std::string& name, const std::string& problem) {
    Add(name, problem, "", Lookup(origins_.process, name));
  }

  void Dataset(size_t index, const DatasetSettings& dataset, const std::string& name,
               const std::string& problem) {
    if (index == kEveryTable) {  // settings of no dataset in particular
      Add(name, problem, "", Lookup(origins_.every_table, name));
      return;
    }
    const std::string origin =
        index < origins_.datasets.size() ? Lookup(origins_.datasets[index], name) : "";
    Add(name, problem, dataset.name.empty() ? fmt::format("#{}", index + 1) : dataset.name, origin);
  }

 private:
  void Add(const std::string& name, const std::string& problem, const std::string& dataset,
           const std::string& origin) {
    errors_->push_back(SettingError(name, problem, dataset, origin));
  }

  const Origins& origins_;
  std::vector<std::string>* errors_;
};

// "set it in YAML kafka.bootstrap_servers, WEIR_KAFKA_BOOTSTRAP_SERVERS or ...".
std::string WhereToSet(const Setting& setting) {
  std::string text = "required, not set (YAML " + FullName(setting);
  if (setting.env) text += ", " + EnvName(setting);
  if (!setting.millpond_env.empty()) text += ", " + std::string(setting.millpond_env);
  return text + ")";
}

// metadata_columns and route.* (issue 14).
void CheckMetadataAndRoute(size_t index, const DatasetSettings& dataset, ErrorList& errors) {
  std::vector<std::string> metadata_names;
  if (!dataset.metadata_columns.empty()) {
    auto parsed = records::ParseMetadataColumns(dataset.metadata_columns);
    if (!parsed.ok()) {
      errors.Dataset(index, dataset, "metadata_columns", parsed.status().message());
    } else {
      std::vector<std::string> typed, mapped;
      if (auto pins = records::ParseTypedColumns(dataset.typed_columns); pins.ok()) {
        for (const auto& pin : *pins) typed.push_back(pin.column);
      }
      for (const auto& [column, expression] : dataset.mapping) mapped.push_back(column);
      for (const auto& [configured, what] :
           {std::pair{&typed, "a typed column"}, std::pair{&mapped, "a mapping column"}}) {
        const Status collides = records::CheckMetadataCollisions(*parsed, *configured, what);
        if (!collides.ok()) errors.Dataset(index, dataset, "metadata_columns", collides.message());
      }
      for (const auto& column : *parsed) metadata_names.push_back(column.column);
    }
  }
  const RouteSettings& route = dataset.route;
  if (route.template_text.empty()) {
    if (!route.allow.empty()) {
      errors.Dataset(index, dataset, "route.allow", "is set without route.template");
    }
    return;
  }
  auto parsed = records::ParseRouteTemplate(route.template_text);
  if (!parsed.ok()) {
    errors.Dataset(index, dataset, "route.template", parsed.status().message());
    return;
  }
  if (!dataset.mapping.empty()) {
    bool known = false;
    for (const auto& [column, expression] : dataset.mapping) {
      known = known || decode::SameColumnName(column, parsed->field);
    }
    for (const auto& column : metadata_names) {
      known = known || decode::SameColumnName(column, parsed->field);
    }
    if (!known) {
      errors.Dataset(index, dataset, "route.template",
                     fmt::format("routes by \"{}\", which is neither a mapping column nor a "
                                 "metadata column (a mapped dataset's rows hold only those)",
                                 parsed->field));
    }
  }
  for (const std::string& name : route.allow) {
    if (!IsIdentifier(name) || name.size() > 63) {
      errors.Dataset(index, dataset, "route.allow",
                     fmt::format("value \"{}\" is not a table name (an identifier of at most 63 "
                                 "bytes)",
                                 name));
    }
  }
  if (static_cast<size_t>(route.max_tables) < route.allow.size()) {
    errors.Dataset(index, dataset, "route.max_tables",
                   fmt::format("value \"{}\" is below the {} names of route.allow",
                               route.max_tables, route.allow.size()));
  }
}

void CheckDataset(size_t index, const DatasetSettings& dataset, Command command,
                  ErrorList& errors) {
  for (const Setting& setting : SettingTable()) {
    if (setting.scope != Scope::kDataset || index == kEveryTable || !IsRequired(setting, command)) {
      continue;
    }
    const Value value = setting.get_dataset(dataset);
    if (std::get<std::string>(value).empty()) {
      errors.Dataset(index, dataset, std::string(setting.name), WhereToSet(setting));
    }
  }
  const std::pair<const char*, const std::string*> identifiers[] = {
      {"name", &dataset.name}, {"schema", &dataset.schema}, {"table", &dataset.table}};
  for (const auto& [name, value] : identifiers) {
    if (!value->empty() && !IsIdentifier(*value)) {
      errors.Dataset(
          index, dataset, name,
          fmt::format("value \"{}\" is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", *value));
    }
  }
  for (const std::string& key : dataset.partition_by) {
    if (!ParsePartitionKey(key)) {
      errors.Dataset(index, dataset, "partition_by",
                     fmt::format("value \"{}\" is not a partition key (a column name, "
                                 "year|month|day|hour(<column>), or bucket[N](<column>) / "
                                 "truncate[W](<column>) with N, W >= 1)",
                                 key));
    }
  }
  if (!dataset.mapping.empty()) {
    auto mapping = records::CompileDatasetMapping(dataset.mapping);
    if (!mapping.ok()) errors.Dataset(index, dataset, "mapping", mapping.status().message());
  }
  if (!dataset.typed_columns.empty()) {
    auto typed = records::ParseTypedColumns(dataset.typed_columns);
    if (typed.ok()) {
      auto made = records::TypedColumns::Make(std::move(*typed));
      if (!made.ok()) errors.Dataset(index, dataset, "typed_columns", made.status().message());
    } else {
      errors.Dataset(index, dataset, "typed_columns", typed.status().message());
    }
  }
  for (const auto& [name, problem] : FilterSettingProblems(dataset)) {
    errors.Dataset(index, dataset, name, problem);
  }
  for (const auto& [name, problem] : MaintainSettingProblems(dataset)) {
    errors.Dataset(index, dataset, name, problem);
  }
  for (const auto& [name, problem] : UpsertSettingProblems(dataset)) {
    errors.Dataset(index, dataset, name, problem);
  }
  CheckMetadataAndRoute(index, dataset, errors);
  if (!dataset.variant_columns.empty()) {
    auto variant = records::ParseVariantColumns(dataset.variant_columns);
    if (!variant.ok()) {
      errors.Dataset(index, dataset, "variant_columns", variant.status().message());
    }
  }
  for (const std::string& problem : BloomFilterColumnProblems(dataset)) {
    errors.Dataset(index, dataset, "bloom_filter_columns", problem);
  }
  std::set<std::string> sort_keys;
  for (const std::string& key : dataset.sort_by) {
    if (!IsIdentifier(key)) {
      errors.Dataset(
          index, dataset, "sort_by",
          fmt::format("value \"{}\" is not a column name ([A-Za-z_][A-Za-z0-9_]*)", key));
    } else if (!sort_keys.insert(key).second) {
      errors.Dataset(index, dataset, "sort_by", fmt::format("column \"{}\" is listed twice", key));
    }
  }
  if (dataset.compression == "gzip" && dataset.compression_level > 9) {
    errors.Dataset(
        index, dataset, "parquet.compression_level",
        fmt::format("value \"{}\" is above gzip's maximum 9", dataset.compression_level));
  }
}

void CheckUnique(const IngestSettings& settings, ErrorList& errors) {
  std::set<std::string> names;
  std::set<std::string> topics;
  std::set<std::string> tables;
  for (size_t i = 0; i < settings.datasets.size(); ++i) {
    const DatasetSettings& dataset = settings.datasets[i];
    if (!dataset.name.empty() && !names.insert(dataset.name).second) {
      errors.Dataset(i, dataset, "name",
                     fmt::format("value \"{}\" is used by two datasets", dataset.name));
    }
    if (!dataset.topic.empty() && !topics.insert(dataset.topic).second) {
      errors.Dataset(i, dataset, "topic",
                     fmt::format("value \"{}\" is read by two datasets", dataset.topic));
    }
    const std::string table = dataset.schema + "." + dataset.table;
    if (!dataset.table.empty() && !tables.insert(table).second) {
      errors.Dataset(i, dataset, "table",
                     fmt::format("value \"{}\" is written by two datasets", table));
    }
  }
}

void CheckCatalog(const CatalogSettings& catalog, ErrorList& errors) {
  if (catalog.kind == CatalogKind::kPostgres && catalog.postgres_dsn.empty()) {
    errors.Process("catalog.postgres_dsn",
                   "required when catalog.kind is postgres (or set catalog.postgres_host / "
                   "DUCKLAKE_RDS_HOST)");
  }
  if (catalog.kind == CatalogKind::kSqlite && catalog.sqlite_path.empty()) {
    errors.Process("catalog.sqlite_path", "required when catalog.kind is sqlite");
  }
}

void CheckS3Keys(const StorageSettings& storage, ErrorList& errors) {
  if (storage.s3_access_key_id.empty() != storage.s3_secret_access_key.empty()) {
    errors.Process(storage.s3_access_key_id.empty() ? "storage.s3_access_key_id"
                                                    : "storage.s3_secret_access_key",
                   "must be set together with the other of storage.s3_access_key_id / "
                   "storage.s3_secret_access_key (or neither, for the credential chain)");
  }
}

// The iceberg.* settings (lake.format iceberg), the same for weir ingest and weir serve.
void CheckIceberg(const IcebergSettings& iceberg, ErrorList& errors) {
  if (iceberg.catalog == "rest" && iceberg.uri.empty()) {
    errors.Process("iceberg.uri", "required when iceberg.catalog is rest");
  }
  if (iceberg.catalog == "rest" && iceberg.uri.find("://") == std::string::npos &&
      !iceberg.uri.empty()) {
    errors.Process("iceberg.uri",
                   fmt::format("value \"{}\" is not an http(s):// URI", iceberg.uri));
  }
  if (!iceberg.token.empty() && !iceberg.credential.empty()) {
    errors.Process("iceberg.credential", "set either iceberg.token or iceberg.credential");
  } else if (!iceberg.credential.empty() && iceberg.credential.find(':') == std::string::npos) {
    errors.Process("iceberg.credential", "is not client_id:client_secret");
  }
  if (iceberg.catalog == "sql" && iceberg.postgres_dsn.empty() && iceberg.sqlite_path.empty()) {
    errors.Process("iceberg.sqlite_path", "required when iceberg.catalog is sql");
  }
}

bool HasScheme(const std::string& location, std::initializer_list<std::string_view> schemes) {
  for (std::string_view scheme : schemes) {
    if (location.starts_with(std::string(scheme) + "://")) return true;
  }
  return false;
}

// A data location: a local directory, s3://bucket/prefix/ (with a region or an endpoint), or
// an Azure container (with an account, in the settings or the location).
void CheckLocation(const std::string& setting, const std::string& location,
                   const StorageSettings& storage, ErrorList& errors) {
  if (location.rfind("s3://", 0) == 0) {
    if (location.size() <= 5 || location[5] == '/') {
      errors.Process(setting,
                     fmt::format("value \"{}\" has no bucket (s3://bucket/prefix/)", location));
    }
    if (storage.s3_region.empty() && storage.s3_endpoint.empty()) {
      errors.Process("storage.s3_region",
                     fmt::format("required (or storage.s3_endpoint) for {} \"{}\"",
                                 setting.substr(setting.find('.') + 1), location));
    }
  } else if (HasScheme(location, {"abfss", "abfs", "wasbs", "wasb", "az", "azure"})) {
    const std::string rest = location.substr(location.find("://") + 3);
    const std::string authority = rest.substr(0, rest.find('/'));
    if (authority.empty() || authority.front() == '@') {
      errors.Process(setting, fmt::format("value \"{}\" has no container "
                                          "(abfss://container/prefix/)",
                                          location));
    } else if (storage.azure_account_name.empty() && authority.find('@') == std::string::npos) {
      errors.Process("storage.azure_account_name",
                     fmt::format("required for {} \"{}\" (or name the account in it: "
                                 "abfss://container@account.dfs.core.windows.net/prefix/)",
                                 setting, location));
    }
  } else if (location.find("://") != std::string::npos && !location.starts_with("file://")) {
    errors.Process(setting, fmt::format("value \"{}\" is neither a local directory nor s3:// "
                                        "nor an Azure location (abfss://, az://)",
                                        location));
  }
}

// The rules between kafka.* settings, for a command that reads Kafka.
void CheckKafka(const KafkaSettings& kafka, ErrorList& errors) {
  if (kafka.assignment == Assignment::kStatic &&
      (kafka.ordinal < 0 || kafka.ordinal >= kafka.replica_count)) {
    errors.Process("kafka.ordinal",
                   fmt::format("value \"{}\" is not below kafka.replica_count {} (static "
                               "assignment)",
                               kafka.ordinal, kafka.replica_count));
  }
  if (kafka.group_protocol == "consumer" && kafka.assignment == Assignment::kStatic) {
    errors.Process("kafka.group_protocol",
                   "value \"consumer\" needs kafka.assignment group (static assignment joins "
                   "no group)");
  }
  if (kafka.properties.count("group.protocol") != 0) {
    errors.Process("kafka.properties", "group.protocol is set by kafka.group_protocol");
  }
  if (kafka.properties.count("group.id") != 0 || kafka.properties.count("auto.offset.reset")) {
    errors.Process("kafka.properties",
                   "group.id and auto.offset.reset are set by kafka.group_id and "
                   "kafka.auto_offset_reset, not as properties");
  }
}

void CheckProcess(const IngestSettings& settings, Command command, ErrorList& errors) {
  for (const Setting& setting : SettingTable()) {
    if (setting.scope != Scope::kProcess || !IsRequired(setting, command)) continue;
    if (std::get<std::string>(setting.get_process(settings)).empty()) {
      errors.Process(std::string(setting.name), WhereToSet(setting));
    }
  }
  if (settings.http_port != 0 && settings.http_host.empty()) {
    errors.Process("http.host", "is empty (an address such as 0.0.0.0 or 127.0.0.1)");
  }
  if (NeedsOf(command).kafka) CheckKafka(settings.kafka, errors);
  CheckCatalog(settings.catalog, errors);
  if (settings.lake_format == "iceberg") CheckIceberg(settings.iceberg, errors);
  if (settings.ingest_mode == "wal" && settings.wal.dir.empty()) {
    errors.Process("wal.dir", "required with ingest.mode wal, not set");
  }
  for (size_t d = 0; d < settings.datasets.size(); ++d) {
    if (settings.ingest_mode == "wal" && !settings.datasets[d].upsert.key.empty()) {
      errors.Dataset(d, settings.datasets[d], "upsert.key",
                     "upsert datasets need ingest.mode direct (the WAL committer only appends)");
    }
    const DatasetSettings& dataset = settings.datasets[d];
    if (dataset.upsert.iceberg_deletes == IcebergDeletes::kDeletionVectors &&
        settings.lake_format != "iceberg") {
      errors.Dataset(d, dataset, "upsert.iceberg_deletes",
                     "value \"deletion_vectors\" needs lake.format iceberg (DuckLake upserts "
                     "write positional delete files)");
    }
    if (dataset.wal_bloom_sidecar && settings.ingest_mode != "wal") {
      errors.Dataset(d, dataset, "wal.bloom_sidecar",
                     "needs ingest.mode wal (direct mode writes no sidecars)");
    } else if (dataset.wal_bloom_sidecar && dataset.bloom_filter_columns.empty()) {
      errors.Dataset(d, dataset, "wal.bloom_sidecar",
                     "needs a non-empty bloom_filter_columns (the sidecar holds their filters)");
    }
  }
  const StorageSettings& storage = settings.storage;
  if (storage.data_path.empty()) {
    errors.Process("storage.data_path", "required, not set");
  } else if (settings.lake_format != "iceberg") {
    CheckLocation("storage.data_path", storage.data_path, storage, errors);
  }
  if (settings.lake_format == "iceberg" && settings.iceberg.catalog == "sql" &&
      !settings.iceberg.warehouse.empty()) {
    CheckLocation("iceberg.warehouse", settings.iceberg.warehouse, storage, errors);
  }
  CheckS3Keys(storage, errors);
}

void CheckServe(const ServeSettings& settings, ErrorList& errors) {
  if (settings.lake_format == "iceberg") {
    CheckIceberg(settings.iceberg, errors);
    if (settings.iceberg.catalog == "sql") {
      errors.Process("iceberg.catalog",
                     "weir serve reads Iceberg through a REST catalog only (DuckDB's iceberg "
                     "extension has no SQL catalog): set iceberg.catalog to rest and iceberg.uri "
                     "to a REST catalog over the same tables");
    }
  } else {
    CheckCatalog(settings.catalog, errors);
  }
  CheckS3Keys(settings.storage, errors);
  if (settings.host.empty()) errors.Process("serve.host", "required, not set");
  if (settings.tls_dir.empty()) errors.Process("serve.tls_dir", "required, not set");
  if (!settings.memory_limit.empty() && !IsDuckDbMemorySize(settings.memory_limit)) {
    errors.Process("serve.memory_limit",
                   fmt::format("value \"{}\" is not a DuckDB memory size (a number and a unit: "
                               "4GB, 1.5GiB, 512MB)",
                               settings.memory_limit));
  }
}

}  // namespace

std::string SettingError(std::string_view setting, std::string_view problem,
                         std::string_view dataset, std::string_view origin) {
  std::string context;
  if (!dataset.empty()) context = fmt::format("dataset \"{}\"", dataset);
  if (!origin.empty()) context += (context.empty() ? "from " : ", from ") + std::string(origin);
  if (context.empty()) return fmt::format("{}: {}", setting, problem);
  return fmt::format("{}: {} ({})", setting, problem, context);
}

bool IsIdentifier(std::string_view text) { return IsPlainIdentifier(text); }

std::optional<PartitionKey> ParsePartitionKey(std::string_view text) {
  if (IsIdentifier(text)) return PartitionKey{"identity", std::string(text)};
  const size_t open = text.find('(');
  if (open == std::string_view::npos || text.back() != ')') return std::nullopt;
  const std::string_view column = text.substr(open + 1, text.size() - open - 2);
  // The transform's grammar is lake's, the one parser of transform text; identity is written
  // as the bare column.
  const auto transform = lake::ParseTransform(text.substr(0, open));
  if (!transform.ok() || transform->kind == lake::TransformKind::kIdentity) return std::nullopt;
  if (!IsIdentifier(column)) return std::nullopt;
  return PartitionKey{lake::ToString(*transform), std::string(column)};
}

std::vector<std::string> ValidationErrors(const IngestSettings& settings, const Origins& origins,
                                          Command command) {
  std::vector<std::string> messages;
  ErrorList errors(origins, &messages);
  CheckProcess(settings, command, errors);
  const DecidingSettings deciding{settings.lake_format, settings.catalog.kind,
                                  settings.iceberg.catalog, &settings.ingest_mode};
  for (const auto& [name, problem] : UnusedSettingProblems(origins.process, deciding)) {
    errors.Process(name, problem);
  }
  if (settings.datasets.empty() && NeedsOf(command).datasets) {
    messages.push_back(
        "datasets: at least one dataset is required (YAML datasets:, WEIR_TOPIC and WEIR_TABLE, "
        "or KAFKA_TOPIC and DUCKLAKE_TABLE)");
  }
  for (size_t i = 0; i < settings.datasets.size(); ++i) {
    CheckDataset(i, settings.datasets[i], command, errors);
  }
  if (settings.datasets.empty() && !NeedsOf(command).datasets) {
    CheckDataset(kEveryTable, settings.every_table, command, errors);
  }
  CheckUnique(settings, errors);
  return messages;
}

std::vector<std::string> ValidationErrors(const ServeSettings& settings, const Origins& origins) {
  std::vector<std::string> messages;
  ErrorList errors(origins, &messages);
  CheckServe(settings, errors);
  const DecidingSettings deciding{settings.lake_format, settings.catalog.kind,
                                  settings.iceberg.catalog, nullptr};
  for (const auto& [name, problem] : UnusedSettingProblems(origins.process, deciding)) {
    errors.Process(name, problem);
  }
  return messages;
}

bool IsDuckDbMemorySize(std::string_view text) {
  text = TrimSpace(text);
  size_t digits = 0;
  size_t dots = 0;
  size_t i = 0;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.');
       ++i) {
    (text[i] == '.' ? dots : digits) += 1;
  }
  if (digits == 0 || dots > 1) return false;
  const std::string unit = ToLower(TrimSpace(text.substr(i)));
  for (const std::string_view known :
       {"b",  "byte",     "bytes",     "k",   "kb",  "kilobyte", "kilobytes", "m",
        "mb", "megabyte", "megabytes", "g",   "gb",  "gigabyte", "gigabytes", "t",
        "tb", "terabyte", "terabytes", "kib", "mib", "gib",      "tib"}) {
    if (unit == known) return true;
  }
  return false;
}

Status ValidateIngestSettings(const IngestSettings& settings) {
  const std::vector<std::string> errors = ValidationErrors(settings, Origins{});
  if (errors.empty()) return Status::OK();
  return Status::Invalid(fmt::format("{}", fmt::join(errors, "\n")));
}

}  // namespace weir::config
