// Builds the next snapshot of an append: writes one manifest for the new data files, merges
// manifests as Iceberg's MergeAppend does (so planning stays bounded), writes the manifest
// list, and returns the table metadata with the new snapshot as main's head. Committing that
// metadata (REST, SQL catalog, or a file-system table) is the catalog layer's job.
//
// Works against any arrow::fs::FileSystem (local, S3, Azure). Not thread-safe; one call per
// commit attempt. Files it wrote are listed in the result, so a caller whose commit fails for
// certain can delete them.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "lake/iceberg/manifest.h"
#include "lake/iceberg/metadata.h"
#include "lake/iceberg/snapshot_ledger.h"

namespace weir::lake::iceberg {

// Iceberg's manifest merge settings, from the table properties of the same names.
struct MergePolicy {
  bool enabled = true;                          // commit.manifest-merge.enabled
  int64_t min_count_to_merge = 100;             // commit.manifest.min-count-to-merge
  int64_t target_size_bytes = 8 * 1024 * 1024;  // commit.manifest.target-size-bytes

  static Result<MergePolicy> FromProperties(const TableMetadata& metadata);
};

struct AppendRequest {
  // Data files of the table's default spec, their partition tuples and metrics filled in
  // (file_path: full URIs).
  std::vector<DataFile> files;
  // Delete files of the default spec (an upsert's equality deletes, content kEqualityDeletes,
  // metrics filled in), added in one new delete manifest of the same snapshot. With any, the
  // snapshot is an `overwrite` (a `delete` when `files` is empty): Iceberg's row delta.
  // Format 3 deletion vectors (content kPositionDeletes, file_format PUFFIN) go here too.
  std::vector<DataFile> delete_files;
  // The live deletion vectors this snapshot replaces (their data files' new vectors in
  // delete_files hold their positions too): delete manifest path → the vectors'
  // referenced_data_file values. Those manifests are written again with the vectors DELETED,
  // so a data file keeps at most one live vector.
  std::map<std::string, std::set<std::string>> replaced_dvs;
  // weir's ledger (see snapshot_ledger.h); an empty commit id writes no ledger keys.
  std::string commit_id;
  OffsetLedger ledger;
  std::map<std::string, std::string> extra_summary;
  int64_t now_ms = 0;
  // The entries of the parent snapshot's manifest list when the caller has them (it wrote that
  // list); nullptr: the list is read.
  const std::vector<ManifestFile>* parent_manifests = nullptr;
};

struct PendingSnapshot {
  TableMetadata metadata;  // the base plus the new snapshot (main moved to it)
  Snapshot snapshot;
  std::vector<ManifestFile> manifests;  // the new manifest list's entries
  std::vector<std::string> written;     // URIs of the manifests and list this attempt wrote
};

// Appends on top of main's head of `base`. A request with no files still makes a snapshot
// (its ledger moves: records consumed, none kept). Data and delete manifests are merged apart
// (a merged manifest holds one content, one spec), by the same policy.
Result<PendingSnapshot> BuildAppend(const TableIo& io, const TableMetadata& base,
                                    const AppendRequest& request, std::mt19937_64& random);

// A rewrite (compaction) on top of main's head: `remove` (fs paths of live data files) replaced
// by `files` (of the default spec, metrics filled in).
struct ReplaceRequest {
  std::set<std::string> remove;
  // Position delete files applied by the rewrite (fs paths): they leave the table with the
  // data files they name, as DELETED entries of their delete manifests.
  std::set<std::string> remove_deletes;
  // Equality delete files applied by value (fs paths): each stays as an EXISTING entry while a
  // live data file it applies to remains, and becomes a DELETED one when the rewrite removed
  // the last (the new files' sequence number is above its own: it applies to none of them).
  std::set<std::string> equality_deletes;
  std::vector<DataFile> files;
  std::map<std::string, std::string> extra_summary;
  int64_t now_ms = 0;
};

// Builds the `replace` snapshot: each manifest holding a removed file is written again with it
// as a DELETED entry (its other live entries EXISTING, ids and sequence numbers kept), the added
// files go into one new manifest, every other manifest is kept as it is. `found` is set to how
// many of `remove` were live; when it falls short the caller gives the rewrite up (the result
// is still built, so its written files are listed for deletion).
// `found_deletes` is how many of `remove_deletes` were live, `deleted_rows` the positions
// they delete; `blocked` names a live delete file that applies to a removed data file and is
// not among `remove_deletes` or `equality_deletes` (its deletes would be lost), or one of
// `remove_deletes` that names no removed file: the caller gives the rewrite up.
// `found_equality` is how many of `equality_deletes` were live, `equality_files_dropped` how
// many of them left the table.
struct ReplaceCheck {
  size_t found = 0;
  size_t found_deletes = 0;
  int64_t deleted_rows = 0;
  size_t found_equality = 0;
  int64_t equality_files_dropped = 0;
  std::string blocked;
};
Result<PendingSnapshot> BuildReplace(const TableIo& io, const TableMetadata& base,
                                     const ReplaceRequest& request, std::mt19937_64& random,
                                     ReplaceCheck& check);

// Writes `snapshot`'s manifest list (snapshot.manifest_list) over `manifests`. On a format 3
// table it first gives the data manifests without one a first_row_id from base's next-row-id
// (AssignFirstRowIds) and sets the snapshot's first-row-id and added-rows, so AddSnapshot
// moves next-row-id past them. Every snapshot builder (append, replace, delete) ends here.
Status WriteSnapshotList(const TableIo& io, const TableMetadata& base, Snapshot& snapshot,
                         std::vector<ManifestFile>& manifests);

// `<location>/metadata/v<version>.metadata.json`, the file-system tables' naming.
std::string VersionedMetadataUri(const TableMetadata& metadata, int version);
// `<location>/metadata/<NNNNN>-<uuid>.metadata.json`, as catalogs (Java's, pyiceberg's) name them.
std::string CatalogMetadataUri(const TableMetadata& metadata, int version, std::mt19937_64& random);
// The version of a metadata file's name (v3.metadata.json or 00003-<uuid>.metadata.json → 3;
// gzip's .gz.metadata.json too), or -1 when the name has none.
int MetadataVersionOf(std::string_view uri);
// Writes metadata JSON to `uri` (refusing to overwrite: a concurrent writer of the same version
// must fail, not replace).
Status WriteMetadataFile(const TableIo& io, const std::string& uri, const TableMetadata& metadata);
// Writes `<location>/metadata/version-hint.text` holding `version`.
Status WriteVersionHint(const TableIo& io, const TableMetadata& metadata, int version);
Result<TableMetadata> ReadMetadataFile(const TableIo& io, const std::string& uri);

// A random lower-case UUID (version 4) for file names.
std::string RandomUuid(std::mt19937_64& random);

}  // namespace weir::lake::iceberg
