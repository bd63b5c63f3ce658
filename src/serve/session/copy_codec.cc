#include "serve/session/copy_codec.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace weir::serve {
namespace {

constexpr std::string_view kBinarySignature("PGCOPY\n\xff\r\n\0", 11);

void AppendInt(std::string& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint32_t ReadUint32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | u[3];
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// --- out
// ------------------------------------------------------------------------------------------

CopyRowWriter::CopyRowWriter(const CopyOptions& options, std::vector<ColumnEncoder>* columns,
                             const std::vector<std::string>& names)
    : options_(options), columns_(columns), names_(names) {}

std::string CopyRowWriter::Header() const {
  std::string out;
  if (options_.format == CopyFormat::kBinary) {
    out.append(kBinarySignature);
    AppendInt(out, 0, 4);  // flags
    AppendInt(out, 0, 4);  // header extension length
  } else if (options_.header) {
    for (size_t c = 0; c < names_.size(); ++c) {
      if (c > 0) out.push_back(options_.delimiter);
      if (options_.format == CopyFormat::kCsv) {
        AppendCsvField(names_[c], out);
      } else {
        AppendTextField(names_[c], out);
      }
    }
    out.push_back('\n');
  }
  return out;
}

std::string CopyRowWriter::Trailer() const {
  std::string out;
  if (options_.format == CopyFormat::kBinary) AppendInt(out, 0xffff, 2);
  return out;
}

void CopyRowWriter::AppendTextField(std::string_view value, std::string& out) const {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c == options_.delimiter) out.push_back('\\');
        out.push_back(c);
    }
  }
}

void CopyRowWriter::AppendCsvField(std::string_view value, std::string& out) const {
  // Quoted when it holds the delimiter, the quote, a line break, or reads as the NULL string
  // (and "\." alone, which would end the data).
  const bool quote = value.find(options_.delimiter) != std::string_view::npos ||
                     value.find(options_.quote) != std::string_view::npos ||
                     value.find_first_of("\r\n") != std::string_view::npos ||
                     value == options_.null_string || value == "\\.";
  if (!quote) {
    out.append(value);
    return;
  }
  out.push_back(options_.quote);
  for (char c : value) {
    if (c == options_.quote || c == options_.escape) out.push_back(options_.escape);
    out.push_back(c);
  }
  out.push_back(options_.quote);
}

void CopyRowWriter::AppendRow(idx_t row, std::string& out) {
  auto& columns = *columns_;
  if (options_.format == CopyFormat::kBinary) {
    AppendInt(out, columns.size(), 2);
    for (auto& column : columns) {
      if (column.IsNull(row)) {
        AppendInt(out, 0xffffffff, 4);
        continue;
      }
      const size_t at = out.size();
      out.append(4, '\0');
      if (column.has_binary()) {
        column.AppendBinary(row, out);
      } else {
        column.AppendText(row, out);
      }
      const auto length = static_cast<uint32_t>(out.size() - at - 4);
      for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((length >> (24 - 8 * i)) & 0xff);
    }
    return;
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c > 0) out.push_back(options_.delimiter);
    if (columns[c].IsNull(row)) {
      out.append(options_.null_string);
      continue;
    }
    scratch_.clear();
    columns[c].AppendText(row, scratch_);
    if (options_.format == CopyFormat::kCsv) {
      AppendCsvField(scratch_, out);
    } else {
      AppendTextField(scratch_, out);
    }
  }
  out.push_back('\n');
}

// --- in
// -------------------------------------------------------------------------------------------

CopyRowReader::CopyRowReader(const CopyOptions& options, size_t max_row_bytes)
    : options_(options), max_row_bytes_(max_row_bytes) {}

void CopyRowReader::Feed(std::string_view data) {
  Compact();
  buffer_.append(data);
}

void CopyRowReader::Compact() {
  if (position_ > (1 << 20) && position_ > buffer_.size() / 2) {
    buffer_.erase(0, position_);
    position_ = 0;
  }
}

Status CopyRowReader::Malformed(const std::string& message) const {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P04",
                         fmt::format("COPY, line {}: {}", line_, message));
}

Status CopyRowReader::TooLong(uint64_t row, const std::string& what, uint64_t bytes) const {
  return ClassifiedError(
      ErrorClass::kBadData, "sqlstate", "54000",
      fmt::format("COPY{}: {} declares {} bytes, over the session's memory "
                  "limit of {} bytes",
                  row == 0 ? "" : fmt::format(", line {}", row), what, bytes, max_row_bytes_));
}

Result<bool> CopyRowReader::NextRow(std::vector<std::optional<std::string>>& fields) {
  if (ended_) return false;
  switch (options_.format) {
    case CopyFormat::kText:
      return NextTextRow(fields);
    case CopyFormat::kCsv:
      return NextCsvRow(fields);
    case CopyFormat::kBinary:
      return NextBinaryRow(fields);
  }
  return false;
}

