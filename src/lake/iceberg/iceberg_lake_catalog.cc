#include "lake/iceberg/iceberg_lake_catalog.h"

#include <chrono>
#include <filesystem>
#include <random>

#include <arrow/filesystem/localfs.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/retry.h"
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

BackoffPolicy ConnectPolicy(const IcebergLakeConfig& config) {
  return BackoffPolicy{.initial = std::chrono::milliseconds(200),
                       .multiplier = 2,
                       .cap = std::chrono::milliseconds(5000),
                       .max_jitter = 0.5,
                       .max_attempts = config.max_attempts};
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
    std::error_code ec;
    const auto warehouse = std::filesystem::absolute(config.warehouse, ec);
    if (ec) return Status::Invalid("iceberg.warehouse ", config.warehouse, ": ", ec.message());
    std::filesystem::create_directories(warehouse, ec);
    if (ec) {
      return Status::IOError("iceberg.warehouse: cannot create ", warehouse.string(), ": ",
                             ec.message());
    }
    catalog->warehouse_ = warehouse.lexically_normal().string();
    while (catalog->warehouse_.size() > 1 && catalog->warehouse_.back() == '/') {
      catalog->warehouse_.pop_back();
    }
    if (config.postgres_conninfo.empty()) {
      const auto dir = std::filesystem::path(config.sqlite_path).parent_path();
      if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    }
  }
  // The first connection proves the catalog reachable (and creates SQL's tables).
  WEIR_ASSIGN_OR_RAISE(auto probe, catalog->Connect());
  (void)probe;
  return catalog;
}

Result<std::unique_ptr<MetadataStore>> IcebergLakeCatalog::Connect() {
  return Retry(ConnectPolicy(config_), config_.stop, "connecting to the Iceberg catalog",
               [&]() -> Result<std::unique_ptr<MetadataStore>> {
                 if (config_.type == CatalogType::kRest) {
                   WEIR_ASSIGN_OR_RAISE(auto rest, RestCatalog::Open(config_.rest, config_.stop));
                   return MakeRestMetadataStore(std::move(rest));
                 }
                 SqlCatalogOptions options;
                 options.catalog_name = config_.catalog_name;
                 std::unique_ptr<SqlCatalog> sql;
                 if (config_.postgres_conninfo.empty()) {
                   WEIR_ASSIGN_OR_RAISE(sql, SqlCatalog::OpenSqlite(config_.sqlite_path, options));
                 } else {
                   WEIR_ASSIGN_OR_RAISE(
                       sql, SqlCatalog::OpenPostgres(config_.postgres_conninfo, options));
                 }
                 return MakeSqlMetadataStore(std::move(sql), io_);
               });
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
  if (!spec.sort_keys.empty()) {
    return Status::Invalid(setting, ": sort keys are not written to Iceberg tables yet");
  }
  return Status::OK();
}

Result<OpenResult> IcebergLakeCatalog::OpenTable(const TableSpec& spec, OpenMode mode) {
  const TableIdent ident{{spec.schema}, spec.table};
  WEIR_ASSIGN_OR_RAISE(auto store, Connect());
  WEIR_ASSIGN_OR_RAISE(auto loaded, store->Load(ident));
  if (!loaded) {
    if (mode == OpenMode::kOpenOnly || spec.columns.empty()) {
      return OpenResult{OpenStatus::kMissing, nullptr, ""};
    }
    std::vector<NestedField> fields;
    int id = 0;
    for (const auto& [name, type] : spec.columns) {
      fields.push_back(NestedField{++id, name, false, IcebergTypeOf(type), {}});
    }
    NewTable table;
    table.schema = Schema(0, std::move(fields));
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
    if (!metadata.ok()) {
      return OpenResult{
          OpenStatus::kColumnsRefused, nullptr,
          fmt::format("creating {}: {}", ident.ToString(), metadata.status().message())};
    }
    WEIR_RETURN_NOT_OK(store->EnsureNamespace(ident.namespace_levels));
    WEIR_ASSIGN_OR_RAISE(const bool created, store->Create(ident, *metadata));
    if (created) {
      spdlog::info("created Iceberg table {} with {} columns", ident.ToString(),
                   spec.columns.size());
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
  auto opened = std::make_unique<IcebergTable>(std::move(store), io_, ident, std::move(*loaded));
  WEIR_RETURN_NOT_OK(opened->CheckPartitioning(spec.partitioning));
  return OpenResult{OpenStatus::kOpened, std::move(opened), ""};
}

}  // namespace weir::lake::iceberg
