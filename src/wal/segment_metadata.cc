#include "wal/segment_metadata.h"

#include <charconv>

#include <arrow/io/file.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

namespace weir::wal {
namespace {

constexpr const char* kCount = "weir.partition_values";
constexpr const char* kValue = "weir.partition_value.";
constexpr const char* kRejects = "weir.wal.rejects";

}  // namespace

std::map<std::string, std::string> PartitionMetadata(
    const std::vector<lake::PartitionValue>& values) {
  std::map<std::string, std::string> out{{kCount, std::to_string(values.size())}};
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i]) out[kValue + std::to_string(i)] = *values[i];
  }
  return out;
}

std::map<std::string, std::string> RejectsMetadata() { return {{kCount, "0"}, {kRejects, "1"}}; }

Result<std::vector<lake::PartitionValue>> ParsePartitionMetadata(
    const arrow::KeyValueMetadata& metadata) {
  const auto count_text = metadata.Get(kCount);
  if (!count_text.ok()) return std::vector<lake::PartitionValue>();  // no table partition
  size_t count = 0;
  const std::string& text = *count_text;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc() || end != text.data() + text.size() || count > 64) {
    return Status::Invalid("WAL footer: ", kCount, " \"", text, "\" is not a count");
  }
  std::vector<lake::PartitionValue> values(count);
  for (size_t i = 0; i < count; ++i) {
    const auto value = metadata.Get(kValue + std::to_string(i));
    if (value.ok()) values[i] = *value;
  }
  return values;
}

Result<SegmentFooter> ReadSegmentFooter(const std::string& path) {
  WEIR_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
  try {
    auto reader = parquet::ParquetFileReader::Open(input);
    SegmentFooter footer;
    footer.rows = reader->metadata()->num_rows();
    footer.footer_bytes = reader->metadata()->size();
    if (const auto metadata = reader->metadata()->key_value_metadata()) {
      WEIR_ASSIGN_OR_RAISE(footer.partition_values, ParsePartitionMetadata(*metadata));
      const auto rejects = metadata->Get(kRejects);
      footer.rejects = rejects.ok() && *rejects == "1";
    }
    return footer;
  } catch (const parquet::ParquetException& e) {
    return ClassifiedError(ErrorClass::kFatal, "parquet", "footer",
                           "WAL file " + path + " has no readable Parquet footer: " + e.what());
  }
}

std::string ObjectPath(lake::Table& table, const std::vector<lake::PartitionValue>& values,
                       const std::string& uuid) {
  const std::string fresh = table.NewFilePath(values);
  const size_t slash = fresh.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : fresh.substr(0, slash + 1);
  return directory + "wal-" + uuid + ".parquet";
}

}  // namespace weir::wal
