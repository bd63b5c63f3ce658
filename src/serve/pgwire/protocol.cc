#include "serve/pgwire/protocol.h"

#include <cstring>

#include <fmt/format.h>

namespace weir::serve::pgwire {
namespace {

// Reads big-endian fields from a message body, never past its end.
class BodyReader {
 public:
  BodyReader(std::string_view body, const char* message) : body_(body), message_(message) {}

  Result<int16_t> Int16(const char* field) {
    WEIR_ASSIGN_OR_RAISE(const uint16_t u, UInt16(field));
    return static_cast<int16_t>(u);
  }
  // Counts (parameters, formats) are unsigned 16-bit on the wire, as PostgreSQL reads them
  // (pq_getmsgint): a statement may carry up to 65,535 parameters, and drivers send that many.
  Result<uint16_t> UInt16(const char* field) {
    WEIR_RETURN_NOT_OK(Need(2, field));
    const auto* p = reinterpret_cast<const unsigned char*>(body_.data() + at_);
    at_ += 2;
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
  }
  Result<int32_t> Int32(const char* field) {
    WEIR_RETURN_NOT_OK(Need(4, field));
    const auto* p = reinterpret_cast<const unsigned char*>(body_.data() + at_);
    at_ += 4;
    return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                                (uint32_t{p[2]} << 8) | uint32_t{p[3]});
  }
  Result<char> Byte(const char* field) {
    WEIR_RETURN_NOT_OK(Need(1, field));
    return body_[at_++];
  }
  Result<std::string> CString(const char* field) {
    const auto end = body_.find('\0', at_);
    if (end == std::string_view::npos) {
      return ProtocolViolation(fmt::format("{}: {} is not NUL-terminated", message_, field));
    }
    std::string out(body_.substr(at_, end - at_));
    at_ = end + 1;
    return out;
  }
  Result<std::string> Bytes(int64_t n, const char* field) {
    if (n < 0) {
      return ProtocolViolation(fmt::format("{}: negative length {} for {}", message_, n, field));
    }
    WEIR_RETURN_NOT_OK(Need(static_cast<size_t>(n), field));
    std::string out(body_.substr(at_, static_cast<size_t>(n)));
    at_ += static_cast<size_t>(n);
    return out;
  }
  Status End() {
    if (at_ != body_.size()) {
      return ProtocolViolation(
          fmt::format("{}: {} unexpected byte(s) at the end", message_, body_.size() - at_));
    }
    return Status::OK();
  }
  bool AtEnd() const { return at_ == body_.size(); }

 private:
  Status Need(size_t n, const char* field) {
    if (body_.size() - at_ < n) {
      return ProtocolViolation(
          fmt::format("{}: {} runs past the end of the message (needs {} "
                      "byte(s), {} left)",
                      message_, field, n, body_.size() - at_));
    }
    return Status::OK();
  }

  std::string_view body_;
  const char* message_;
  size_t at_ = 0;
};

int32_t DecodeInt32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<int32_t>((uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) |
                              (uint32_t{u[2]} << 8) | uint32_t{u[3]});
}

}  // namespace

Status ProtocolViolation(std::string message) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "08P01", std::move(message));
}

Result<std::optional<Frame>> FrameReader::NextStartup() { return Take(false); }
Result<std::optional<Frame>> FrameReader::Next() { return Take(true); }

