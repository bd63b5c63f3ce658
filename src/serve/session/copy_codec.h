// COPY's data formats (text, CSV, binary) in both directions: rows out of DuckDB chunks into
// CopyData payloads, and rows out of the client's CopyData stream into fields.
//
// Threading: one instance per COPY on its session's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <duckdb.h>

#include "base/status.h"
#include "serve/session/commands.h"
#include "serve/values/values.h"

namespace weir::serve {

// Encodes result rows in a COPY format: the header (binary signature or CSV header line) once,
// then one payload per row, then the trailer.
class CopyRowWriter {
 public:
  CopyRowWriter(const CopyOptions& options, std::vector<ColumnEncoder>* columns,
                const std::vector<std::string>& names);
  // The bytes that precede the first row ("" when none).
  std::string Header() const;
  // Appends row `row` of the chunk the encoders are bound to.
  void AppendRow(idx_t row, std::string& out);
  // The bytes after the last row (binary's -1 field count; "" otherwise).
  std::string Trailer() const;

 private:
  void AppendTextField(std::string_view value, std::string& out) const;
  void AppendCsvField(std::string_view value, std::string& out) const;
  CopyOptions options_;
  std::vector<ColumnEncoder>* columns_;
  std::vector<std::string> names_;
  std::string scratch_;
};

// Cuts the client's COPY stream into rows of fields. Feed it CopyData payloads as they come;
// NextRow returns each complete row. Fields are text (text and CSV formats, unescaped) or the
// raw binary value (binary format); nullopt is NULL.
class CopyRowReader {
 public:
  // `max_row_bytes` bounds every length the binary format declares (the header extension, a
  // field, a whole row): a larger one is refused (54000) as soon as it is read, before its
  // bytes are waited for or buffered. The session passes its memory limit.
  explicit CopyRowReader(const CopyOptions& options, size_t max_row_bytes = SIZE_MAX);
  void Feed(std::string_view data);
  // Marks the end of the data (CopyDone): a last line without a newline becomes a row.
  void Finish() { finished_ = true; }
  // The next complete row into `fields`; false when more data is needed (or the end).
  // Malformed data is 22P04 (bad_copy_file_format) naming the line.
  Result<bool> NextRow(std::vector<std::optional<std::string>>& fields);
  uint64_t line() const { return line_; }
  size_t buffered() const { return buffer_.size() - position_; }
  // True once the end marker (text "\." or binary trailer) or the end of data was reached.
  bool at_end() const { return ended_; }

 private:
  Result<std::optional<std::string_view>> NextRecord(bool csv);
  size_t CsvRecordEnd(bool& open_quote);
  Result<bool> NextTextRow(std::vector<std::optional<std::string>>& fields);
  Result<bool> NextCsvRow(std::vector<std::optional<std::string>>& fields);
  Result<bool> NextBinaryRow(std::vector<std::optional<std::string>>& fields);
  Status Malformed(const std::string& message) const;
  Status TooLong(uint64_t row, const std::string& what, uint64_t bytes) const;
  void Compact();
  CopyOptions options_;
  size_t max_row_bytes_;
  std::string buffer_;
  size_t position_ = 0;
  bool finished_ = false;
  bool ended_ = false;
  bool header_done_ = false;
  uint64_t line_ = 0;
  // How far past position_ the search for the record's end got without finding it (and, for
  // CSV, whether it stopped inside quotes): the next search resumes there.
  size_t scanned_ = 0;
  bool scan_in_quotes_ = false;
};

}  // namespace weir::serve
