#include "wal/wal_directory.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <tuple>

namespace weir::wal {

Result<std::vector<SegmentEntry>> ListSegments(const std::string& directory) {
  namespace fs = std::filesystem;
  std::vector<SegmentEntry> entries;
  std::error_code error;
  if (!fs::exists(directory, error)) return entries;
  fs::directory_iterator it(directory, error);
  if (error) return Status::IOError("WAL directory ", directory, ": ", error.message());
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) return Status::IOError("WAL directory ", directory, ": ", error.message());
    if (!it->is_regular_file(error)) continue;
    SegmentEntry entry;
    entry.path = it->path().string();
    entry.file_name = it->path().filename().string();
    entry.name = ParseSegmentName(entry.file_name);
    const auto size = it->file_size(error);
    entry.size_bytes = error ? 0 : static_cast<int64_t>(size);
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(), [](const SegmentEntry& a, const SegmentEntry& b) {
    if (a.name.has_value() != b.name.has_value()) return a.name.has_value();
    if (!a.name) return a.file_name < b.file_name;
    return std::tie(a.name->topic, a.name->partition, a.name->start, a.name->id) <
           std::tie(b.name->topic, b.name->partition, b.name->start, b.name->id);
  });
  return entries;
}

}  // namespace weir::wal
