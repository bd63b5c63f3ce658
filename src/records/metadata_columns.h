// Kafka metadata columns (issue 14): opt-in per dataset (`metadata_columns`), each row of a
// flush also gets, under names the configuration chooses, its record's topic (varchar),
// partition and offset (bigint), timestamp (timestamptz, null when the record has none), key
// (varchar, null when the key is null) and selected headers (varchar each, the last header of
// that name, null when absent). A key or header value that is not valid UTF-8 is nulled and
// counted (`invalid_utf8`).
//
// The values are collected next to the decoder (one Append per decoded row, never per
// rejected record) and attached to the decoder's batch when the buffer is sealed, so datasets
// without metadata columns pay nothing and the JSON decoders are untouched.
//
// Collisions: a configured name that is also a typed column, a mapping column or another
// metadata column (in any case) refuses startup (CheckMetadataCollisions). A payload field of
// the same name (in any case) is dropped from the batch, counted per value as
// `fields_dropped{reason="metadata_column"}`: the metadata column wins, the way millpond strips
// payload fields that would collide with a `*_variant` companion, so a producer cannot forge
// or wedge the column.
//
// Threading: one builder per dataset buffer, used by one thread at a time (the poll thread
// appends and attaches).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/builder.h>
#include <arrow/record_batch.h>

#include "base/status.h"

namespace weir::records {

enum class MetadataSource { kTopic, kPartition, kOffset, kTimestamp, kKey, kHeader };

struct MetadataColumn {
  std::string column;
  MetadataSource source = MetadataSource::kTopic;
  std::string header;  // kHeader: the header's name (exact, case-sensitive)
};

// Parses `column:source` items, source one of topic, partition, offset, timestamp, key or
// header.<name>. Invalid: an item without `:`, a column name the field-name policy does not
// accept as is (an identifier of at most 63 bytes, not reserved or renamed), an unknown source,
// an empty header name, a column given twice (in any case). The error names the item.
Result<std::vector<MetadataColumn>> ParseMetadataColumns(const std::vector<std::string>& items);

// Refuses a metadata column whose name (in any case) is also one of `configured` (typed
// columns, mapping columns), naming `what` it collides with.
Status CheckMetadataCollisions(const std::vector<MetadataColumn>& columns,
                               const std::vector<std::string>& configured, std::string_view what);

// One record's metadata, as the consumer delivers it.
struct RecordMetadata {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;  // < 0: none
  std::optional<std::string_view> key;
  // The values of MetadataColumnsBuilder::header_names(), in that order.
  std::vector<std::optional<std::string_view>> headers;
};

class MetadataColumnsBuilder {
 public:
  static Result<std::unique_ptr<MetadataColumnsBuilder>> Make(std::vector<MetadataColumn> columns,
                                                              arrow::MemoryPool* pool);

  // The distinct header names the columns read, in the order RecordMetadata::headers holds.
  const std::vector<std::string>& header_names() const { return header_names_; }

  Status Append(const RecordMetadata& record);
  int64_t num_rows() const { return rows_; }
  int64_t buffered_bytes() const;
  // Key and header values nulled because they were not valid UTF-8 (grows).
  int64_t invalid_utf8() const { return invalid_utf8_; }

  // `batch` (of num_rows() rows) with the metadata columns appended after its own columns and
  // every payload field sharing a metadata column's name removed (its non-null values added to
  // *dropped_values); then starts empty.
  Result<std::shared_ptr<arrow::RecordBatch>> AttachTo(std::shared_ptr<arrow::RecordBatch> batch,
                                                       int64_t* dropped_values);
  // Forgets every appended row (a buffer abandoned).
  void Reset();

 private:
  explicit MetadataColumnsBuilder(std::vector<MetadataColumn> columns, arrow::MemoryPool* pool);
  Status AppendText(arrow::StringBuilder& builder, std::optional<std::string_view> value);

  std::vector<MetadataColumn> columns_;
  std::vector<int> header_index_;  // per column: index into header_names_ (kHeader), else -1
  std::vector<std::string> header_names_;
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders_;
  int64_t rows_ = 0;
  int64_t text_bytes_ = 0;
  int64_t invalid_utf8_ = 0;
};

}  // namespace weir::records
