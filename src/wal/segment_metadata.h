// What a segment file's Parquet footer says about it beyond its name: the table partition its
// rows belong to, so the committer can describe the file to the catalog after a restart
// without the rows. Stored as key-value metadata:
//   weir.partition_values        the number of partition keys, n
//   weir.partition_value.<i>     the i-th value in the table's text form; absent for null
//   weir.wal.rejects             "1" on a rejects segment (rows for the dataset's rejects
//                                table, not its table: docs/ARCHITECTURE.md "Rejects in WAL mode")
#pragma once

#include <map>
#include <string>
#include <vector>

#include <arrow/util/key_value_metadata.h>

#include "base/status.h"
#include "lake/table.h"

namespace weir::wal {

std::map<std::string, std::string> PartitionMetadata(
    const std::vector<lake::PartitionValue>& values);

// The footer metadata of a rejects segment, and the rotator's partition key for it (no table
// partition key can take this spelling: those end with '|' or are empty).
std::map<std::string, std::string> RejectsMetadata();
inline constexpr const char* kRejectsPartitionKey = "#rejects";

Result<std::vector<lake::PartitionValue>> ParsePartitionMetadata(
    const arrow::KeyValueMetadata& metadata);

// The footer of the Parquet file at `path`: rows and key-value metadata.
struct SegmentFooter {
  int64_t rows = 0;
  int64_t footer_bytes = 0;  // the serialized footer metadata
  std::vector<lake::PartitionValue> partition_values;
  bool rejects = false;  // a rejects segment: its rows go to the rejects table
};
Result<SegmentFooter> ReadSegmentFooter(const std::string& path);

// The object a ready file becomes under `table`: the directory the table gives rows of
// `values`, and a name from the file's UUID, so a repeated upload replaces the same object.
std::string ObjectPath(lake::Table& table, const std::vector<lake::PartitionValue>& values,
                       const std::string& uuid);

}  // namespace weir::wal
