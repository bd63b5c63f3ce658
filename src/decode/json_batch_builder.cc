#include "decode/json_batch_builder.h"

#include <algorithm>
#include <cstring>

#include <arrow/builder.h>
#include <arrow/type.h>
#include <simdjson.h>

#include "base/check.h"
#include "decode/field_names.h"

namespace weir::decode {
namespace ondemand = simdjson::ondemand;

struct JsonBatchBuilder::Column {
  std::string name;
  int fold_id = 0;  // equal for the spellings of one name (`Seq`, `seq`)
  std::unique_ptr<ColumnBuilder> values;
};

// One decoded value of the current record, held until the whole record has parsed. Its text
// points into the parser's buffers: valid until the next record.
struct JsonBatchBuilder::PendingValue : DecodedValue {
  int column = -1;
};

namespace {

Status Reject(std::string_view reason, std::string message) {
  return ClassifiedError(ErrorClass::kBadData, "json", std::string(reason), std::move(message));
}

Status RejectParse(simdjson::error_code error) {
  const bool utf8 = error == simdjson::UTF8_ERROR;
  return Reject(
      utf8 ? "invalid_utf8" : "invalid_json",
      std::string(utf8 ? "invalid UTF-8: " : "invalid JSON: ") + simdjson::error_message(error));
}

std::string_view TrimRight(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' ||
                           text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

// Walks a nested value completely so that malformed content inside it is found (On-Demand
// only checks what is read).
simdjson::error_code Validate(ondemand::value value, int depth) {
  if (depth > 256) return simdjson::DEPTH_ERROR;
  ondemand::json_type type;
  if (auto error = value.type().get(type)) return error;
  switch (type) {
    case ondemand::json_type::object: {
      ondemand::object object;
      if (auto error = value.get_object().get(object)) return error;
      for (auto field : object) {
        std::string_view key;
        if (auto error = field.unescaped_key().get(key)) return error;
        ondemand::value inner;
        if (auto error = field.value().get(inner)) return error;
        if (auto error = Validate(inner, depth + 1)) return error;
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::array: {
      ondemand::array array;
      if (auto error = value.get_array().get(array)) return error;
      for (auto element : array) {
        ondemand::value inner;
        if (auto error = element.get(inner)) return error;
        if (auto error = Validate(inner, depth + 1)) return error;
      }
      return simdjson::SUCCESS;
    }
    case ondemand::json_type::number:
      return value.get_double().error();
    case ondemand::json_type::string:
      return value.get_string().error();
    case ondemand::json_type::boolean:
      return value.get_bool().error();
    case ondemand::json_type::null: {
      bool is_null = false;
      if (auto error = value.is_null().get(is_null)) return error;
      return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::INCORRECT_TYPE;
}

}  // namespace

// simdjson's parser and the padded copy of the current record.
class JsonBatchBuilder::RecordParser {
 public:
  // Parses `json` and calls on_field(key, value, position) for each top-level field.
  template <typename OnField>
  Status Parse(std::string_view json, OnField&& on_field) {
    const size_t needed = json.size() + simdjson::SIMDJSON_PADDING;
    if (buffer_.size() < needed) buffer_.resize(needed);
    std::memcpy(buffer_.data(), json.data(), json.size());
    std::memset(buffer_.data() + json.size(), 0, simdjson::SIMDJSON_PADDING);

    ondemand::document doc;
    if (auto error = parser_.iterate(buffer_.data(), json.size(), buffer_.size()).get(doc)) {
      return RejectParse(error);
    }
    ondemand::json_type type;
    if (auto error = doc.type().get(type)) return RejectParse(error);
    if (type != ondemand::json_type::object) {
      return Reject("not_an_object", "the record is a JSON " + TypeName(type) + ", not an object");
    }
    ondemand::object object;
    if (auto error = doc.get_object().get(object)) return RejectParse(error);
    size_t position = 0;
    for (auto field : object) {
      std::string_view key;
      if (auto error = field.unescaped_key().get(key)) return RejectParse(error);
      ondemand::value value;
      if (auto error = field.value().get(value)) return RejectParse(error);
      WEIR_RETURN_NOT_OK(on_field(key, value, position++, doc));
    }
    // Anything left after the object's closing brace makes the record invalid.
    const char* trailing = nullptr;
    if (doc.current_location().get(trailing) == simdjson::SUCCESS) {
      return Reject("invalid_json", "invalid JSON: content after the object");
    }
    return Status::OK();
  }

 private:
  static std::string TypeName(ondemand::json_type type) {
    switch (type) {
      case ondemand::json_type::array:
        return "array";
      case ondemand::json_type::number:
        return "number";
      case ondemand::json_type::string:
        return "string";
      case ondemand::json_type::boolean:
        return "boolean";
      case ondemand::json_type::null:
        return "null";
      case ondemand::json_type::object:
        return "object";
    }
    return "value";
  }

  ondemand::parser parser_;
  std::vector<char> buffer_;
};

Result<std::unique_ptr<JsonBatchBuilder>> JsonBatchBuilder::Make(DecodeOptions options,
                                                                 arrow::MemoryPool* pool) {
  if (options.max_record_bytes == 0) return Status::Invalid("max_record_bytes must be > 0");
  if (options.max_field_name_length == 0) {
    return Status::Invalid("max_field_name_length must be > 0");
  }
  return std::unique_ptr<JsonBatchBuilder>(new JsonBatchBuilder(options, pool));
}

JsonBatchBuilder::JsonBatchBuilder(DecodeOptions options, arrow::MemoryPool* pool)
    : options_(options), pool_(pool), parser_(std::make_unique<RecordParser>()) {}

JsonBatchBuilder::~JsonBatchBuilder() = default;

int JsonBatchBuilder::FindOrAddColumn(std::string_view name, size_t position) {
  // Records of one topic usually repeat their key order: try the previous record's first.
  if (position < last_key_order_.size()) {
    const int guess = last_key_order_[position];
    if (guess >= 0 && columns_[guess].name == name) return guess;
  }
  int index;
  if (auto it = column_index_.find(std::string(name)); it != column_index_.end()) {
    index = it->second;
  } else {
    const auto [fold, new_fold] =
        fold_ids_.try_emplace(FoldName(name), static_cast<int>(fold_ids_.size()));
    if (!new_fold) {
      spellings_share_a_batch_ = true;
      // Another spelling of a name already in this record adds no column.
      for (const PendingValue& earlier : pending_) {
        if (columns_[earlier.column].fold_id == fold->second) return -1;
      }
    }
    index = static_cast<int>(columns_.size());
    Column column;
    column.name = std::string(name);
    column.fold_id = fold->second;
    column.values = std::make_unique<ColumnBuilder>(pool_);
    if (auto hint = capacity_hints_.find(column.name); hint != capacity_hints_.end()) {
      column.values->SetCapacityHint(hint->second.first, hint->second.second);
    }
    columns_.push_back(std::move(column));
    column_index_.emplace(std::string(name), index);
  }
  if (position >= last_key_order_.size()) last_key_order_.resize(position + 1, -1);
  last_key_order_[position] = index;
  return index;
}

Status JsonBatchBuilder::Append(std::string_view json) {
  if (json.size() > options_.max_record_bytes) {
    ++stats_.rejected["record_too_large"];
    return Reject("record_too_large", "the record has " + std::to_string(json.size()) +
                                          " bytes, more than max_record_bytes " +
                                          std::to_string(options_.max_record_bytes));
  }
  pending_.clear();
  std::map<std::string, int64_t> dropped;  // counted only if the record is accepted
  int64_t renamed_count = 0;
  int64_t lossy = 0;
  record_has_event_ = false;
  auto on_field = [&](std::string_view key, ondemand::value& value, size_t position,
                      ondemand::document& doc) -> Status {
    // Validate the value before looking at the key: a dropped field must still be valid JSON.
    PendingValue pending;
    ondemand::json_type type;
    if (auto error = value.type().get(type)) return RejectParse(error);
    switch (type) {
      case ondemand::json_type::object:
      case ondemand::json_type::array: {
        const std::string_view start = value.raw_json_token();
        if (auto error = Validate(value, 0)) return RejectParse(error);
        const char* end = nullptr;
        if (auto error = doc.current_location().get(end)) return RejectParse(error);
        pending.kind = ColumnKind::kVarchar;
        pending.text = TrimRight(std::string_view(start.data(), end - start.data()));
        break;
      }
      case ondemand::json_type::number: {
        pending.text = TrimRight(value.raw_json_token());
        ondemand::number_type number_type;
        if (auto error = value.get_number_type().get(number_type)) return RejectParse(error);
        if (number_type == ondemand::number_type::signed_integer) {
          if (auto error = value.get_int64().get(pending.int64)) return RejectParse(error);
          pending.kind = ColumnKind::kInt64;
        } else {
          if (auto error = value.get_double().get(pending.real)) return RejectParse(error);
          pending.kind = ColumnKind::kDouble;
          if (number_type == ondemand::number_type::unsigned_integer) ++lossy;
        }
        break;
      }
      case ondemand::json_type::string:
        if (auto error = value.get_string().get(pending.text)) return RejectParse(error);
        pending.kind = ColumnKind::kVarchar;
        break;
      case ondemand::json_type::boolean:
        if (auto error = value.get_bool().get(pending.boolean)) return RejectParse(error);
        pending.kind = ColumnKind::kBoolean;
        pending.text = pending.boolean ? "true" : "false";
        break;
      case ondemand::json_type::null: {
        bool is_null = false;
        if (auto error = value.is_null().get(is_null)) return RejectParse(error);
        if (!is_null) return RejectParse(simdjson::N_ATOM_ERROR);
        pending.kind = ColumnKind::kNull;
        break;
      }
    }
    const FieldNameCheck check = CheckFieldName(key, options_.max_field_name_length);
    if (check.problem) {
      const std::string_view reason = ToString(*check.problem);
      ++dropped[std::string(reason)];
      NoteFieldEvent(reason, /*dropped=*/true, key, {});
      return Status::OK();
    }
    std::string renamed;
    if (check.renamed) renamed = RenamedFieldName(key);
    const std::string_view name = check.renamed ? std::string_view(renamed) : key;
    // -1: another spelling of a key earlier in this record.
    pending.column = FindOrAddColumn(name, position);
    bool duplicate_key = false;
    bool duplicate_name = pending.column < 0;
    if (!duplicate_name) {
      const int fold_id = columns_[pending.column].fold_id;
      for (const PendingValue& earlier : pending_) {
        if (earlier.column == pending.column) {
          duplicate_key = true;
          break;
        }
        // Fold ids equal column ids' equality unless two spellings share this batch.
        if (spellings_share_a_batch_ && columns_[earlier.column].fold_id == fold_id) {
          duplicate_name = true;
          break;
        }
      }
    }
    if (duplicate_key || duplicate_name) {  // the first one wins
      const std::string_view reason = duplicate_key ? "duplicate_key" : "duplicate_name";
      ++dropped[std::string(reason)];
      NoteFieldEvent(reason, /*dropped=*/true, key, {});
      return Status::OK();
    }
    if (check.renamed) {
      ++renamed_count;
      NoteFieldEvent("reserved_name", /*dropped=*/false, key, name);
    }
    pending_.push_back(pending);
    return Status::OK();
  };

  // A record's fate is known only once its last byte is parsed, while its keys make columns as
  // they are met: a rejected record takes back the columns it made, so nothing of it reaches the
  // batch's schema (and through it the table's).
  const size_t columns_before = columns_.size();
  const size_t folds_before = fold_ids_.size();
  const bool shared_before = spellings_share_a_batch_;
  Status parsed = parser_->Parse(json, on_field);
  if (!parsed.ok()) {
    ForgetColumnsFrom(columns_before, folds_before, shared_before);
    ++stats_.rejected[GetErrorDetail(parsed)->code()];
    return parsed;
  }
  WEIR_RETURN_NOT_OK(Commit());
  for (const auto& [reason, count] : dropped) {
    stats_.dropped_fields[reason] += count;
    stats_.field_events += count;
  }
  if (renamed_count > 0) {
    stats_.renamed_fields["reserved_name"] += renamed_count;
    stats_.field_events += renamed_count;
  }
  if (record_has_event_) std::swap(last_field_event_, record_event_);
  stats_.lossy_integers += lossy;
  ++stats_.records;
  return Status::OK();
}

void JsonBatchBuilder::ForgetColumnsFrom(size_t columns, size_t folds, bool spellings_shared) {
  if (columns_.size() == columns && fold_ids_.size() == folds) return;
  for (size_t c = columns; c < columns_.size(); ++c) column_index_.erase(columns_[c].name);
  columns_.resize(columns);
  std::erase_if(fold_ids_,
                [folds](const auto& entry) { return static_cast<size_t>(entry.second) >= folds; });
  for (int& guess : last_key_order_) {
    if (guess >= static_cast<int>(columns)) guess = -1;
  }
  spellings_share_a_batch_ = spellings_shared;
}

void JsonBatchBuilder::NoteFieldEvent(std::string_view reason, bool dropped, std::string_view key,
                                      std::string_view column) {
  // Kept only if the record is accepted.
  size_t length = std::min<size_t>(key.size(), 128);
  while (length < key.size() && length > 0 && (key[length] & 0xC0) == 0x80) --length;
  record_event_.reason = reason;
  record_event_.dropped = dropped;
  record_event_.key = key.substr(0, length);
  record_event_.column = column;
  record_has_event_ = true;
}

Status JsonBatchBuilder::Commit() {
  for (const PendingValue& value : pending_) {
    WEIR_RETURN_NOT_OK(columns_[value.column].values->Append(value, rows_));
  }
  ++rows_;
  return Status::OK();
}

int64_t JsonBatchBuilder::buffered_bytes() const {
  int64_t bytes = 0;
  for (const Column& column : columns_) bytes += column.values->buffered_bytes();
  return bytes;
}

Result<std::shared_ptr<arrow::RecordBatch>> JsonBatchBuilder::Finish() {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (Column& column : columns_) {
    WEIR_ASSIGN_OR_RAISE(auto array, column.values->Finish(rows_));
    fields.push_back(arrow::field(column.name, array->type()));
    arrays.push_back(std::move(array));
  }
  auto batch = arrow::RecordBatch::Make(arrow::schema(std::move(fields)), rows_, std::move(arrays));
  capacity_hints_.clear();
  for (const Column& column : columns_) {
    capacity_hints_.emplace(
        column.name, std::pair(column.values->hint_rows(), column.values->hint_data_bytes()));
  }
  columns_.clear();
  column_index_.clear();
  fold_ids_.clear();
  spellings_share_a_batch_ = false;
  last_key_order_.clear();
  rows_ = 0;
  return batch;
}

}  // namespace weir::decode