Result<std::optional<Frame>> FrameReader::Take(bool typed) {
  const size_t header = typed ? 5 : 4;
  if (buffered() < header) return std::optional<Frame>();
  const char* start = buffer_.data() + consumed_;
  const int32_t length = DecodeInt32(start + (typed ? 1 : 0));
  // The length counts itself (4 bytes) but not the type byte.
  if (length < 4) {
    return ProtocolViolation(fmt::format("invalid message length {}", length));
  }
  if (!typed && static_cast<size_t>(length) - 4 > kMaxStartupPacketBytes) {
    return ProtocolViolation(fmt::format("invalid length of startup packet: {} bytes (at most {})",
                                         length - 4, kMaxStartupPacketBytes));
  }
  if (static_cast<size_t>(length) - 4 > max_message_bytes_) {
    return ProtocolViolation(
        fmt::format("message of {} bytes exceeds the limit of {}", length, max_message_bytes_));
  }
  const size_t total = (typed ? 1 : 0) + static_cast<size_t>(length);
  if (buffered() < total) return std::optional<Frame>();
  Frame frame;
  frame.type = typed ? start[0] : 0;
  frame.body.assign(start + header, total - header);
  consumed_ += total;
  if (consumed_ > 65536 && consumed_ * 2 > buffer_.size()) {  // compact now and then
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return std::optional<Frame>(std::move(frame));
}

Result<StartupPacket> ParseStartupPacket(std::string_view body) {
  BodyReader r(body, "startup packet");
  WEIR_ASSIGN_OR_RAISE(const int32_t code, r.Int32("protocol version"));
  if (code == kSslRequestCode) {
    WEIR_RETURN_NOT_OK(r.End());
    return StartupPacket(SslRequest{});
  }
  if (code == kGssEncRequestCode) {
    WEIR_RETURN_NOT_OK(r.End());
    return StartupPacket(GssEncRequest{});
  }
  if (code == kCancelRequestCode) {
    CancelRequest cancel;
    WEIR_ASSIGN_OR_RAISE(cancel.process_id, r.Int32("process id"));
    WEIR_ASSIGN_OR_RAISE(cancel.secret_key, r.Int32("secret key"));
    WEIR_RETURN_NOT_OK(r.End());
    return StartupPacket(cancel);
  }
  if ((code >> 16) != 3) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "0A000",
                           fmt::format("unsupported frontend protocol {}.{}: this server "
                                       "supports 3.0",
                                       code >> 16, code & 0xffff));
  }
  StartupMessage startup;
  startup.protocol = code;
  while (true) {
    WEIR_ASSIGN_OR_RAISE(std::string name, r.CString("parameter name"));
    if (name.empty()) break;
    WEIR_ASSIGN_OR_RAISE(std::string value, r.CString("parameter value"));
    startup.parameters[std::move(name)] = std::move(value);
  }
  WEIR_RETURN_NOT_OK(r.End());
  return StartupPacket(std::move(startup));
}

Result<Query> ParseQuery(std::string_view body) {
  BodyReader r(body, "Query");
  Query q;
  WEIR_ASSIGN_OR_RAISE(q.sql, r.CString("query string"));
  WEIR_RETURN_NOT_OK(r.End());
  return q;
}

Result<Parse> ParseParse(std::string_view body) {
  BodyReader r(body, "Parse");
  Parse p;
  WEIR_ASSIGN_OR_RAISE(p.statement, r.CString("statement name"));
  WEIR_ASSIGN_OR_RAISE(p.query, r.CString("query string"));
  WEIR_ASSIGN_OR_RAISE(const uint16_t n, r.UInt16("parameter type count"));
  for (uint16_t i = 0; i < n; ++i) {
    WEIR_ASSIGN_OR_RAISE(const int32_t oid, r.Int32("parameter type"));
    p.parameter_types.push_back(static_cast<uint32_t>(oid));
  }
  WEIR_RETURN_NOT_OK(r.End());
  return p;
}

Result<Bind> ParseBind(std::string_view body) {
  BodyReader r(body, "Bind");
  Bind b;
  WEIR_ASSIGN_OR_RAISE(b.portal, r.CString("portal name"));
  WEIR_ASSIGN_OR_RAISE(b.statement, r.CString("statement name"));
  WEIR_ASSIGN_OR_RAISE(const uint16_t formats, r.UInt16("parameter format count"));
  for (uint16_t i = 0; i < formats; ++i) {
    WEIR_ASSIGN_OR_RAISE(const int16_t f, r.Int16("parameter format"));
    if (f != 0 && f != 1) return ProtocolViolation(fmt::format("Bind: format code {}", f));
    b.parameter_formats.push_back(f);
  }
  WEIR_ASSIGN_OR_RAISE(const uint16_t params, r.UInt16("parameter count"));
  if (formats > 1 && formats != params) {
    return ProtocolViolation(
        fmt::format("Bind: {} parameter formats for {} parameters", formats, params));
  }
  for (uint16_t i = 0; i < params; ++i) {
    WEIR_ASSIGN_OR_RAISE(const int32_t length, r.Int32("parameter length"));
    if (length == -1) {
      b.parameters.emplace_back(std::nullopt);
      continue;
    }
    WEIR_ASSIGN_OR_RAISE(std::string value, r.Bytes(length, "parameter value"));
    b.parameters.emplace_back(std::move(value));
  }
  WEIR_ASSIGN_OR_RAISE(const uint16_t results, r.UInt16("result format count"));
  for (uint16_t i = 0; i < results; ++i) {
    WEIR_ASSIGN_OR_RAISE(const int16_t f, r.Int16("result format"));
    if (f != 0 && f != 1) return ProtocolViolation(fmt::format("Bind: format code {}", f));
    b.result_formats.push_back(f);
  }
  WEIR_RETURN_NOT_OK(r.End());
  return b;
}

Result<Describe> ParseDescribe(std::string_view body) {
  BodyReader r(body, "Describe");
  Describe d;
  WEIR_ASSIGN_OR_RAISE(d.kind, r.Byte("kind"));
  if (d.kind != 'S' && d.kind != 'P') {
    return ProtocolViolation(fmt::format("Describe: kind '{}' is neither S nor P", d.kind));
  }
  WEIR_ASSIGN_OR_RAISE(d.name, r.CString("name"));
  WEIR_RETURN_NOT_OK(r.End());
  return d;
}