Result<bool> CopyRowReader::NextTextRow(std::vector<std::optional<std::string>>& fields) {
  WEIR_ASSIGN_OR_RAISE(auto next, NextRecord(/*csv=*/false));
  if (!next) return false;
  const std::string_view line = *next;
  fields.clear();
  std::string field;
  bool raw_null_candidate = true;  // the field's raw text, to compare with the NULL string
  std::string raw;
  const auto finish_field = [&] {
    if (raw_null_candidate && raw == options_.null_string) {
      fields.emplace_back(std::nullopt);
    } else {
      fields.emplace_back(std::move(field));
    }
    field.clear();
    raw.clear();
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == options_.delimiter) {
      finish_field();
      continue;
    }
    raw.push_back(c);
    if (c != '\\' || i + 1 >= line.size()) {
      field.push_back(c);
      continue;
    }
    const char e = line[++i];
    raw.push_back(e);
    switch (e) {
      case 'b':
        field.push_back('\b');
        break;
      case 'f':
        field.push_back('\f');
        break;
      case 'n':
        field.push_back('\n');
        break;
      case 'r':
        field.push_back('\r');
        break;
      case 't':
        field.push_back('\t');
        break;
      case 'v':
        field.push_back('\v');
        break;
      case 'x': {
        int value = 0, digits = 0;
        while (digits < 2 && i + 1 < line.size() && HexValue(line[i + 1]) >= 0) {
          value = value * 16 + HexValue(line[++i]);
          raw.push_back(line[i]);
          ++digits;
        }
        if (digits == 0) {
          field.push_back('x');
        } else {
          field.push_back(static_cast<char>(value));
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int value = e - '0', digits = 1;
          while (digits < 3 && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '7') {
            value = value * 8 + (line[++i] - '0');
            raw.push_back(line[i]);
            ++digits;
          }
          field.push_back(static_cast<char>(value));
        } else {
          field.push_back(e);  // \\, \<delimiter> and any other escaped character
        }
    }
  }
  finish_field();
  return true;
}

// Where the CSV record at position_ ends: a newline outside quotes (npos when not here yet;
// `open_quote` tells whether the data ran out inside quotes). The scan resumes where the last
// one stopped (scanned_, scan_in_quotes_), so a record that arrives in many messages is read
// once, not once per message. It stops before a quote or escape whose meaning depends on the
// byte after it, until that byte is here.
size_t CopyRowReader::CsvRecordEnd(bool& open_quote) {
  size_t i = position_ + scanned_;
  bool in_quotes = scan_in_quotes_;
  const bool separate_escape = options_.escape != options_.quote;
  while (i < buffer_.size()) {
    const char c = buffer_[i];
    const bool last = i + 1 >= buffer_.size();
    if (in_quotes) {
      if (separate_escape && c == options_.escape) {
        if (last && !finished_) break;  // what it escapes is not here yet
        if (!last && (buffer_[i + 1] == options_.quote || buffer_[i + 1] == options_.escape)) {
          i += 2;
          continue;
        }
      }
      if (c == options_.quote) {
        if (!separate_escape) {
          if (last && !finished_) break;  // a doubled quote may be split across messages
          if (!last && buffer_[i + 1] == options_.quote) {
            i += 2;
            continue;
          }
        }
        in_quotes = false;
      }
      ++i;
      continue;
    }
    if (c == options_.quote) {
      in_quotes = true;
    } else if (c == '\n') {
      return i;
    }
    ++i;
  }
  scanned_ = i - position_;
  scan_in_quotes_ = in_quotes;
  open_quote = in_quotes;
  return std::string::npos;
}

// The next record (a line, or a CSV record that may hold quoted newlines) without its line
// end; nullopt when more data is needed or the data ended (the "\." marker or CopyDone). The
// header line is skipped.
Result<std::optional<std::string_view>> CopyRowReader::NextRecord(bool csv) {
  while (true) {
    bool open_quote = false;
    size_t end = csv ? CsvRecordEnd(open_quote) : buffer_.find('\n', position_ + scanned_);
    size_t next = end + 1;
    if (end == std::string::npos && !csv) scanned_ = buffer_.size() - position_;
    if (end == std::string::npos) {
      if (!finished_ || position_ >= buffer_.size()) {
        if (finished_) ended_ = true;
        return std::nullopt;
      }
      if (open_quote) {
        ++line_;
        return Malformed("unterminated CSV quoted field");
      }
      end = next = buffer_.size();
    }
    std::string_view record(buffer_.data() + position_, end - position_);
    position_ = next;
    scanned_ = 0;  // the next record's scan starts at its beginning
    scan_in_quotes_ = false;
    ++line_;
    if (!record.empty() && record.back() == '\r') record.remove_suffix(1);
    if (record == "\\.") {
      ended_ = true;
      return std::nullopt;
    }
    if (options_.header && !header_done_) {
      header_done_ = true;
      continue;
    }
    return record;
  }
}

