#include "lake/iceberg/delete_scope.h"

#include <algorithm>
#include <cctype>

namespace weir::lake::iceberg {
namespace {

std::string FormatOf(const DataFile& f) {
  std::string format = f.file_format;
  std::transform(format.begin(), format.end(), format.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return format;
}
bool IsPuffin(const DataFile& f) { return FormatOf(f) == "PUFFIN"; }
bool IsParquet(const DataFile& f) { return FormatOf(f) == "PARQUET"; }

const std::string* Bound(const std::map<int, std::string>& bounds) {
  const auto found = bounds.find(kDeleteFilePathFieldId);
  return found == bounds.end() ? nullptr : &found->second;
}

}  // namespace

DeleteScope ScopeOf(const ScopedFile& deletes, const ScopedFile& data) {
  const DataFile& d = deletes.entry->data_file;
  const DataFile& f = data.entry->data_file;
  const int64_t delete_seq = deletes.entry->sequence_number.value_or(0);
  const int64_t data_seq = data.entry->sequence_number.value_or(0);
  if (d.content == FileContent::kEqualityDeletes) {
    if (delete_seq <= data_seq) return DeleteScope::kNone;
    if (!deletes.spec_unpartitioned &&
        (deletes.spec_id != data.spec_id || d.partition != f.partition)) {
      return DeleteScope::kNone;
    }
    return d.equality_ids.empty() || !IsParquet(d) ? DeleteScope::kOther : DeleteScope::kEquality;
  }
  if (d.content != FileContent::kPositionDeletes) return DeleteScope::kNone;
  if (delete_seq < data_seq) return DeleteScope::kNone;
  if (deletes.spec_id != data.spec_id || d.partition != f.partition) return DeleteScope::kNone;
  // The data file it names: referenced_data_file, or equal bounds of its file_path column.
  std::optional<std::string> named = d.referenced_data_file;
  const std::string* lower = Bound(d.lower_bounds);
  const std::string* upper = Bound(d.upper_bounds);
  if (!named && lower != nullptr && upper != nullptr && *lower == *upper) named = *lower;
  if (named) {
    if (*named != f.file_path) return DeleteScope::kNone;
    if (!IsPuffin(d)) return DeleteScope::kThisFile;
    return d.content_offset && d.content_size_in_bytes ? DeleteScope::kVector : DeleteScope::kOther;
  }
  // Bounds (never truncated for file_path by Iceberg's writers) that exclude the file.
  if (lower != nullptr && f.file_path < *lower) return DeleteScope::kNone;
  if (upper != nullptr && f.file_path > *upper) return DeleteScope::kNone;
  return DeleteScope::kOther;
}

bool IsDeletionVector(const DataFile& deletes) {
  return deletes.content == FileContent::kPositionDeletes && IsPuffin(deletes);
}

std::string UnappliedReason(const ManifestEntry& deletes) {
  const DataFile& d = deletes.data_file;
  if (d.content == FileContent::kEqualityDeletes) {
    return d.equality_ids.empty() ? "equality deletes of no column"
                                  : "equality deletes not in Parquet";
  }
  if (IsPuffin(d)) return "deletion vectors without a blob offset";
  return "position delete files that may name other data files too";
}

}  // namespace weir::lake::iceberg
