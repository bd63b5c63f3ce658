// Iceberg table metadata v2 and v3 (the vN.metadata.json document): parsed from what other engines
// write (Java's REST catalog, pyiceberg, Spark), changed the ways weir needs, written back.
//
// Everything weir does not model (statistics, partition-statistics, unknown keys of snapshots,
// refs and fields) is kept and written back unchanged. A value type: copy it, change the copy,
// write it as the next metadata file; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "lake/iceberg/partition_spec.h"
#include "lake/iceberg/types.h"

namespace weir::lake::iceberg {

inline constexpr char kMainBranch[] = "main";
// The table property that makes each commit delete the metadata files that fell off the
// metadata log (Iceberg's default is false; weir sets it on the tables it creates).
inline constexpr char kDeleteMetadataAfterCommit[] = "write.metadata.delete-after-commit.enabled";

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;
  std::map<std::string, std::string> summary;  // "operation" and the rest
  std::optional<int> schema_id;
  // Row lineage (format 3): the first row id the snapshot's manifest list assigns, and how
  // many ids it assigns (next-row-id moves by that much). Absent in v2 snapshots.
  std::optional<int64_t> first_row_id;
  std::optional<int64_t> added_rows;
  nlohmann::json extra = nlohmann::json::object();

  // The summary value of `key`, or nullptr.
  const std::string* SummaryValue(const std::string& key) const;
};

// A snapshot as table metadata (and the REST catalog's add-snapshot update) writes it.
Result<Snapshot> SnapshotFromJson(const nlohmann::json& json);
nlohmann::json SnapshotToJson(const Snapshot& snapshot);

struct SnapshotRef {
  int64_t snapshot_id = 0;
  std::string type = "branch";                      // or "tag"
  nlohmann::json extra = nlohmann::json::object();  // retention settings
};

struct SnapshotLogEntry {
  int64_t timestamp_ms = 0;
  int64_t snapshot_id = 0;
};

struct MetadataLogEntry {
  int64_t timestamp_ms = 0;
  std::string metadata_file;
};

// What a new table starts with. Field ids of `schema` are kept as given (weir assigns them so
// Parquet field ids and Iceberg ids are the same numbers); the spec's field ids are assigned
// from 1000 and its source ids refer to `schema`.
struct NewTable {
  std::string location;
  Schema schema;
  std::vector<PartitionField> partition_fields;  // field_id ignored
  std::map<std::string, std::string> properties;
  std::string table_uuid;  // lower-case 8-4-4-4-12
  int64_t now_ms = 0;
  int format_version = 2;  // 3 when the schema needs it (variant)
};

// The oldest and newest table format versions weir reads and writes.
inline constexpr int kMinFormatVersion = 2;
inline constexpr int kMaxFormatVersion = 3;
// The format version a schema needs: 3 when it holds a variant column, else 2.
int FormatVersionFor(const Schema& schema);

class TableMetadata {
 public:
  static Result<TableMetadata> Create(const NewTable& table);
  // Parses metadata of format version 2 or 3; other versions are refused by name.
  static Result<TableMetadata> FromJson(const nlohmann::json& json);
  static Result<TableMetadata> Parse(std::string_view text);
  nlohmann::json ToJson() const;
  std::string ToJsonText() const;  // what a vN.metadata.json holds

  // --- Reading.
  int format_version() const { return format_version_; }
  // Format 3: higher than every row id assigned; the next snapshot's first-row-id.
  int64_t next_row_id() const { return next_row_id_; }
  const std::string& table_uuid() const { return table_uuid_; }
  const std::string& location() const { return location_; }
  int64_t last_sequence_number() const { return last_sequence_number_; }
  int64_t last_updated_ms() const { return last_updated_ms_; }
  int last_column_id() const { return last_column_id_; }
  int last_partition_id() const { return last_partition_id_; }
  const std::vector<Schema>& schemas() const { return schemas_; }
  int current_schema_id() const { return current_schema_id_; }
  const std::vector<PartitionSpec>& partition_specs() const { return specs_; }
  int default_spec_id() const { return default_spec_id_; }
  const std::vector<SortOrder>& sort_orders() const { return sort_orders_; }
  int default_sort_order_id() const { return default_sort_order_id_; }
  // The default sort order (the unsorted order when the id is unknown).
  SortOrder default_sort_order() const;
  // Makes `fields` sort order 1 and the default, on metadata just created (fields' source ids
  // must be in the schema).
  Status DeclareSortOrder(std::vector<SortField> fields);
  const std::map<std::string, std::string>& properties() const { return properties_; }
  const std::vector<Snapshot>& snapshots() const { return snapshots_; }
  const std::map<std::string, SnapshotRef>& refs() const { return refs_; }
  const std::vector<SnapshotLogEntry>& snapshot_log() const { return snapshot_log_; }
  const std::vector<MetadataLogEntry>& metadata_log() const { return metadata_log_; }
  std::optional<int64_t> current_snapshot_id() const;

