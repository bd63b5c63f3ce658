#include "lake/iceberg/metadata_store.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "lake/iceberg/rest_catalog.h"
#include "lake/iceberg/snapshot_builder.h"
#include "lake/iceberg/sql_catalog.h"

namespace weir::lake::iceberg {
namespace {

Result<std::optional<CurrentMetadata>> Parsed(Result<LoadedTable> loaded) {
  if (!loaded.ok()) {
    if (CatalogErrorKindOf(loaded.status()) == CatalogErrorKind::kNotFound) {
      return std::optional<CurrentMetadata>();
    }
    return loaded.status();
  }
  WEIR_ASSIGN_OR_RAISE(TableMetadata metadata, TableMetadata::FromJson(loaded->metadata));
  return std::optional<CurrentMetadata>(
      CurrentMetadata{loaded->metadata_location, std::move(metadata)});
}

class SqlStore final : public MetadataStore {
 public:
  SqlStore(std::unique_ptr<SqlCatalog> catalog, TableIo io)
      : catalog_(std::move(catalog)), io_(std::move(io)), random_(std::random_device{}()) {}

  Status EnsureNamespace(const std::vector<std::string>& levels) override {
    return catalog_->EnsureNamespace(levels);
  }

  Result<std::vector<TableIdent>> ListTables() override { return catalog_->ListTables(); }

  // A metadata file is never rewritten once its name is in the catalog, so while the pointer
  // still names the file this store last read or committed, that parse is the table's current
  // metadata: one query, no file read, no JSON parse (most of a commit's CPU otherwise).
  Result<std::optional<CurrentMetadata>> Load(const TableIdent& ident) override {
    const std::string key = ident.ToString();
    if (last_ && last_key_ == key) {
      auto location = catalog_->LoadMetadataLocation(ident);
      if (location.ok() && *location == last_->location) return last_;
      if (!location.ok() && CatalogErrorKindOf(location.status()) != CatalogErrorKind::kNotFound) {
        return location.status();
      }
    }
    WEIR_ASSIGN_OR_RAISE(auto loaded, Parsed(catalog_->LoadTable(ident)));
    Remember(key, loaded);
    return loaded;
  }

  Result<bool> Create(const TableIdent& ident, const TableMetadata& metadata) override {
    const std::string uri = CatalogMetadataUri(metadata, 0, random_);
    WEIR_RETURN_NOT_OK(WriteMetadataFile(io_, uri, metadata));
    const Status created = catalog_->CreateTable(ident, uri);
    if (created.ok()) return true;
    DeleteQuietly(uri);
    if (CatalogErrorKindOf(created) == CatalogErrorKind::kAlreadyExists) return false;
    return created;
  }

  Result<StoreCommit> Commit(const TableIdent& ident, const CurrentMetadata& base,
                             const TableMetadata& next, const MetadataChange& /*change*/,
                             std::vector<std::string>& written) override {
    TableMetadata versioned = next;
    WEIR_ASSIGN_OR_RAISE(
        std::vector<std::string> superseded,
        versioned.RecordPreviousMetadata(base.location, base.metadata.last_updated_ms()));
    int version = MetadataVersionOf(base.location);
    if (version < 0) version = static_cast<int>(base.metadata.metadata_log().size());
    const std::string uri = CatalogMetadataUri(versioned, version + 1, random_);
    WEIR_RETURN_NOT_OK(WriteMetadataFile(io_, uri, versioned));
    written.push_back(uri);
    WEIR_ASSIGN_OR_RAISE(CommitResult swapped,
                         catalog_->SwapMetadataLocation(ident, base.location, uri));
    StoreCommit result{swapped.outcome, std::move(swapped.message), std::nullopt};
    if (result.outcome == CommitOutcome::kCommitted) {
      // As Iceberg's writers do: files that fell off the metadata log are deleted once the
      // commit landed (a failed delete is left to the orphan sweep).
      auto delete_superseded = versioned.BoolProperty(kDeleteMetadataAfterCommit, false);
      if (delete_superseded.ok() && *delete_superseded) {
        for (const auto& file : superseded) DeleteQuietly(file);
      }
      result.current = CurrentMetadata{uri, std::move(versioned)};
      Remember(ident.ToString(), result.current);
    }
    return result;
  }

 private:
  void Remember(const std::string& key, std::optional<CurrentMetadata> current) {
    last_key_ = key;
    last_ = std::move(current);
  }

  void DeleteQuietly(const std::string& uri) {
    auto path = io_.PathOf(uri);
    if (path.ok()) (void)io_.fs->DeleteFile(*path);
  }

  std::unique_ptr<SqlCatalog> catalog_;
  TableIo io_;
  std::mt19937_64 random_;
  std::string last_key_;                 // the table `last_` belongs to
  std::optional<CurrentMetadata> last_;  // the metadata last loaded or committed here
};

class RestStore final : public MetadataStore {
 public:
  explicit RestStore(std::unique_ptr<RestCatalog> catalog) : catalog_(std::move(catalog)) {}

  Status EnsureNamespace(const std::vector<std::string>& levels) override {
    return catalog_->EnsureNamespace(levels);
  }

