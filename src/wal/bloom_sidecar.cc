#include "wal/bloom_sidecar.h"

#include <algorithm>
#include <charconv>

#include <arrow/builder.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/table.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/bloom_filter_reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

#include "base/text.h"

namespace weir::wal {
namespace {

constexpr const char* kFormatKey = "weir.sidecar.format";
constexpr const char* kDataFileKey = "weir.sidecar.data_file";
constexpr const char* kDataSizeKey = "weir.sidecar.data_file_size";
constexpr const char* kColumnsKey = "weir.sidecar.columns";
constexpr std::string_view kDataSuffix = ".parquet";
constexpr std::string_view kSidecarSuffix = ".bloom";

Status Corrupt(const std::string& why) {
  return ClassifiedError(ErrorClass::kFatal, "wal", "bloom_sidecar", "bloom sidecar: " + why);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::shared_ptr<arrow::Schema> SidecarSchema(const BloomSidecar& sidecar) {
  auto metadata =
      arrow::key_value_metadata({kFormatKey, kDataFileKey, kDataSizeKey, kColumnsKey},
                                {std::string(kBloomSidecarFormat), sidecar.data_file,
                                 std::to_string(sidecar.data_file_size), Join(sidecar.columns)});
  return arrow::schema({arrow::field("row_group", arrow::int32(), false),
                        arrow::field("row_group_rows", arrow::int64(), false),
                        arrow::field("column", arrow::utf8(), false),
                        arrow::field("filter", arrow::binary(), false)},
                       metadata);
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string BloomSidecarPath(std::string_view data_path) {
  std::string out(data_path);
  if (out.ends_with(kDataSuffix)) out.resize(out.size() - kDataSuffix.size());
  return out + std::string(kSidecarSuffix);
}

std::optional<std::string> BloomSidecarDataPath(std::string_view path) {
  const std::string_view name = BaseName(path);
  if (!name.starts_with("wal-") || !name.ends_with(kSidecarSuffix)) return std::nullopt;
  return std::string(path.substr(0, path.size() - kSidecarSuffix.size())) +
         std::string(kDataSuffix);
}

Result<BloomSidecar> ReadBloomSidecar(const std::string& path,
                                      const std::vector<std::string>& columns,
                                      std::string data_file, int64_t data_file_size) {
  BloomSidecar sidecar;
  sidecar.data_file = std::move(data_file);
  sidecar.data_file_size = data_file_size;
  sidecar.columns = columns;
  std::vector<std::string> wanted;
  for (const std::string& column : columns) wanted.push_back(ToLower(column));
  WEIR_ASSIGN_OR_RAISE(auto input, arrow::io::ReadableFile::Open(path));
  try {
    auto reader = parquet::ParquetFileReader::Open(input);
    const auto metadata = reader->metadata();
    const parquet::SchemaDescriptor* schema = metadata->schema();
    std::vector<int> leaves;
    for (int i = 0; i < schema->num_columns(); ++i) {
      const std::string top = ToLower(schema->Column(i)->path()->ToDotVector().front());
      if (std::find(wanted.begin(), wanted.end(), top) != wanted.end()) leaves.push_back(i);
    }
    parquet::BloomFilterReader& filters = reader->GetBloomFilterReader();
    for (int rg = 0; rg < metadata->num_row_groups(); ++rg) {
      auto row_group = filters.RowGroup(rg);
      if (!row_group) continue;
      for (const int leaf : leaves) {
        std::unique_ptr<parquet::BloomFilter> filter = row_group->GetColumnBloomFilter(leaf);
        if (!filter) continue;
        WEIR_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
        filter->WriteTo(sink.get());
        WEIR_ASSIGN_OR_RAISE(auto bytes, sink->Finish());
        sidecar.filters.push_back(BloomSidecarFilter{rg, metadata->RowGroup(rg)->num_rows(),
                                                     schema->Column(leaf)->path()->ToDotString(),
                                                     bytes->ToString()});
      }
    }
  } catch (const parquet::ParquetException& e) {
    return ClassifiedError(ErrorClass::kFatal, "parquet", "bloom_filter",
                           "reading the bloom filters of " + path + ": " + e.what());
  }
  return sidecar;
}

Result<std::shared_ptr<arrow::Buffer>> EncodeBloomSidecar(const BloomSidecar& sidecar) {
  arrow::Int32Builder row_groups;
  arrow::Int64Builder rows;
  arrow::StringBuilder columns;
  arrow::BinaryBuilder filters;
  for (const BloomSidecarFilter& f : sidecar.filters) {
    WEIR_RETURN_NOT_OK(row_groups.Append(f.row_group));
    WEIR_RETURN_NOT_OK(rows.Append(f.row_group_rows));
    WEIR_RETURN_NOT_OK(columns.Append(f.column));
    WEIR_RETURN_NOT_OK(filters.Append(f.filter));
  }
  std::vector<std::shared_ptr<arrow::Array>> arrays(4);
  WEIR_RETURN_NOT_OK(row_groups.Finish(&arrays[0]));
  WEIR_RETURN_NOT_OK(rows.Finish(&arrays[1]));
  WEIR_RETURN_NOT_OK(columns.Finish(&arrays[2]));
  WEIR_RETURN_NOT_OK(filters.Finish(&arrays[3]));
  const auto table = arrow::Table::Make(SidecarSchema(sidecar), arrays);
  WEIR_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  auto properties = parquet::WriterProperties::Builder()
                        .compression(parquet::Compression::UNCOMPRESSED)
                        ->disable_dictionary()
                        ->build();
  auto arrow_properties = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  WEIR_RETURN_NOT_OK(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), sink,
                                                /*chunk_size=*/1 << 20, properties,
                                                arrow_properties));
  return sink->Finish();
}

Result<BloomSidecar> DecodeBloomSidecar(std::shared_ptr<arrow::Buffer> bytes) {
  auto input = std::make_shared<arrow::io::BufferReader>(std::move(bytes));
  std::unique_ptr<parquet::arrow::FileReader> reader;
  std::shared_ptr<arrow::Table> table;
  try {
    WEIR_ASSIGN_OR_RAISE(reader, parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
    WEIR_ASSIGN_OR_RAISE(table, reader->ReadTable());
  } catch (const parquet::ParquetException& e) {
    return Corrupt(std::string("not a readable Parquet file: ") + e.what());
  }
  const auto metadata = reader->parquet_reader()->metadata()->key_value_metadata();
  if (!metadata) return Corrupt("no key-value metadata");
  const auto format = metadata->Get(kFormatKey);
  if (!format.ok() || *format != kBloomSidecarFormat) {
    return Corrupt(std::string(kFormatKey) + " is not " + std::string(kBloomSidecarFormat));
  }
  BloomSidecar sidecar;
  WEIR_ASSIGN_OR_RAISE(sidecar.data_file, metadata->Get(kDataFileKey));
  WEIR_ASSIGN_OR_RAISE(const std::string size, metadata->Get(kDataSizeKey));
  const auto [end, error] =
      std::from_chars(size.data(), size.data() + size.size(), sidecar.data_file_size);
  if (error != std::errc() || end != size.data() + size.size()) {
    return Corrupt(std::string(kDataSizeKey) + " \"" + size + "\" is not a size");
  }
  WEIR_ASSIGN_OR_RAISE(const std::string columns, metadata->Get(kColumnsKey));
  if (!columns.empty()) sidecar.columns = Split(columns);
  const std::vector<std::string> names = {"row_group", "row_group_rows", "column", "filter"};
  for (const std::string& name : names) {
    if (!table->GetColumnByName(name)) return Corrupt("no column " + name);
  }
  WEIR_ASSIGN_OR_RAISE(table, table->CombineChunks());
  const auto& rg =
      static_cast<const arrow::Int32Array&>(*table->GetColumnByName(names[0])->chunk(0));
  const auto& rows =
      static_cast<const arrow::Int64Array&>(*table->GetColumnByName(names[1])->chunk(0));
  const auto& column =
      static_cast<const arrow::StringArray&>(*table->GetColumnByName(names[2])->chunk(0));
  const auto& filter =
      static_cast<const arrow::BinaryArray&>(*table->GetColumnByName(names[3])->chunk(0));
  for (int64_t i = 0; i < table->num_rows(); ++i) {
    sidecar.filters.push_back(BloomSidecarFilter{rg.Value(i), rows.Value(i),
                                                 std::string(column.GetView(i)),
                                                 std::string(filter.GetView(i))});
  }
  return sidecar;
}

Result<parquet::BlockSplitBloomFilter> OpenBloomFilter(const BloomSidecarFilter& entry) {
  arrow::io::BufferReader input(std::make_shared<arrow::Buffer>(entry.filter));
  try {
    return parquet::BlockSplitBloomFilter::Deserialize(parquet::default_reader_properties(), &input,
                                                       static_cast<int64_t>(entry.filter.size()));
  } catch (const parquet::ParquetException& e) {
    return Corrupt("filter of row group " + std::to_string(entry.row_group) + " column " +
                   entry.column + ": " + e.what());
  }
}

}  // namespace weir::wal
