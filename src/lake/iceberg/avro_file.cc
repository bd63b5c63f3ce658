#include "lake/iceberg/avro_file.h"

#include <cstdio>
#include <cstring>
#include <random>

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>
#include <zlib.h>

namespace weir::lake::iceberg {
namespace {

constexpr int64_t kBlockBytes = 1 << 20;

Status AvroError(std::string_view what, std::string_view name) {
  return Status::IOError("Avro ", what, " of ", name, ": ", avro_strerror());
}

Result<std::string> RawDeflate(std::string_view input) {
  z_stream stream{};
  // Negative window bits: raw deflate (RFC 1951), as the Avro spec's "deflate" codec wants.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return Status::OutOfMemory("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, input.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  const size_t produced = stream.total_out;
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) return Status::IOError("deflate failed: ", rc);
  out.resize(produced);
  return out;
}

}  // namespace

void AvroEncoder::Long(int64_t value) {
  auto zigzag = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (zigzag >= 0x80) {
    buffer_.push_back(static_cast<char>((zigzag & 0x7f) | 0x80));
    zigzag >>= 7;
  }
  buffer_.push_back(static_cast<char>(zigzag));
}

void AvroEncoder::Float(float value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  buffer_.append(bytes, 4);
}

void AvroEncoder::Double(double value) {
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  buffer_.append(bytes, 8);
}

void AvroEncoder::Bytes(std::string_view value) {
  Long(static_cast<int64_t>(value.size()));
  buffer_.append(value);
}

AvroContainerWriter::AvroContainerWriter(std::string schema_json,
                                         std::vector<std::pair<std::string, std::string>> metadata)
    : schema_json_(std::move(schema_json)), metadata_(std::move(metadata)) {
  std::random_device seed;
  std::mt19937_64 random(seed());
  for (int i = 0; i < 2; ++i) {
    const uint64_t word = random();
    sync_.append(reinterpret_cast<const char*>(&word), 8);
  }
  AvroEncoder header;
  header.Fixed(std::string_view("Obj\x01", 4));
  metadata_.insert(metadata_.begin(), {"avro.codec", "deflate"});
  metadata_.insert(metadata_.begin(), {"avro.schema", schema_json_});
  header.BlockStart(static_cast<int64_t>(metadata_.size()));
  for (const auto& [key, value] : metadata_) {
    header.String(key);
    header.Bytes(value);
  }
  header.BlockEnd();
  header.Fixed(sync_);
  out_ = std::move(header.buffer());
}

void AvroContainerWriter::FinishRecord() {
  ++block_records_;
  if (static_cast<int64_t>(block_.buffer().size()) >= kBlockBytes) {
    // Compression cannot fail for want of input; an allocation failure surfaces in Finish.
    (void)FlushBlock();
  }
}

Status AvroContainerWriter::FlushBlock() {
  if (block_records_ == 0) return Status::OK();
  WEIR_ASSIGN_OR_RAISE(const std::string compressed, RawDeflate(block_.buffer()));
  AvroEncoder framing;
  framing.Long(block_records_);
  framing.Long(static_cast<int64_t>(compressed.size()));
  out_ += framing.buffer();
  out_ += compressed;
  out_ += sync_;
  block_.buffer().clear();
  block_records_ = 0;
  return Status::OK();
}

Result<std::string> AvroContainerWriter::Finish() {
  WEIR_RETURN_NOT_OK(FlushBlock());
  return std::move(out_);
}

Status WriteWholeFile(arrow::fs::FileSystem& fs, const std::string& path, std::string_view bytes) {
  if (fs.type_name() == "local") {
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      WEIR_RETURN_NOT_OK(fs.CreateDir(path.substr(0, slash), /*recursive=*/true));
    }
  }
  WEIR_ASSIGN_OR_RAISE(auto stream, fs.OpenOutputStream(path));
  WEIR_RETURN_NOT_OK(stream->Write(bytes.data(), static_cast<int64_t>(bytes.size())));
  return stream->Close();
}

Result<std::string> ReadWholeFile(arrow::fs::FileSystem& fs, const std::string& path) {
  WEIR_ASSIGN_OR_RAISE(auto file, fs.OpenInputFile(path));
  WEIR_ASSIGN_OR_RAISE(const int64_t size, file->GetSize());
  WEIR_ASSIGN_OR_RAISE(auto buffer, file->ReadAt(0, size));
  if (buffer->size() != size) {
    return Status::IOError(path, ": read ", buffer->size(), " of ", size, " bytes");
  }
  return buffer->ToString();
}