  const Schema& current_schema() const;
  const PartitionSpec& default_spec() const;
  const Schema* SchemaById(int id) const;
  const PartitionSpec* SpecById(int id) const;
  const Snapshot* SnapshotById(int64_t id) const;
  // The snapshot `ref` points at (main: the current snapshot), or nullptr.
  const Snapshot* RefSnapshot(const std::string& ref = kMainBranch) const;
  // `ref`'s snapshot, then its parent, ... as far as the snapshots are still listed.
  std::vector<const Snapshot*> Ancestry(const std::string& ref = kMainBranch) const;

  // A table property as an integer or boolean, `fallback` when absent; an error names the
  // property when the value does not parse.
  Result<int64_t> IntProperty(const std::string& name, int64_t fallback) const;
  Result<bool> BoolProperty(const std::string& name, bool fallback) const;

  // --- Changing (each updates last-updated-ms to `now_ms`).
  // Adds `schema` (its id is assigned) or finds an existing one with the same structure;
  // returns its id. Field ids above last-column-id raise it.
  Result<int> AddSchema(Schema schema, int64_t now_ms);
  Status SetCurrentSchema(int schema_id, int64_t now_ms);
  // Adds `snapshot` as the new head of `branch`: its parent must be the branch's head and its
  // sequence number last-sequence-number + 1. Main also moves current-snapshot-id and the
  // snapshot log.
  Status AddSnapshot(Snapshot snapshot, const std::string& branch, int64_t now_ms);
  // Records the metadata file this version replaces (its location and last-updated-ms) in the
  // metadata log, which keeps the newest `write.metadata.previous-versions-max` (default 100);
  // returns the files that fell off it (deleted after the commit when
  // `write.metadata.delete-after-commit.enabled`).
  Result<std::vector<std::string>> RecordPreviousMetadata(std::string metadata_file,
                                                          int64_t timestamp_ms);
  void SetProperty(const std::string& name, std::string value, int64_t now_ms);
  // Raises the format version to `version` (2 → 3 starts row lineage at next-row-id 0;
  // existing snapshots keep no row ids, as the spec says). Refuses a downgrade or an
  // unsupported version; the same version is no change.
  Status UpgradeFormatVersion(int version, int64_t now_ms);
  // Removes the snapshots `ids` (unknown ids are ignored) and their snapshot-log entries; refuses,
  // changing nothing, to remove a snapshot a branch or tag points at.
  Status RemoveSnapshots(const std::set<int64_t>& ids, int64_t now_ms);

  // A new snapshot id: positive, not used by any listed snapshot.
  int64_t NewSnapshotId(std::mt19937_64& random) const;

 private:
  int format_version_ = 2;
  int64_t next_row_id_ = 0;
  std::string table_uuid_;
  std::string location_;
  int64_t last_sequence_number_ = 0;
  int64_t last_updated_ms_ = 0;
  int last_column_id_ = 0;
  std::vector<Schema> schemas_;
  int current_schema_id_ = 0;
  std::vector<PartitionSpec> specs_;
  int default_spec_id_ = 0;
  int last_partition_id_ = kFirstPartitionFieldId - 1;
  std::map<std::string, std::string> properties_;
  std::vector<Snapshot> snapshots_;
  std::vector<SnapshotLogEntry> snapshot_log_;
  std::vector<MetadataLogEntry> metadata_log_;
  std::vector<SortOrder> sort_orders_;
  int default_sort_order_id_ = 0;
  std::map<std::string, SnapshotRef> refs_;
  nlohmann::json extra_ = nlohmann::json::object();  // statistics, partition-statistics, ...
};

// `current` with columns added (ids from last_column_id + 1, optional) and types promoted
// (int→long, float→double, decimal precision widened); `last_column_id` is advanced. Refuses a
// name that exists (ASCII case-insensitively), an unknown id and a promotion the spec forbids.
struct NewColumn {
  std::string name;
  Type type;
};
Result<Schema> EvolveSchema(const Schema& current, const std::vector<NewColumn>& additions,
                            const std::map<int, Type>& promotions, int& last_column_id);

}  // namespace weir::lake::iceberg