  Result<std::vector<TableIdent>> ListTables() override { return catalog_->ListTables(); }

  Result<std::optional<CurrentMetadata>> Load(const TableIdent& ident) override {
    return Parsed(catalog_->LoadTable(ident));
  }

  Result<bool> Create(const TableIdent& ident, const TableMetadata& metadata) override {
    CreateTableRequest request;
    request.name = ident.name;
    request.schema_json = metadata.current_schema().ToJson().dump();
    request.partition_spec_json = metadata.default_spec().ToJson().dump();
    if (const SortOrder order = metadata.default_sort_order(); !order.fields.empty()) {
      request.write_order_json = order.ToJson().dump();
    }
    if (metadata.location() != kServerAssignedLocation) request.location = metadata.location();
    request.properties = metadata.properties();
    // The server makes the metadata; the reserved property chooses its format version.
    if (metadata.format_version() > 2) {
      request.properties["format-version"] = std::to_string(metadata.format_version());
    }
    auto created = catalog_->CreateTable(ident.namespace_levels, request);
    if (created.ok()) return true;
    if (CatalogErrorKindOf(created.status()) == CatalogErrorKind::kAlreadyExists) return false;
    return created.status();
  }

  Result<StoreCommit> Commit(const TableIdent& ident, const CurrentMetadata& base,
                             const TableMetadata& next, const MetadataChange& change,
                             std::vector<std::string>& /*written*/) override {
    nlohmann::json requirements = nlohmann::json::array();
    nlohmann::json updates = nlohmann::json::array();
    requirements.push_back({{"type", "assert-table-uuid"}, {"uuid", base.metadata.table_uuid()}});
    // The files are partitioned by the base's default spec: a spec changed meanwhile is a
    // conflict (the table layer reloads and answers kTableChanged), never a silent commit.
    requirements.push_back(
        {{"type", "assert-default-spec-id"}, {"default-spec-id", base.metadata.default_spec_id()}});
    if (change.upgrade_format) {
      updates.push_back(
          {{"action", "upgrade-format-version"}, {"format-version", next.format_version()}});
    }
    if (change.schema_id) {
      requirements.push_back({{"type", "assert-current-schema-id"},
                              {"current-schema-id", base.metadata.current_schema_id()}});
      const Schema* schema = next.SchemaById(*change.schema_id);
      if (schema == nullptr) return Status::Invalid("schema ", *change.schema_id, " is missing");
      updates.push_back({{"action", "add-schema"},
                         {"schema", schema->ToJson()},
                         {"last-column-id", next.last_column_id()}});
      updates.push_back({{"action", "set-current-schema"}, {"schema-id", -1}});
    }
    if (change.snapshot) {
      const auto head = base.metadata.current_snapshot_id();
      requirements.push_back({{"type", "assert-ref-snapshot-id"},
                              {"ref", kMainBranch},
                              {"snapshot-id", head ? nlohmann::json(*head) : nlohmann::json()}});
      updates.push_back(
          {{"action", "add-snapshot"}, {"snapshot", SnapshotToJson(*change.snapshot)}});
      updates.push_back({{"action", "set-snapshot-ref"},
                         {"ref-name", kMainBranch},
                         {"type", "branch"},
                         {"snapshot-id", change.snapshot->snapshot_id}});
    }
    if (!change.removed_snapshots.empty()) {
      if (!change.snapshot) {
        const auto head = base.metadata.current_snapshot_id();
        requirements.push_back({{"type", "assert-ref-snapshot-id"},
                                {"ref", kMainBranch},
                                {"snapshot-id", head ? nlohmann::json(*head) : nlohmann::json()}});
      }
      updates.push_back(
          {{"action", "remove-snapshots"}, {"snapshot-ids", change.removed_snapshots}});
    }
    WEIR_ASSIGN_OR_RAISE(CommitResult answer,
                         catalog_->CommitTable(ident, requirements.dump(), updates.dump()));
    StoreCommit result{answer.outcome, std::move(answer.message), std::nullopt};
    if (result.outcome == CommitOutcome::kCommitted && answer.table) {
      // The server's metadata after the commit, parsed once. Unreadable (another engine's
      // metadata weir cannot model) or not showing this commit as main's head: the next
      // commit reads the table back instead.
      auto metadata = TableMetadata::FromJson(answer.table->metadata);
      const auto head = metadata.ok() ? metadata->current_snapshot_id() : std::nullopt;
      if (head && change.snapshot && *head == change.snapshot->snapshot_id) {
        result.current =
            CurrentMetadata{std::move(answer.table->metadata_location), std::move(*metadata)};
      }
    }
    return result;
  }

 private:
  std::unique_ptr<RestCatalog> catalog_;
};

}  // namespace

std::unique_ptr<MetadataStore> MakeSqlMetadataStore(std::unique_ptr<SqlCatalog> catalog,
                                                    TableIo io) {
  return std::make_unique<SqlStore>(std::move(catalog), std::move(io));
}

std::unique_ptr<MetadataStore> MakeRestMetadataStore(std::unique_ptr<RestCatalog> catalog) {
  return std::make_unique<RestStore>(std::move(catalog));
}

}  // namespace weir::lake::iceberg
