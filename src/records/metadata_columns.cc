#include "records/metadata_columns.h"

#include <set>

#include <arrow/type.h>
#include <fmt/format.h>
#include <simdjson.h>

#include "base/text.h"
#include "decode/field_names.h"

namespace weir::records {
namespace {

constexpr size_t kMaxColumnName = 63;

Status RefuseMetadataColumns(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "records", "invalid_metadata_columns",
                         std::move(message));
}

std::shared_ptr<arrow::DataType> ArrowTypeOf(MetadataSource source) {
  switch (source) {
    case MetadataSource::kPartition:
    case MetadataSource::kOffset:
      return arrow::int64();
    case MetadataSource::kTimestamp:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case MetadataSource::kTopic:
    case MetadataSource::kKey:
    case MetadataSource::kHeader:
      break;
  }
  return arrow::utf8();
}

}  // namespace

Result<std::vector<MetadataColumn>> ParseMetadataColumns(const std::vector<std::string>& items) {
  std::vector<MetadataColumn> out;
  std::set<std::string> seen;
  for (const std::string& item : items) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      return RefuseMetadataColumns(
          fmt::format("\"{}\" is not column:source (source: topic, partition, offset, "
                      "timestamp, key or header.<name>)",
                      item));
    }
    MetadataColumn column;
    column.column = std::string(TrimBlanks(std::string_view(item).substr(0, colon)));
    const std::string_view source = TrimBlanks(std::string_view(item).substr(colon + 1));
    const auto check = decode::CheckFieldName(column.column, kMaxColumnName);
    if (check.problem || check.renamed) {
      return RefuseMetadataColumns(fmt::format(
          "\"{}\": column \"{}\" is not a column name weir writes as is ({}; an identifier "
          "[A-Za-z_][A-Za-z0-9_]* of at most {} bytes, not a reserved name)",
          item, column.column,
          check.problem ? decode::ToString(*check.problem) : std::string_view("renamed"),
          kMaxColumnName));
    }
    if (source == "topic") {
      column.source = MetadataSource::kTopic;
    } else if (source == "partition") {
      column.source = MetadataSource::kPartition;
    } else if (source == "offset") {
      column.source = MetadataSource::kOffset;
    } else if (source == "timestamp") {
      column.source = MetadataSource::kTimestamp;
    } else if (source == "key") {
      column.source = MetadataSource::kKey;
    } else if (source.substr(0, 7) == "header." && source.size() > 7) {
      column.source = MetadataSource::kHeader;
      column.header = std::string(source.substr(7));
    } else {
      return RefuseMetadataColumns(
          fmt::format("\"{}\": unknown source \"{}\" (topic, partition, offset, "
                      "timestamp, key or header.<name>)",
                      item, source));
    }
    if (!seen.insert(decode::FoldName(column.column)).second) {
      return RefuseMetadataColumns(
          fmt::format("\"{}\": column \"{}\" is given twice (names are compared "
                      "case-insensitively)",
                      item, column.column));
    }
    out.push_back(std::move(column));
  }
  return out;
}

Status CheckMetadataCollisions(const std::vector<MetadataColumn>& columns,
                               const std::vector<std::string>& configured, std::string_view what) {
  for (const auto& column : columns) {
    for (const auto& name : configured) {
      if (decode::SameColumnName(column.column, name)) {
        return RefuseMetadataColumns(
            fmt::format("column \"{}\" is also {} \"{}\"; give the metadata column "
                        "another name",
                        column.column, what, name));
      }
    }
  }
  return Status::OK();
}

MetadataColumnsBuilder::MetadataColumnsBuilder(std::vector<MetadataColumn> columns,
                                               arrow::MemoryPool* pool)
    : columns_(std::move(columns)) {
  for (const auto& column : columns_) {
    int index = -1;
    if (column.source == MetadataSource::kHeader) {
      for (size_t h = 0; h < header_names_.size(); ++h) {
        if (header_names_[h] == column.header) index = static_cast<int>(h);
      }
      if (index < 0) {
        index = static_cast<int>(header_names_.size());
        header_names_.push_back(column.header);
      }
    }
    header_index_.push_back(index);
    switch (column.source) {
      case MetadataSource::kPartition:
      case MetadataSource::kOffset:
        builders_.push_back(std::make_unique<arrow::Int64Builder>(pool));
        break;
      case MetadataSource::kTimestamp:
        builders_.push_back(
            std::make_unique<arrow::TimestampBuilder>(ArrowTypeOf(column.source), pool));
        break;
      default:
        builders_.push_back(std::make_unique<arrow::StringBuilder>(pool));
    }
  }
}

