// Avro object container files: a small encoder and writer of weir's own (Iceberg needs the
// writer schema in the file header exactly as given, with its `field-id` properties, and
// key-value metadata, neither of which Avro C's writer can emit), and a reader over Avro C
// (which resolves any writer schema and codec other engines use).
//
// Threading: objects are used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <avro.h>

#include "base/status.h"

namespace weir::lake::iceberg {

// Avro binary encoding into a growing buffer.
class AvroEncoder {
 public:
  void Boolean(bool value) { buffer_.push_back(value ? '\x01' : '\x00'); }
  void Int(int32_t value) { Long(value); }
  void Long(int64_t value);
  void Float(float value);
  void Double(double value);
  void Bytes(std::string_view value);
  void String(std::string_view value) { Bytes(value); }
  void Fixed(std::string_view value) { buffer_.append(value); }
  void Branch(int index) { Long(index); }
  // Arrays and maps: one block of `count` items, then the end marker.
  void BlockStart(int64_t count) {
    if (count > 0) Long(count);
  }
  void BlockEnd() { Long(0); }

  const std::string& buffer() const { return buffer_; }
  std::string& buffer() { return buffer_; }

 private:
  std::string buffer_;
};

// Builds a container file in memory: records are appended encoded, blocks are deflated.
class AvroContainerWriter {
 public:
  AvroContainerWriter(std::string schema_json,
                      std::vector<std::pair<std::string, std::string>> metadata);

  // Encodes one record through `encoder()`, then calls FinishRecord().
  AvroEncoder& encoder() { return block_; }
  void FinishRecord();
  // The complete file.
  Result<std::string> Finish();

 private:
  Status FlushBlock();

  std::string schema_json_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::string sync_;
  std::string out_;
  AvroEncoder block_;
  int64_t block_records_ = 0;
};

// Writes `bytes` as the object `path` of `fs` (whole, then closed).
Status WriteWholeFile(arrow::fs::FileSystem& fs, const std::string& path, std::string_view bytes);
Result<std::string> ReadWholeFile(arrow::fs::FileSystem& fs, const std::string& path);

// Reads the records of a container file held in memory through Avro C's generic values.
class AvroFileReader {
 public:
  // `bytes` must outlive the reader; `name` is used in errors.
  static Result<std::unique_ptr<AvroFileReader>> Open(const std::string& bytes, std::string name);
  ~AvroFileReader();

  // The next record, or nullptr at the end of the file.
  Result<avro_value_t*> Next();
  const std::string& name() const { return name_; }

 private:
  AvroFileReader() = default;
  std::string name_;
  FILE* file_ = nullptr;
  avro_file_reader_t reader_ = nullptr;
  avro_value_iface_t* iface_ = nullptr;
  avro_value_t value_{};
  bool has_value_ = false;
};

// Navigation of Avro C generic values; errors name the field.
Result<avro_value_t> Field(avro_value_t& record, const char* name);
// The field's value with a union around it unwrapped; `present` says whether it was non-null
// (an absent field counts as null).
Result<bool> OptionalField(avro_value_t& record, const char* name, avro_value_t& out);
Result<int64_t> ReadLong(avro_value_t& value);  // int or long
Result<int32_t> ReadInt(avro_value_t& value);
Result<bool> ReadBool(avro_value_t& value);
Result<std::string> ReadBytes(avro_value_t& value);  // bytes, string or fixed
Result<double> ReadDouble(avro_value_t& value);      // float or double
// The non-null branch of a union (or the value itself); false when the union holds null.
Result<bool> Unwrap(avro_value_t& value, avro_value_t& out);

}  // namespace weir::lake::iceberg
