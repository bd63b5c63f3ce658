// Manifests and manifest lists (table spec v2 and v3), written in Avro with exactly the spec's
// schemas (field ids as `field-id` properties, the partition struct built from the spec) and
// key-value metadata, and read back from what any engine wrote.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <nlohmann/json.hpp>

#include "base/status.h"
#include "lake/iceberg/partition_spec.h"
#include "lake/iceberg/types.h"
#include "lake/iceberg/value.h"

namespace weir::lake::iceberg {

enum class EntryStatus { kExisting = 0, kAdded = 1, kDeleted = 2 };
enum class FileContent { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
enum class ManifestContent { kData = 0, kDeletes = 1 };

struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;  // a full URI, as readers open it
  std::string file_format = "PARQUET";
  std::vector<Value> partition;  // one per field of the manifest's spec
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  std::map<int, int64_t> column_sizes;
  std::map<int, int64_t> value_counts;
  std::map<int, int64_t> null_value_counts;
  std::map<int, int64_t> nan_value_counts;
  std::map<int, std::string> lower_bounds;  // Appendix D bytes
  std::map<int, std::string> upper_bounds;
  std::optional<std::string> key_metadata;
  std::vector<int64_t> split_offsets;
  std::vector<int> equality_ids;
  std::optional<int> sort_order_id;
  // Format 3: the row id of the file's first row. Null for files a snapshot adds (inherited
  // from the manifest's first_row_id); explicit once the file is rewritten into another
  // manifest (EXISTING, DELETED). ReadManifest resolves the inheritance.
  std::optional<int64_t> first_row_id;
  // The data file a position delete file or a deletion vector applies to (required for DVs).
  std::optional<std::string> referenced_data_file;
  // Format 3 deletion vectors (file_format PUFFIN, content kPositionDeletes): the blob's offset
  // and length in the Puffin file, equal to the footer's.
  std::optional<int64_t> content_offset;
  std::optional<int64_t> content_size_in_bytes;
};

struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  // Null (inherited from the manifest list) for files added by the snapshot being written.
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> sequence_number;
  std::optional<int64_t> file_sequence_number;
  DataFile data_file;
};

struct FieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;
  std::optional<std::string> lower_bound;  // Appendix D bytes of the partition field's type
  std::optional<std::string> upper_bound;
};

struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0;
  int64_t min_sequence_number = 0;
  int64_t added_snapshot_id = 0;
  int32_t added_files_count = 0;
  int32_t existing_files_count = 0;
  int32_t deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::vector<FieldSummary> partitions;
  std::optional<std::string> key_metadata;
  // Format 3, data manifests: the first row id its files without one inherit from. Assigned
  // when a manifest list first lists the manifest (AssignFirstRowIds), kept after that.
  std::optional<int64_t> first_row_id;
};

// How to reach the files a table's metadata names: its URIs are turned into paths of `fs`.
struct TableIo {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  // The fs path of a location, taken verbatim (no percent-decoding): s3://b/k → b/k,
  // abfss://c@account.dfs.core.windows.net/k → c/k, abfss://c/k and az://c/k → c/k,
  // file:///x → /x, /x → /x.
  Result<std::string> PathOf(const std::string& uri) const;
};

// The Avro schema JSON of a manifest entry (format 2 or 3) for a partition type.
nlohmann::json ManifestEntryAvroSchema(const std::vector<NestedField>& partition_type,
                                       int format_version = 2);
nlohmann::json ManifestListAvroSchema(int format_version = 2);

// What a manifest is written for: its spec, the table schema it was written with, and the
// snapshot (a new manifest's entries with status ADDED and null ids inherit from the list).
struct ManifestContext {
  const Schema* schema = nullptr;
  const PartitionSpec* spec = nullptr;
  int64_t snapshot_id = 0;      // the snapshot adding the manifest
  int64_t sequence_number = 0;  // that snapshot's sequence number
  int format_version = 2;       // the table's
  // A data manifest (data files only) or a delete manifest (delete files only).
  ManifestContent content = ManifestContent::kData;
};

// Writes `entries` as the manifest `uri` (of context.content) and returns its manifest list
// entry (counts, partition summaries, min sequence number).
Result<ManifestFile> WriteManifest(const TableIo& io, const std::string& uri,
                                   const ManifestContext& context,
                                   const std::vector<ManifestEntry>& entries);

// Reads a manifest's entries; null snapshot ids and sequence numbers of ADDED entries, and
// null first_row_ids of live data files, are resolved from `manifest` as the spec's
// inheritance rules say (a manifest without a first_row_id gives its files none).
Result<std::vector<ManifestEntry>> ReadManifest(const TableIo& io, const ManifestFile& manifest,
                                                const std::vector<NestedField>& partition_type);

struct ManifestListContext {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int format_version = 2;
  int64_t first_row_id = 0;  // format 3: the snapshot's first-row-id
};

// Format 3 row lineage: gives every data manifest of a new list that has no first_row_id one,
// from `first_row_id` on, each the previous plus its added and existing rows (the spec's
// "simple and valid approach"). Returns the number of ids assigned (the snapshot's
// added-rows; next-row-id moves by it).
int64_t AssignFirstRowIds(std::vector<ManifestFile>& manifests, int64_t first_row_id);

// Writes a manifest list; returns its length in bytes.
Result<int64_t> WriteManifestList(const TableIo& io, const std::string& uri,
                                  const ManifestListContext& context,
                                  const std::vector<ManifestFile>& manifests);
Result<std::vector<ManifestFile>> ReadManifestList(const TableIo& io, const std::string& uri);

}  // namespace weir::lake::iceberg