Result<std::unique_ptr<AvroFileReader>> AvroFileReader::Open(const std::string& bytes,
                                                             std::string name) {
  std::unique_ptr<AvroFileReader> reader(new AvroFileReader());
  reader->name_ = std::move(name);
  if (bytes.size() < 4 || bytes.compare(0, 4, std::string("Obj\x01", 4)) != 0) {
    return Status::Invalid(reader->name_, " is not an Avro container file");
  }
  reader->file_ = fmemopen(const_cast<char*>(bytes.data()), bytes.size(), "rb");
  if (reader->file_ == nullptr) return Status::IOError("fmemopen failed for ", reader->name_);
  if (avro_file_reader_fp(reader->file_, reader->name_.c_str(), 0, &reader->reader_) != 0) {
    reader->reader_ = nullptr;
    return AvroError("header", reader->name_);
  }
  avro_schema_t schema = avro_file_reader_get_writer_schema(reader->reader_);
  reader->iface_ = avro_generic_class_from_schema(schema);
  avro_schema_decref(schema);
  if (reader->iface_ == nullptr) return AvroError("schema", reader->name_);
  if (avro_generic_value_new(reader->iface_, &reader->value_) != 0) {
    return AvroError("value", reader->name_);
  }
  reader->has_value_ = true;
  return reader;
}

AvroFileReader::~AvroFileReader() {
  if (has_value_) avro_value_decref(&value_);
  if (iface_ != nullptr) avro_value_iface_decref(iface_);
  if (reader_ != nullptr) avro_file_reader_close(reader_);
  if (file_ != nullptr) std::fclose(file_);
}

Result<avro_value_t*> AvroFileReader::Next() {
  const int rc = avro_file_reader_read_value(reader_, &value_);
  if (rc == EOF) return nullptr;
  if (rc != 0) return AvroError("record", name_);
  return &value_;
}

Result<avro_value_t> Field(avro_value_t& record, const char* name) {
  avro_value_t child;
  if (avro_value_get_by_name(&record, name, &child, nullptr) != 0) {
    return Status::Invalid("Avro record has no field \"", name, "\"");
  }
  return child;
}

Result<bool> Unwrap(avro_value_t& value, avro_value_t& out) {
  if (avro_value_get_type(&value) != AVRO_UNION) {
    out = value;
    return avro_value_get_type(&value) != AVRO_NULL;
  }
  if (avro_value_get_current_branch(&value, &out) != 0) {
    return Status::Invalid("Avro union without a branch");
  }
  return avro_value_get_type(&out) != AVRO_NULL;
}

Result<bool> OptionalField(avro_value_t& record, const char* name, avro_value_t& out) {
  avro_value_t child;
  if (avro_value_get_by_name(&record, name, &child, nullptr) != 0) return false;
  return Unwrap(child, out);
}

Result<int64_t> ReadLong(avro_value_t& value) {
  if (avro_value_get_type(&value) == AVRO_INT32) {
    int32_t v = 0;
    avro_value_get_int(&value, &v);
    return v;
  }
  if (avro_value_get_type(&value) == AVRO_INT64) {
    int64_t v = 0;
    avro_value_get_long(&value, &v);
    return v;
  }
  return Status::Invalid("Avro value is not an int or long");
}

Result<int32_t> ReadInt(avro_value_t& value) {
  WEIR_ASSIGN_OR_RAISE(const int64_t v, ReadLong(value));
  if (v < INT32_MIN || v > INT32_MAX) return Status::Invalid("Avro value ", v, " is not an int");
  return static_cast<int32_t>(v);
}

Result<bool> ReadBool(avro_value_t& value) {
  if (avro_value_get_type(&value) != AVRO_BOOLEAN) {
    return Status::Invalid("Avro value is not a boolean");
  }
  int v = 0;
  avro_value_get_boolean(&value, &v);
  return v != 0;
}

Result<std::string> ReadBytes(avro_value_t& value) {
  const void* data = nullptr;
  size_t size = 0;
  switch (avro_value_get_type(&value)) {
    case AVRO_BYTES:
      avro_value_get_bytes(&value, &data, &size);
      return std::string(static_cast<const char*>(data), size);
    case AVRO_FIXED:
      avro_value_get_fixed(&value, &data, &size);
      return std::string(static_cast<const char*>(data), size);
    case AVRO_STRING: {
      const char* text = nullptr;
      avro_value_get_string(&value, &text, &size);
      // Avro C counts the terminating NUL in a string's size.
      return std::string(text, size > 0 ? size - 1 : 0);
    }
    default:
      return Status::Invalid("Avro value is not bytes, fixed or a string");
  }
}

Result<double> ReadDouble(avro_value_t& value) {
  if (avro_value_get_type(&value) == AVRO_FLOAT) {
    float v = 0;
    avro_value_get_float(&value, &v);
    return v;
  }
  if (avro_value_get_type(&value) == AVRO_DOUBLE) {
    double v = 0;
    avro_value_get_double(&value, &v);
    return v;
  }
  return Status::Invalid("Avro value is not a float or double");
}

}  // namespace weir::lake::iceberg
