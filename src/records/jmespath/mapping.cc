#include "records/jmespath/mapping.h"

#include <cstring>
#include <unordered_set>

namespace weir::records::jmespath {
namespace {

Status MappingError(std::string message) {
  return ClassifiedError(ErrorClass::kFatal, "jmespath", "invalid_mapping", std::move(message));
}

Status Reject(std::string_view reason, std::string message) {
  return ClassifiedError(ErrorClass::kBadData, "jmespath", std::string(reason), std::move(message));
}

}  // namespace

Result<std::shared_ptr<const Mapping>> Mapping::Compile(std::vector<MappingColumn> columns) {
  if (columns.empty()) return MappingError("a mapping needs at least one column");
  std::shared_ptr<Mapping> mapping(new Mapping());
  std::unordered_set<std::string> names;
  for (const MappingColumn& column : columns) {
    if (column.column.empty()) return MappingError("a mapping column has an empty name");
    if (!names.insert(column.column).second) {
      return MappingError("mapping column " + column.column + " is given twice");
    }
    auto expression = Expression::Compile(column.expression);
    if (!expression.ok()) {
      return WithContext(expression.status(),
                         "mapping column " + column.column + " (" + column.expression + ")");
    }
    mapping->expressions_.push_back(std::move(expression).ValueUnsafe());
  }
  mapping->columns_ = std::move(columns);
  return std::shared_ptr<const Mapping>(std::move(mapping));
}

RecordMapper::RecordMapper(std::shared_ptr<const Mapping> mapping, size_t max_record_bytes)
    : mapping_(std::move(mapping)), max_record_bytes_(max_record_bytes) {}

Status RecordMapper::Apply(std::string_view json, std::vector<Value>* row) {
  row->clear();
  if (json.size() > max_record_bytes_) {
    return Reject("record_too_large", "the record has " + std::to_string(json.size()) +
                                          " bytes, more than " + std::to_string(max_record_bytes_));
  }
  const size_t needed = json.size() + simdjson::SIMDJSON_PADDING;
  if (buffer_.size() < needed) buffer_.resize(needed);
  std::memcpy(buffer_.data(), json.data(), json.size());
  std::memset(buffer_.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);
  simdjson::dom::element root;
  if (auto error = parser_.parse(buffer_.data(), json.size(), false).get(root)) {
    const bool utf8 = error == simdjson::UTF8_ERROR;
    return Reject(
        utf8 ? "invalid_utf8" : "invalid_json",
        std::string(utf8 ? "invalid UTF-8: " : "invalid JSON: ") + simdjson::error_message(error));
  }
  const Value input = Value::Borrowed(root);
  row->resize(mapping_->size());
  for (size_t i = 0; i < mapping_->size(); ++i) {
    if (Status status = mapping_->expression(i).Evaluate(input, &(*row)[i]); !status.ok()) {
      row->clear();
      const MappingColumn& column = mapping_->column(i);
      return Reject("mapping_failed", "mapping column " + column.column + " (" + column.expression +
                                          "): " + status.message());
    }
  }
  return Status::OK();
}

}  // namespace weir::records::jmespath