Result<Execute> ParseExecute(std::string_view body) {
  BodyReader r(body, "Execute");
  Execute e;
  WEIR_ASSIGN_OR_RAISE(e.portal, r.CString("portal name"));
  WEIR_ASSIGN_OR_RAISE(e.max_rows, r.Int32("row limit"));
  WEIR_RETURN_NOT_OK(r.End());
  return e;
}

Result<Close> ParseClose(std::string_view body) {
  BodyReader r(body, "Close");
  Close c;
  WEIR_ASSIGN_OR_RAISE(c.kind, r.Byte("kind"));
  if (c.kind != 'S' && c.kind != 'P') {
    return ProtocolViolation(fmt::format("Close: kind '{}' is neither S nor P", c.kind));
  }
  WEIR_ASSIGN_OR_RAISE(c.name, r.CString("name"));
  WEIR_RETURN_NOT_OK(r.End());
  return c;
}

Result<SaslInitialResponse> ParseSaslInitialResponse(std::string_view body) {
  BodyReader r(body, "SASLInitialResponse");
  SaslInitialResponse s;
  WEIR_ASSIGN_OR_RAISE(s.mechanism, r.CString("mechanism"));
  WEIR_ASSIGN_OR_RAISE(const int32_t length, r.Int32("data length"));
  if (length != -1) {
    WEIR_ASSIGN_OR_RAISE(std::string data, r.Bytes(length, "data"));
    s.data = std::move(data);
  }
  WEIR_RETURN_NOT_OK(r.End());
  return s;
}

Result<CopyFail> ParseCopyFail(std::string_view body) {
  BodyReader r(body, "CopyFail");
  CopyFail c;
  WEIR_ASSIGN_OR_RAISE(c.message, r.CString("message"));
  WEIR_RETURN_NOT_OK(r.End());
  return c;
}

int16_t FormatAt(const std::vector<int16_t>& formats, size_t i) {
  if (formats.empty()) return 0;
  if (formats.size() == 1) return formats[0];
  return i < formats.size() ? formats[i] : 0;
}

// --- MessageWriter ----------------------------------------------------------------------------

size_t MessageWriter::Begin(char type) {
  out_.push_back(type);
  const size_t at = out_.size();
  out_.append(4, '\0');
  return at;
}

void MessageWriter::End(size_t length_at) {
  const auto length = static_cast<uint32_t>(out_.size() - length_at);
  out_[length_at] = static_cast<char>(length >> 24);
  out_[length_at + 1] = static_cast<char>(length >> 16);
  out_[length_at + 2] = static_cast<char>(length >> 8);
  out_[length_at + 3] = static_cast<char>(length);
}

void MessageWriter::Int16(int16_t v) {
  const auto u = static_cast<uint16_t>(v);
  out_.push_back(static_cast<char>(u >> 8));
  out_.push_back(static_cast<char>(u));
}

void MessageWriter::Int32(int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  for (int shift = 24; shift >= 0; shift -= 8) out_.push_back(static_cast<char>(u >> shift));
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms,
// no surrogates, nothing past U+10FFFF), or 0 when there is none; a NUL is none either.
size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c >= 0x01 && c <= 0x7f) return 1;
  const auto tail = [&](size_t i) { return i < s.size() && (b(i) & 0xc0) == 0x80; };
  if (c >= 0xc2 && c <= 0xdf) return tail(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!tail(1) || !tail(2)) return 0;
    if (c == 0xe0 && b(1) < 0xa0) return 0;  // overlong
    if (c == 0xed && b(1) > 0x9f) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!tail(1) || !tail(2) || !tail(3)) return 0;
    if (c == 0xf0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xf4 && b(1) > 0x8f) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

void MessageWriter::CString(std::string_view s) {
  // Every string field is UTF-8 text ending at its NUL (the server's encoding is UTF8). A NUL
  // inside would end it early, and the client would read the rest as the next field or message;
  // bytes that are not UTF-8 (a client's own bytes echoed in an error) make drivers fail to
  // decode the message. Each such byte is written as U+FFFD, as a decoder would show it.
  size_t at = 0;
  while (at < s.size()) {
    const size_t n = Utf8SequenceLength(s.substr(at));
    if (n == 0) {
      out_.append("\xef\xbf\xbd");
      ++at;
      continue;
    }
    out_.append(s.substr(at, n));
    at += n;
  }
  out_.push_back('\0');
}

void MessageWriter::AuthenticationOk() {
  const size_t at = Begin('R');
  Int32(0);
  End(at);
}

void MessageWriter::AuthenticationSasl(const std::vector<std::string>& mechanisms) {
  const size_t at = Begin('R');
  Int32(10);
  for (const auto& m : mechanisms) CString(m);
  out_.push_back('\0');
  End(at);
}

