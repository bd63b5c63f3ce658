// What the pipeline decodes records with: one implementation per kind of dataset (the JSON
// decoder of top-level keys, json_batch_builder.h; the JMESPath-mapped decoder of records/),
// each turning records into one Arrow batch per flush.
//
// Threading: one decoder per dataset buffer, used by one thread at a time (the poll thread
// appends; the flush takes the batch with Finish()). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <arrow/record_batch.h>

#include "base/status.h"

namespace weir::decode {

struct DecodeOptions {
  size_t max_record_bytes = 1 << 20;  // larger records are rejected
  size_t max_field_name_length = 63;  // longer keys are dropped (per column) and counted
};

// What decoding did besides producing rows; counters keyed by reason.
struct DecodeStats {
  int64_t records = 0;                            // rows appended
  std::map<std::string, int64_t> rejected;        // invalid_json, invalid_utf8, not_an_object, ...
  std::map<std::string, int64_t> dropped_fields;  // invalid_name, name_too_long, reserved_name,
                                                  // duplicate_key, duplicate_name
  std::map<std::string, int64_t> renamed_fields;  // reserved_name (row_id → row_id_)
  int64_t lossy_integers = 0;                     // integers beyond int64, kept as double
  int64_t field_events = 0;  // fields dropped or renamed, all reasons (grows with each one)
};

// The newest field the name policy dropped or renamed, for the log.
struct FieldEvent {
  std::string reason;  // a key of dropped_fields or renamed_fields
  bool dropped = true;
  std::string key;     // the key as sent (at most 128 bytes of it)
  std::string column;  // where a renamed key went
};

class RecordDecoder {
 public:
  virtual ~RecordDecoder() = default;

  // Decodes one record and appends it as a row. A record that cannot be decoded appends
  // nothing and returns a kBadData error whose ErrorDetail code is the reject reason.
  virtual Status Append(std::string_view json) = 0;

  virtual int64_t num_rows() const = 0;
  // Bytes held by the builders so far (for the memory budget).
  virtual int64_t buffered_bytes() const = 0;
  virtual const DecodeStats& stats() const = 0;
  // Valid once stats().field_events > 0.
  virtual const FieldEvent& last_field_event() const = 0;

  // The batch of every row appended since the last Finish, then starts empty (statistics are
  // kept).
  virtual Result<std::shared_ptr<arrow::RecordBatch>> Finish() = 0;
};

}  // namespace weir::decode