Result<bool> CopyRowReader::NextCsvRow(std::vector<std::optional<std::string>>& fields) {
  WEIR_ASSIGN_OR_RAISE(auto next, NextRecord(/*csv=*/true));
  if (!next) return false;
  const std::string_view record = *next;
  fields.clear();
  std::string field;
  bool quoted = false;
  size_t k = 0;
  const auto finish_field = [&] {
    if (!quoted && field == options_.null_string) {
      fields.emplace_back(std::nullopt);
    } else {
      fields.emplace_back(std::move(field));
    }
    field.clear();
    quoted = false;
  };
  while (true) {
    if (k >= record.size()) {
      finish_field();
      break;
    }
    const char c = record[k];
    if (c == options_.delimiter) {
      finish_field();
      ++k;
      continue;
    }
    if (c == options_.quote) {
      quoted = true;
      ++k;
      while (true) {
        if (k >= record.size()) return Malformed("unterminated CSV quoted field");
        const char q = record[k];
        if (q == options_.escape && k + 1 < record.size() &&
            (record[k + 1] == options_.quote || record[k + 1] == options_.escape) &&
            (options_.escape != options_.quote || record[k + 1] == options_.quote)) {
          field.push_back(record[k + 1]);
          k += 2;
          continue;
        }
        if (q == options_.quote) {
          ++k;
          break;
        }
        field.push_back(q);
        ++k;
      }
      continue;
    }
    field.push_back(c);
    ++k;
  }
  return true;
}

Result<bool> CopyRowReader::NextBinaryRow(std::vector<std::optional<std::string>>& fields) {
  const size_t available = buffer_.size() - position_;
  const char* p = buffer_.data() + position_;
  if (!header_done_) {
    if (available < kBinarySignature.size() + 8) {
      if (finished_) return Malformed("COPY file signature not recognized");
      return false;
    }
    if (std::string_view(p, kBinarySignature.size()) != kBinarySignature) {
      return Malformed("COPY file signature not recognized");
    }
    const uint32_t extension = ReadUint32(p + kBinarySignature.size() + 4);
    if (extension > max_row_bytes_) return TooLong(0, "the header extension", extension);
    if (available < kBinarySignature.size() + 8 + extension) {
      // Data that ends inside the header extension is malformed, not an empty COPY.
      if (finished_) return Malformed("incomplete header extension at the end of the data");
      return false;
    }
    position_ += kBinarySignature.size() + 8 + extension;
    header_done_ = true;
    return NextBinaryRow(fields);
  }
  if (available < 2) {
    if (finished_) {
      if (available != 0) return Malformed("incomplete row at the end of the data");
      ended_ = true;
    }
    return false;
  }
  const auto count = static_cast<int16_t>((static_cast<unsigned char>(p[0]) << 8) |
                                          static_cast<unsigned char>(p[1]));
  if (count == -1) {
    ended_ = true;
    position_ += 2;
    return false;
  }
  const uint64_t row = line_ + 1;
  if (count < 0) {
    return ClassifiedError(
        ErrorClass::kBadData, "sqlstate", "22P04",
        fmt::format("COPY, line {}: row field count is {} (only -1, the end of the data, may "
                    "be negative)",
                    row, count));
  }
  // Check the whole row is here before taking it.
  size_t offset = 2;
  for (int f = 0; f < count; ++f) {
    if (available < offset + 4) {
      if (finished_) return Malformed("incomplete row at the end of the data");
      return false;
    }
    const auto length = static_cast<int32_t>(ReadUint32(p + offset));
    offset += 4;
    if (length < -1) {
      return ClassifiedError(
          ErrorClass::kBadData, "sqlstate", "22P04",
          fmt::format("COPY, line {}, field {}: invalid field length {}", row, f + 1, length));
    }
    if (static_cast<uint64_t>(std::max(length, 0)) > max_row_bytes_) {
      return TooLong(row, fmt::format("field {}", f + 1), static_cast<uint64_t>(length));
    }
    if (length > 0) offset += static_cast<size_t>(length);
    if (offset > max_row_bytes_) return TooLong(row, "the row", offset);
  }
  if (available < offset) {
    if (finished_) return Malformed("incomplete row at the end of the data");
    return false;
  }
  ++line_;
  fields.clear();
  offset = 2;
  for (int f = 0; f < count; ++f) {
    const auto length = static_cast<int32_t>(ReadUint32(p + offset));
    offset += 4;
    if (length < 0) {
      fields.emplace_back(std::nullopt);
    } else {
      fields.emplace_back(std::string(p + offset, static_cast<size_t>(length)));
      offset += static_cast<size_t>(length);
    }
  }
  position_ += offset;
  return true;
}

}  // namespace weir::serve