Result<std::unique_ptr<MetadataColumnsBuilder>> MetadataColumnsBuilder::Make(
    std::vector<MetadataColumn> columns, arrow::MemoryPool* pool) {
  if (columns.empty()) return Status::Invalid("no metadata columns");
  return std::unique_ptr<MetadataColumnsBuilder>(
      new MetadataColumnsBuilder(std::move(columns), pool));
}

Status MetadataColumnsBuilder::AppendText(arrow::StringBuilder& builder,
                                          std::optional<std::string_view> value) {
  if (!value) return builder.AppendNull();
  if (!simdjson::validate_utf8(value->data(), value->size())) {
    ++invalid_utf8_;
    return builder.AppendNull();
  }
  text_bytes_ += static_cast<int64_t>(value->size());
  return builder.Append(*value);
}

Status MetadataColumnsBuilder::Append(const RecordMetadata& record) {
  for (size_t c = 0; c < columns_.size(); ++c) {
    arrow::ArrayBuilder& builder = *builders_[c];
    switch (columns_[c].source) {
      case MetadataSource::kTopic:
        WEIR_RETURN_NOT_OK(AppendText(static_cast<arrow::StringBuilder&>(builder),
                                      std::string_view(record.topic)));
        break;
      case MetadataSource::kPartition:
        WEIR_RETURN_NOT_OK(static_cast<arrow::Int64Builder&>(builder).Append(record.partition));
        break;
      case MetadataSource::kOffset:
        WEIR_RETURN_NOT_OK(static_cast<arrow::Int64Builder&>(builder).Append(record.offset));
        break;
      case MetadataSource::kTimestamp: {
        auto& timestamps = static_cast<arrow::TimestampBuilder&>(builder);
        if (record.timestamp_ms < 0) {
          WEIR_RETURN_NOT_OK(timestamps.AppendNull());
        } else {
          WEIR_RETURN_NOT_OK(timestamps.Append(record.timestamp_ms * 1000));
        }
        break;
      }
      case MetadataSource::kKey:
        WEIR_RETURN_NOT_OK(AppendText(static_cast<arrow::StringBuilder&>(builder), record.key));
        break;
      case MetadataSource::kHeader: {
        const auto index = static_cast<size_t>(header_index_[c]);
        const std::optional<std::string_view> value =
            index < record.headers.size() ? record.headers[index] : std::nullopt;
        WEIR_RETURN_NOT_OK(AppendText(static_cast<arrow::StringBuilder&>(builder), value));
        break;
      }
    }
  }
  ++rows_;
  return Status::OK();
}

int64_t MetadataColumnsBuilder::buffered_bytes() const {
  return rows_ * static_cast<int64_t>(columns_.size()) * 9 + text_bytes_;
}

Result<std::shared_ptr<arrow::RecordBatch>> MetadataColumnsBuilder::AttachTo(
    std::shared_ptr<arrow::RecordBatch> batch, int64_t* dropped_values) {
  if (batch->num_rows() != rows_) {
    return Status::Invalid("metadata columns hold ", rows_, " rows, the batch ", batch->num_rows());
  }
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (int f = 0; f < batch->num_columns(); ++f) {
    const auto& name = batch->schema()->field(f)->name();
    bool collides = false;
    for (const auto& column : columns_)
      collides = collides || decode::SameColumnName(name, column.column);
    if (collides) {
      *dropped_values += batch->column(f)->length() - batch->column(f)->null_count();
      continue;
    }
    fields.push_back(batch->schema()->field(f));
    arrays.push_back(batch->column(f));
  }
  for (size_t c = 0; c < columns_.size(); ++c) {
    std::shared_ptr<arrow::Array> array;
    WEIR_RETURN_NOT_OK(builders_[c]->Finish(&array));
    fields.push_back(arrow::field(columns_[c].column, ArrowTypeOf(columns_[c].source)));
    arrays.push_back(std::move(array));
  }
  const int64_t rows = rows_;
  rows_ = 0;
  text_bytes_ = 0;
  return arrow::RecordBatch::Make(arrow::schema(std::move(fields)), rows, std::move(arrays));
}

void MetadataColumnsBuilder::Reset() {
  for (auto& builder : builders_) builder->Reset();
  rows_ = 0;
  text_bytes_ = 0;
}

}  // namespace weir::records
