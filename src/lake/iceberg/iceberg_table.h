// One Iceberg table as the pipeline sees it (lake::Table): columns with Iceberg field ids,
// Iceberg's transforms, the offset ledger in snapshot summaries, and a commit that is one
// compare-and-swap attempt through the catalog (lake/iceberg/metadata_store.h).
//
// Partition values travel as text of the transform's result value (ints as decimal, strings
// verbatim, booleans true/false, floats in shortest round-trip form); NewFilePath and Commit
// turn them back into the manifest's partition tuple.
//
// Threading: one thread at a time; the table owns its catalog connection. Commit makes one
// attempt and never waits: conflicts are the caller's to retry (lake/table.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/uuid.h"
#include "lake/iceberg/catalog.h"
#include "lake/iceberg/metadata_store.h"
#include "lake/table.h"

namespace weir::lake::iceberg {

class IcebergTable final : public lake::Table {
 public:
  IcebergTable(std::unique_ptr<MetadataStore> store, TableIo io, TableIdent ident,
               CurrentMetadata current);

  const std::string& name() const override { return name_; }
  const std::vector<Column>& columns() const override { return columns_; }
  const std::vector<PartitionKey>& partitioning() const override { return partitioning_; }
  // Adds columns and promotes int→long, float→double in one new schema (other promotions are
  // kRefused); a lost race re-reads the table and tries again.
  Result<EvolveResult> Evolve(const SchemaChange& change) override;
  // Iceberg's transforms of the rows' source values (year/month/day/hour since 1970, Murmur3
  // buckets, truncation).
  Result<std::vector<PartitionGroup>> Partition(const arrow::RecordBatch& rows) const override;
  // The ledger of the newest weir snapshot in main's ancestry.
  Result<std::map<int32_t, int64_t>> ReadLedger(const std::string& topic) override;
  std::shared_ptr<arrow::fs::FileSystem> filesystem() const override { return io_.fs; }
  std::string DataDirectory() const override { return data_directory_; }
  // "<partition path>/<uuidv7>.parquet" under the table's data/ directory.
  std::string NewFilePath(const std::vector<PartitionValue>& partition_values) override;
  // Reloads the table, checks the fence against its ledger, builds the snapshot (manifest,
  // list, summary with the new ledger and the writer id) and commits it with one CAS. Right
  // after its own commit the handle skips the reload and commits on the catalog's answer; a
  // refusal or a negative verdict on that state is retried once on a fresh read. It takes
  // no companion: the rejects table commits on its own, with its own ledger (README.md).
  // With key_deletes, the snapshot also adds equality delete files on the key columns, one
  // per partition tuple of the keys, in a delete manifest: an `overwrite` (`delete` when the
  // flush holds only tombstones) that deletes every older row of those keys
  // (iceberg_table_upsert.cc); with UseDeletionVectors, one deletion vector per data file
  // holding such rows instead, replacing the file's current one (iceberg_table_dv.cc).
  Result<lake::CommitResult> Commit(const CommitRequest& request) override;
  bool DeletesByKey() const override { return true; }
  // The snapshot of main's ancestry whose summary carries the request's writer id.
  Result<std::optional<int64_t>> FindCommit(const CommitRequest& request) override;
  // A `replace` snapshot on main's head: the removed files' manifests rewritten with them as
  // DELETED entries, one new manifest of the added files; no ledger keys in its summary (the
  // ledger lookup walks past it to the newest weir snapshot). One compare-and-swap attempt
  // (iceberg_table_rewrite.cc).
  Result<lake::CommitResult> Rewrite(const RewriteRequest& request) override;
  // Every kept snapshot's manifest list and manifests, read fresh (iceberg_table_inspect.cc).
  Result<TableInspection> Inspect() override;
  Result<std::vector<int64_t>> ReadDeletionVector(const PositionDeletes& deletes) override;
  // One metadata change removing the snapshots (REST: remove-snapshots with main's head
  // asserted; SQL: compare-and-swap), retried on conflict; then deletes every object the removed
  // snapshots alone referenced (manifest lists, manifests, data files), as Iceberg's own expiry
  // does. The old metadata file stays in the metadata log.
  Result<ExpireResult> ExpireSnapshots(const std::vector<int64_t>& ids,
                                       int64_t queue_window_ms) override;
  // A `delete` snapshot whose rewritten manifests mark the files DELETED
  // (iceberg_table_repair.cc).
  Result<DropFilesResult> DropDataFiles(const std::vector<std::string>& paths,
                                        const std::string& reason) override;

