#include "lake/iceberg/iceberg_lake_catalog.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <random>

#include <arrow/filesystem/localfs.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/retry.h"
#include "files/object_store.h"
#include "lake/ducklake/catalog_db.h"
#include "lake/iceberg/avro_file.h"
#include "lake/iceberg/iceberg_table.h"
#include "lake/iceberg/snapshot_builder.h"
#include "lake/iceberg/sql_catalog.h"

namespace weir::lake::iceberg {
namespace {

constexpr char kInsertedAt[] = "_inserted_at";

std::string Suffix(lake::TransformKind kind) {
  switch (kind) {
    case lake::TransformKind::kYear:
      return "_year";
    case lake::TransformKind::kMonth:
      return "_month";
    case lake::TransformKind::kDay:
      return "_day";
    case lake::TransformKind::kHour:
      return "_hour";
    case lake::TransformKind::kBucket:
      return "_bucket";
    case lake::TransformKind::kTruncate:
      return "_trunc";
    default:
      return "";
  }
}

std::string OrderText(const std::vector<SortKey>& keys) {
  if (keys.empty()) return "no sort order";
  std::string out;
  for (const auto& key : keys) {
    if (!out.empty()) out += ", ";
    out += key.column + (key.descending ? " DESC" : " ASC") +
           (key.nulls_first ? " NULLS FIRST" : " NULLS LAST");
  }
  return out;
}

// The table's default sort order as sort keys (nullopt: a field that is not an identity of a
// live column, which weir's keys cannot express).
std::optional<std::vector<SortKey>> LiveSortKeys(const TableMetadata& metadata) {
  std::vector<SortKey> keys;
  for (const SortField& field : metadata.default_sort_order().fields) {
    const NestedField* source = metadata.current_schema().FindField(field.source_id);
    if (source == nullptr || field.transform.kind != TransformKind::kIdentity) return std::nullopt;
    keys.push_back(SortKey{source->name, field.direction == SortDirection::kDesc,
                           field.null_order == NullOrder::kNullsFirst});
  }
  return keys;
}

// The live sort order against the dataset's sort keys: equal, or undeclared (a warning: the
// files are sorted all the same), or a fatal mismatch naming both.
Status CheckSortOrder(const TableMetadata& metadata, const std::string& table,
                      const std::vector<SortKey>& wanted) {
  const auto live = LiveSortKeys(metadata);
  if (live && *live == wanted) return Status::OK();
  if (live && live->empty()) {
    spdlog::warn("Iceberg table {} declares no sort order; weir sorts its files by {} all the same",
                 table, OrderText(wanted));
    return Status::OK();
  }
  return ClassifiedError(
      ErrorClass::kFatal, "iceberg", "layout_mismatch",
      fmt::format("table {} is sorted by {} but the configuration asks for {}; set sort_by to "
                  "match or point the dataset at a new table",
                  table, live ? OrderText(*live) : "a sort order weir cannot express",
                  OrderText(wanted)));
}

BackoffPolicy ConnectPolicy(const IcebergLakeConfig& config) {
  return BackoffPolicy{.initial = std::chrono::milliseconds(200),
                       .multiplier = 2,
                       .cap = std::chrono::milliseconds(5000),
                       .max_jitter = 0.5,
                       .max_attempts = config.max_attempts};
}

Result<std::string> ReadMetadataText(const TableIo& io, const std::string& location) {
  WEIR_ASSIGN_OR_RAISE(const std::string path, io.PathOf(location));
  return ReadWholeFile(*io.fs, path);
}

// The settings that reach a kind of store, for errors.
std::string SettingsOf(files::StorageKind kind) {
  switch (kind) {
    case files::StorageKind::kS3:
      return "storage.s3_*";
    case files::StorageKind::kAzure:
      return "storage.azure_*";
    default:
      return "a local directory";
  }
}

// A partition key whose transform cannot take its column's type (a bucket of a double, a
// truncate of a boolean) is a fatal error naming the setting; it shows once the type is known:
// from the first batch when the table is created, from the live table when it exists.
Status CheckKeyType(const PartitionKey& key, const Type& type, const TableIdent& ident) {
  const auto result = Transform::Of(key.transform).ResultType(type);
  if (result.ok()) return Status::OK();
  return ClassifiedError(
      ErrorClass::kFatal, "iceberg", "partition_refused",
      fmt::format("partition_by: Iceberg cannot partition {} by {}: column {} is {} ({})",
                  ident.ToString(), ToString(key), key.column, ToString(type),
                  result.status().message()));
}

}  // namespace

IcebergLakeCatalog::IcebergLakeCatalog(IcebergLakeConfig config)
    : config_(std::move(config)), io_{std::make_shared<arrow::fs::LocalFileSystem>()} {}

Result<std::unique_ptr<IcebergLakeCatalog>> IcebergLakeCatalog::Open(
    const IcebergLakeConfig& config) {
  std::unique_ptr<IcebergLakeCatalog> catalog(new IcebergLakeCatalog(config));
  if (config.type == CatalogType::kSql) {
    auto kind = files::StorageKindOf(config.warehouse);
    if (!kind.ok()) return WithContext(kind.status(), "iceberg.warehouse");
    if (*kind == files::StorageKind::kLocal) {
      std::error_code ec;
      const std::string local =
          config.warehouse.starts_with("file://") ? config.warehouse.substr(7) : config.warehouse;
      const auto warehouse = std::filesystem::absolute(local, ec);
      if (ec) return Status::Invalid("iceberg.warehouse ", config.warehouse, ": ", ec.message());
      std::filesystem::create_directories(warehouse, ec);
      if (ec) {
        return Status::IOError("iceberg.warehouse: cannot create ", warehouse.string(), ": ",
                               ec.message());
      }
      catalog->warehouse_ = warehouse.lexically_normal().string();
    } else {
      catalog->warehouse_ = config.warehouse;
    }
    while (catalog->warehouse_.size() > 1 && catalog->warehouse_.back() == '/') {
      catalog->warehouse_.pop_back();
    }
    auto io = catalog->IoFor(catalog->warehouse_);
    if (!io.ok()) {
      return WithContext(io.status(),
                         "iceberg.warehouse " + config.warehouse + " (" + SettingsOf(*kind) + ")");
    }
    catalog->io_ = *io;
    if (config.postgres_conninfo.empty()) {
      std::error_code ec;
      const auto dir = std::filesystem::path(config.sqlite_path).parent_path();
      if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    }
  }
  // The first connection proves the catalog reachable (and creates SQL's tables), within the
  // open deadline.
  auto probe = catalog->Connect(config.open_deadline, /*first=*/true);
  if (!probe.ok()) return probe.status();
  return catalog;
}

Result<std::unique_ptr<MetadataStore>> IcebergLakeCatalog::Connect(
    std::chrono::milliseconds deadline, bool first) {
  BackoffPolicy policy = ConnectPolicy(config_);
  policy.max_elapsed = deadline;
  return Retry(policy, config_.stop, "connecting to the Iceberg catalog",
               [&]() -> Result<std::unique_ptr<MetadataStore>> {
                 auto store = ConnectOnce();
                 if (first && !store.ok()) return ducklake::FatalAtStartup(store.status());
                 return store;
               });
}

Result<std::unique_ptr<MetadataStore>> IcebergLakeCatalog::ConnectOnce() {
  if (config_.type == CatalogType::kRest) {
    // Not cut short by config_.stop: a draining writer connects to commit what it holds (each
    // request is bounded by the HTTP timeouts).
    WEIR_ASSIGN_OR_RAISE(auto rest, RestCatalog::Open(config_.rest));
    return MakeRestMetadataStore(std::move(rest));
  }
  SqlCatalogOptions options;
  options.catalog_name = config_.catalog_name;
  // Metadata files live in the warehouse's store (local, S3 or Azure).
  options.read_metadata = [io = io_](const std::string& location) {
    return ReadMetadataText(io, location);
  };
  std::unique_ptr<SqlCatalog> sql;
  if (config_.postgres_conninfo.empty()) {
    WEIR_ASSIGN_OR_RAISE(sql, SqlCatalog::OpenSqlite(config_.sqlite_path, options));
  } else {
    WEIR_ASSIGN_OR_RAISE(sql, SqlCatalog::OpenPostgres(config_.postgres_conninfo, options));
  }
  return MakeSqlMetadataStore(std::move(sql), io_);
}

Result<TableIo> IcebergLakeCatalog::IoFor(const std::string& location) {
  WEIR_ASSIGN_OR_RAISE(const files::StorageKind kind, files::StorageKindOf(location));
  std::lock_guard lock(io_mutex_);
  if (auto it = io_by_kind_.find(kind); it != io_by_kind_.end()) return it->second;
  TableIo io;
  if (kind == files::StorageKind::kLocal) {
    io.fs = std::make_shared<arrow::fs::LocalFileSystem>();
  } else {
    WEIR_ASSIGN_OR_RAISE(auto store, files::ObjectStore::Locate(location, config_.storage));
    io.fs = store.filesystem();
  }
  io_by_kind_.emplace(kind, io);
  return io;
}

Status IcebergLakeCatalog::ProbeLocation(const std::string& location) {
  WEIR_ASSIGN_OR_RAISE(const files::StorageKind kind, files::StorageKindOf(location));
  const std::string context =
      "storage at " + location + " (" + SettingsOf(kind) + "; writing a marker object)";
  auto store = files::ObjectStore::Locate(location, config_.storage);
  if (!store.ok()) return WithContext(store.status(), context);
  std::mt19937_64 random(std::random_device{}());
  return WithContext(store->Probe(".weir-probe-" + RandomUuid(random)), context);
}

Result<std::vector<std::string>> IcebergLakeCatalog::ProbeStorage(
    const std::vector<std::pair<std::string, std::string>>& tables) {
  std::vector<std::string> probed;
  if (config_.type == CatalogType::kSql) {
    WEIR_RETURN_NOT_OK(WithContext(ProbeLocation(warehouse_), "iceberg.warehouse"));
    probed.push_back(warehouse_);
  } else if (config_.rest.warehouse.find("://") != std::string::npos) {
    WEIR_RETURN_NOT_OK(WithContext(ProbeLocation(config_.rest.warehouse), "iceberg.warehouse"));
    probed.push_back(config_.rest.warehouse);
  }
  WEIR_ASSIGN_OR_RAISE(auto store, Connect());
  for (const auto& [schema, table] : tables) {
    const TableIdent ident{{schema}, table};
    WEIR_ASSIGN_OR_RAISE(auto loaded, store->Load(ident));
    if (!loaded) continue;
    const std::string& location = loaded->metadata.location();
    bool covered = false;
    for (const auto& root : probed) covered = covered || location.starts_with(root + "/");
    if (covered || std::find(probed.begin(), probed.end(), location) != probed.end()) continue;
    WEIR_RETURN_NOT_OK(WithContext(ProbeLocation(location), "table " + ident.ToString()));
    probed.push_back(location);
  }
  return probed;
}

Status IcebergLakeCatalog::CheckSpec(const TableSpec& spec, std::string_view setting) const {
  for (const auto& key : spec.partitioning) {
    const Transform transform = Transform::Of(key.transform);
    if (key.column == kInsertedAt) {
      auto result = transform.ResultType(Type::Primitive(TypeId::kTimestampTz));
      if (!result.ok()) {
        return Status::Invalid(setting, ": Iceberg cannot partition by ", ToString(key), ": ",
                               result.status().message());
      }
    }
  }
  // Sort keys are identity sort fields of any column: nothing to refuse before the columns
  // are known (a key the first flush lacks leaves the table's order undeclared).
  return Status::OK();
}

Result<OpenResult> IcebergLakeCatalog::OpenTable(const TableSpec& spec, OpenMode mode) {
  const TableIdent ident{{spec.schema}, spec.table};
  WEIR_ASSIGN_OR_RAISE(auto store, Connect());
  WEIR_ASSIGN_OR_RAISE(auto loaded, store->Load(ident));
  bool created_here = false;
  if (!loaded) {
    if (mode != OpenMode::kOpenOrCreate || spec.columns.empty()) {
      return OpenResult{OpenStatus::kMissing, nullptr, ""};
    }
    std::vector<NestedField> fields;
    int id = 0;
    for (const auto& [name, type] : spec.columns) {
      fields.push_back(NestedField{++id, name, false, IcebergTypeOf(type), {}});
    }
    NewTable table;
    table.schema = Schema(0, std::move(fields));
    table.format_version = FormatVersionFor(table.schema);  // 3 for a variant column
    if (spec.deletion_vectors) table.format_version = std::max(table.format_version, 3);
    for (const auto& key : spec.partitioning) {
      const NestedField* source = table.schema.FindTopLevel(key.column);
      if (source == nullptr) {
        return OpenResult{OpenStatus::kColumnsRefused, nullptr,
                          fmt::format("creating {}: partition column {} is not among the "
                                      "table's columns",
                                      ident.ToString(), key.column)};
      }
      WEIR_RETURN_NOT_OK(CheckKeyType(key, source->type, ident));
      const Transform transform = Transform::Of(key.transform);
      table.partition_fields.push_back(
          PartitionField{source->id, 0, key.column + Suffix(key.transform.kind), transform});
    }
    std::vector<SortField> sort_fields;
    for (const auto& key : spec.sort_keys) {
      const NestedField* source = table.schema.FindTopLevel(key.column);
      if (source == nullptr) {
        spdlog::warn(
            "creating {}: sort key {} is not among the first flush's columns; the "
            "table declares no sort order (its files are sorted when the key is there)",
            ident.ToString(), key.column);
        sort_fields.clear();
        break;
      }
      sort_fields.push_back(SortField{
          source->id, Transform{}, key.descending ? SortDirection::kDesc : SortDirection::kAsc,
          key.nulls_first ? NullOrder::kNullsFirst : NullOrder::kNullsLast});
    }
    // Superseded metadata files go as each commit lands, not hundreds at a time in the sweep
    // (the catalog deletes them on REST, weir's SQL store on the SQL catalog).
    table.properties[kDeleteMetadataAfterCommit] = "true";
    std::mt19937_64 random(std::random_device{}());
    table.table_uuid = RandomUuid(random);
    table.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    // REST: the server chooses the location (its warehouse); the placeholder is not sent.
    table.location = config_.type == CatalogType::kSql
                         ? warehouse_ + "/" + spec.schema + "/" + spec.table
                         : std::string(kServerAssignedLocation);
    auto metadata = TableMetadata::Create(table);
    if (metadata.ok()) {
      if (Status declared = metadata->DeclareSortOrder(std::move(sort_fields)); !declared.ok()) {
        metadata = declared;
      }
    }
    if (!metadata.ok()) {
      return OpenResult{
          OpenStatus::kColumnsRefused, nullptr,
          fmt::format("creating {}: {}", ident.ToString(), metadata.status().message())};
    }
    WEIR_RETURN_NOT_OK(store->EnsureNamespace(ident.namespace_levels));
    WEIR_ASSIGN_OR_RAISE(const bool created, store->Create(ident, *metadata));
    created_here = created;
    if (created) {
      spdlog::info("created Iceberg table {} (format version {}) with {} columns", ident.ToString(),
                   table.format_version, spec.columns.size());
    } else {
      spdlog::info("Iceberg table {} was created by another writer meanwhile", ident.ToString());
    }
    WEIR_ASSIGN_OR_RAISE(loaded, store->Load(ident));
    if (!loaded) return Status::IOError("table ", ident.ToString(), " missing after creation");
  }
  for (const auto& key : spec.partitioning) {
    if (const NestedField* live = loaded->metadata.current_schema().FindTopLevel(key.column)) {
      WEIR_RETURN_NOT_OK(CheckKeyType(key, live->type, ident));
    }
  }
  // The table's own store: a REST server chooses the location (local, s3://, abfss://).
  auto io = IoFor(loaded->metadata.location());
  if (!io.ok()) {
    return WithContext(io.status(),
                       "table " + ident.ToString() + " at " + loaded->metadata.location());
  }
  if (created_here && config_.type == CatalogType::kRest) {
    // A REST server chose the location just now: prove the credentials there before any data
    // is written, as the startup probe did for existing tables.
    WEIR_RETURN_NOT_OK(
        WithContext(ProbeLocation(loaded->metadata.location()), "table " + ident.ToString()));
  }
  if (spec.deletion_vectors && loaded->metadata.format_version() < 3) {
    return ClassifiedError(
        ErrorClass::kFatal, "iceberg", "deletion_vectors_need_v3",
        fmt::format("upsert.iceberg_deletes is deletion_vectors, which needs an Iceberg format "
                    "version 3 table, and table {} is format version {} (set upsert."
                    "iceberg_deletes: equality, or upgrade the table to format version 3)",
                    ident.ToString(), loaded->metadata.format_version()));
  }
  auto opened = std::make_unique<IcebergTable>(std::move(store), *io, ident, std::move(*loaded));
  opened->UseDeletionVectors(spec.deletion_vectors);
  if (mode != OpenMode::kOpenAsIs) {
    WEIR_RETURN_NOT_OK(opened->CheckPartitioning(spec.partitioning));
    WEIR_RETURN_NOT_OK(CheckSortOrder(opened->metadata(), ident.ToString(), spec.sort_keys));
  }
  return OpenResult{OpenStatus::kOpened, std::move(opened), ""};
}

Result<std::vector<TableName>> IcebergLakeCatalog::ListTables() {
  WEIR_ASSIGN_OR_RAISE(auto store, Connect());
  WEIR_ASSIGN_OR_RAISE(auto idents, store->ListTables());
  std::vector<TableName> names;
  for (const TableIdent& ident : idents) {
    if (ident.namespace_levels.size() == 1) {
      names.push_back({ident.namespace_levels[0], ident.name});
    }
  }
  return names;
}

}  // namespace weir::lake::iceberg
