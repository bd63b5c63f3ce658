// Which delete files of a snapshot apply to a data file, by the spec's rules ("Scan
// Planning"): a position delete file applies to the data files of its partition (same spec,
// same tuple) whose data sequence number is not above its own; an equality delete file to those
// whose data sequence number is below its own, in its partition or, with an unpartitioned spec,
// in every partition. Compaction (IcebergTable::Inspect, BuildReplace) uses it to apply the
// position delete files that name one data file only and the Parquet equality delete files (by
// value), and to leave alone every data file other deletes may apply to.
#pragma once

#include <string>
#include <vector>

#include "lake/iceberg/manifest.h"

namespace weir::lake::iceberg {

// The Iceberg-reserved field id of a position delete file's `file_path` column.
inline constexpr int kDeleteFilePathFieldId = 2147483546;

enum class DeleteScope {
  kNone,      // the delete file does not apply to the data file
  kThisFile,  // a Parquet position delete file naming this data file only: a rewrite applies it
  kEquality,  // a Parquet equality delete file that applies: a rewrite applies it by value
  kVector,    // a deletion vector (Puffin) naming this data file: a rewrite applies it (and
              // drops that vector alone: other vectors of its Puffin file stay)
  kOther,     // it may apply, and a rewrite cannot apply it (position deletes that may name
              // other data files too, a vector without its blob's offset, equality deletes of
              // no column or not in Parquet)
};

struct ScopedFile {
  const ManifestEntry* entry = nullptr;  // sequence numbers resolved (ReadManifest)
  int spec_id = 0;
  bool spec_unpartitioned = false;
};

DeleteScope ScopeOf(const ScopedFile& deletes, const ScopedFile& data);

// Whether a delete file is a deletion vector (a Puffin blob of position deletes for one file).
bool IsDeletionVector(const DataFile& deletes);

// Why a delete file of scope kOther cannot be applied, for the report's notes.
std::string UnappliedReason(const ManifestEntry& deletes);

}  // namespace weir::lake::iceberg
