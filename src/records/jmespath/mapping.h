// A record mapping: output column → JMESPath expression, compiled once per dataset and applied
// to each record.
//
// Threading: a Mapping is immutable and shared (one per dataset, any thread). A RecordMapper
// owns simdjson's parser and the current record's document: one per thread, and the values of
// a row it returns are valid until its next Apply.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "base/status.h"
#include "records/jmespath/expression.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {

struct MappingColumn {
  std::string column;
  std::string expression;
};

class Mapping {
 public:
  // Compiles every expression. A fatal error naming the column otherwise (an empty or
  // repeated column name, an expression that does not compile).
  static Result<std::shared_ptr<const Mapping>> Compile(std::vector<MappingColumn> columns);

  size_t size() const { return columns_.size(); }
  const MappingColumn& column(size_t i) const { return columns_[i]; }
  const Expression& expression(size_t i) const { return expressions_[i]; }

 private:
  Mapping() = default;

  std::vector<MappingColumn> columns_;
  std::vector<Expression> expressions_;
};

class RecordMapper {
 public:
  // Records over `max_record_bytes` are rejected.
  explicit RecordMapper(std::shared_ptr<const Mapping> mapping, size_t max_record_bytes = 1 << 20);

  // Parses `json` (any JSON value) and evaluates each column into (*row)[i], resized to the
  // mapping's size. Values borrow from this mapper's document: valid until the next Apply (use
  // Value::Owned() to keep one). A record that cannot be mapped yields a kBadData error whose
  // ErrorDetail code is the reject reason: invalid_json, invalid_utf8, record_too_large, or
  // mapping_failed (the message names the column, the expression and the JMESPath error).
  Status Apply(std::string_view json, std::vector<Value>* row);

  const Mapping& mapping() const { return *mapping_; }

 private:
  std::shared_ptr<const Mapping> mapping_;
  size_t max_record_bytes_;
  simdjson::dom::parser parser_;
  std::vector<char> buffer_;  // the record, padded as simdjson needs
};

}  // namespace weir::records::jmespath
