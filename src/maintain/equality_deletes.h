// Equality deletes applied by value while compacting (Iceberg upsert tables): the rows of a
// data file whose key columns equal a row of one of its equality delete files
// (lake::LakeFile::equality_deletes), as row positions for SortedMerge to skip.
//
// Columns are matched by Parquet field id; a key column the data file lacks reads as null
// there (Iceberg's rule for a column added later), and a null equals a null. Values compare
// in lake::EncodeRowKeys' canonical form, so an int key equals the same bigint one. Each
// delete file is read once per EqualityDeletes (the key sets of one merge run are kept until
// it ends: their size is that of the delete files' key columns).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <arrow/filesystem/filesystem.h>

#include "base/status.h"
#include "lake/inspection.h"

namespace weir::maintain {

class EqualityDeletes {
 public:
  explicit EqualityDeletes(std::shared_ptr<arrow::fs::FileSystem> fs) : fs_(std::move(fs)) {}

  // The positions of `file`'s rows its equality delete files delete, ascending and distinct.
  Result<std::vector<int64_t>> DeletedPositions(const lake::LakeFile& file);

 private:
  struct KeySet {
    std::unordered_set<std::string> keys;
    // The key columns' types in the delete file, for a data file that lacks one of them.
    std::vector<std::shared_ptr<arrow::DataType>> types;
  };
  Result<const KeySet*> Load(const lake::EqualityDeletes& deletes);

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::unordered_map<std::string, KeySet> loaded_;  // by delete file path
};

}  // namespace weir::maintain