void MessageWriter::AuthenticationSaslContinue(std::string_view data) {
  const size_t at = Begin('R');
  Int32(11);
  out_.append(data);
  End(at);
}

void MessageWriter::AuthenticationSaslFinal(std::string_view data) {
  const size_t at = Begin('R');
  Int32(12);
  out_.append(data);
  End(at);
}

void MessageWriter::ParameterStatus(std::string_view name, std::string_view value) {
  const size_t at = Begin('S');
  CString(name);
  CString(value);
  End(at);
}

void MessageWriter::BackendKeyData(int32_t process_id, int32_t secret_key) {
  const size_t at = Begin('K');
  Int32(process_id);
  Int32(secret_key);
  End(at);
}

void MessageWriter::ReadyForQuery(char transaction_status) {
  const size_t at = Begin('Z');
  out_.push_back(transaction_status);
  End(at);
}

void MessageWriter::RowDescription(const std::vector<FieldDescription>& fields) {
  const size_t at = Begin('T');
  Int16(static_cast<int16_t>(fields.size()));
  for (const auto& f : fields) {
    CString(f.name);
    Int32(static_cast<int32_t>(f.table_oid));
    Int16(f.column_attribute);
    Int32(static_cast<int32_t>(f.type_oid));
    Int16(f.type_size);
    Int32(f.type_modifier);
    Int16(f.format);
  }
  End(at);
}

void MessageWriter::DataRow(const std::vector<std::optional<std::string_view>>& values) {
  const size_t at = Begin('D');
  Int16(static_cast<int16_t>(values.size()));
  for (const auto& v : values) {
    if (!v) {
      Int32(-1);
      continue;
    }
    Int32(static_cast<int32_t>(v->size()));
    out_.append(*v);
  }
  End(at);
}

void MessageWriter::CommandComplete(std::string_view tag) {
  const size_t at = Begin('C');
  CString(tag);
  End(at);
}

void MessageWriter::EmptyQueryResponse() { End(Begin('I')); }

void MessageWriter::Fields(char type, const ErrorFields& fields) {
  const size_t at = Begin(type);
  const auto field = [&](char code, std::string_view value) {
    if (value.empty()) return;
    out_.push_back(code);
    CString(value);
  };
  field('S', fields.severity);
  field('V', fields.severity);  // the non-localized severity
  field('C', fields.sqlstate);
  field('M', fields.message);
  field('D', fields.detail);
  field('H', fields.hint);
  if (fields.position > 0) field('P', std::to_string(fields.position));
  out_.push_back('\0');
  End(at);
}

std::string SqlStateOf(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  if (detail == nullptr || (detail->source() != "sqlstate" && detail->source() != "scram")) {
    return "XX000";
  }
  return detail->code();
}

ErrorFields ErrorFieldsOf(const Status& status, std::string severity) {
  return ErrorFields{std::move(severity), SqlStateOf(status), status.message(), "", "", 0};
}

void MessageWriter::ErrorResponse(const ErrorFields& fields) { Fields('E', fields); }
void MessageWriter::NoticeResponse(const ErrorFields& fields) { Fields('N', fields); }
void MessageWriter::ParseComplete() { End(Begin('1')); }
void MessageWriter::BindComplete() { End(Begin('2')); }
void MessageWriter::CloseComplete() { End(Begin('3')); }
void MessageWriter::NoData() { End(Begin('n')); }
void MessageWriter::PortalSuspended() { End(Begin('s')); }

void MessageWriter::ParameterDescription(const std::vector<uint32_t>& type_oids) {
  const size_t at = Begin('t');
  Int16(static_cast<int16_t>(type_oids.size()));
  for (uint32_t oid : type_oids) Int32(static_cast<int32_t>(oid));
  End(at);
}

void MessageWriter::CopyInResponse(bool binary, size_t columns) {
  const size_t at = Begin('G');
  out_.push_back(binary ? 1 : 0);
  Int16(static_cast<int16_t>(columns));
  for (size_t i = 0; i < columns; ++i) Int16(binary ? 1 : 0);
  End(at);
}

void MessageWriter::CopyOutResponse(bool binary, size_t columns) {
  const size_t at = Begin('H');
  out_.push_back(binary ? 1 : 0);
  Int16(static_cast<int16_t>(columns));
  for (size_t i = 0; i < columns; ++i) Int16(binary ? 1 : 0);
  End(at);
}

void MessageWriter::CopyData(std::string_view data) {
  const size_t at = Begin('d');
  out_.append(data);
  End(at);
}

void MessageWriter::CopyDone() { End(Begin('c')); }

void MessageWriter::SingleByte(char answer) { out_.push_back(answer); }

}  // namespace weir::serve::pgwire