  const TableMetadata& metadata() const { return current_.metadata; }
  // An upsert's deletes as deletion vectors (format 3 tables; upsert.iceberg_deletes) rather
  // than equality delete files. Set once, after opening.
  void UseDeletionVectors(bool on) { deletion_vectors_ = on; }
  // Compares the live default spec with `wanted` (a fatal error naming both layouts).
  Status CheckPartitioning(const std::vector<PartitionKey>& wanted) const;

 private:
  // Reads the table's current metadata; false when it is gone.
  Result<bool> Reload();
  void Adopt(CurrentMetadata current);
  Result<std::vector<Value>> PartitionTupleOf(const std::vector<PartitionValue>& values) const;
  Result<iceberg::DataFile> ManifestFileOf(const lake::DataFile& file) const;
  // Writes the equality delete files of `deletes` under the data directory (their fs paths
  // are added to `paths` before each is written, so a failed attempt can delete them).
  Result<std::vector<iceberg::DataFile>> WriteEqualityDeletes(const KeyDeletes& deletes,
                                                              std::vector<std::string>& paths);
  // The deletion vectors of an upsert's keys on current_, whose main head lists `manifests`
  // (iceberg_table_dv.cc): one per data file holding rows of the keys, merged with its current
  // vector, all in one Puffin file under the data directory (its fs path is added to `paths`
  // before it is written).
  struct DvPlan {
    std::vector<iceberg::DataFile> files;  // the new vectors' manifest entries
    // The vectors they replace: delete manifest path → referenced data files.
    std::map<std::string, std::set<std::string>> replaced;
    int64_t rows = 0;        // positions deleted that were not deleted before
    int64_t files_read = 0;  // data files whose key columns were read
  };
  Result<DvPlan> PlanDeletionVectors(const KeyDeletes& deletes,
                                     const std::vector<ManifestFile>& manifests,
                                     std::vector<std::string>& paths);
  // One commit attempt on current_. `verified`: current_ was just read from the catalog; when
  // false (the state this handle's previous commit left), an answer that a stale state could
  // cause (fenced, table changed, conflict, refused) is nullopt: read the table and try again.
  Result<std::optional<lake::CommitResult>> TryCommit(const CommitRequest& request, int spec_before,
                                                      bool verified);

  std::unique_ptr<MetadataStore> store_;
  TableIo io_;
  TableIdent ident_;
  std::string name_;
  CurrentMetadata current_;
  std::vector<Column> columns_;
  std::vector<PartitionKey> partitioning_;
  std::string data_uri_;        // <location>/data/
  std::string data_directory_;  // the same as a file-system path
  std::mt19937_64 random_;
  UuidV7Generator uuids_;
  // current_ is the catalog's answer to this handle's last commit, not read since.
  bool current_is_own_commit_ = false;
  bool deletion_vectors_ = false;
  // The manifest list this handle last committed (its location and entries).
  std::optional<std::pair<std::string, std::vector<ManifestFile>>> last_list_;
};

// A partition value in the text form lake::PartitionValue travels in (Partition, NewFilePath).
PartitionValue ValueText(const Value& value);

// Iceberg's type of a weir column type, and back (kOther for types weir does not write).
Type IcebergTypeOf(ColumnType type);
ColumnType ColumnTypeOf(const Type& type);
// The lake transform of an Iceberg one (nullopt: void or unknown).
std::optional<lake::Transform> LakeTransformOf(const Transform& transform);

}  // namespace weir::lake::iceberg
