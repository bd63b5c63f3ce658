// The PostgreSQL frontend/backend protocol, version 3.0: framing, parsing of every frontend
// message and encoding of backend messages. No I/O and no state beyond a byte buffer, so it is
// unit-tested byte for byte and can be fuzzed.
//
// Every parse error is a protocol violation (SQLSTATE 08P01) whose message says which field of
// which message was bad; nothing here reads past a message's declared length.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace weir::serve::pgwire {

inline constexpr int32_t kProtocolVersion3 = 196608;  // 3.0
inline constexpr int32_t kSslRequestCode = 80877103;
inline constexpr int32_t kGssEncRequestCode = 80877104;
inline constexpr int32_t kCancelRequestCode = 80877102;
// The largest startup-phase packet body, as PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
inline constexpr size_t kMaxStartupPacketBytes = 10000;

// A protocol violation (SQLSTATE 08P01).
Status ProtocolViolation(std::string message);

// --- framing -----------------------------------------------------------------------------

// One message off the wire: its type byte (0 for the untyped startup-phase packets) and body.
struct Frame {
  char type = 0;
  std::string body;
};

// Cuts a byte stream into messages. Feed it what the socket gave; take whole messages out.
class FrameReader {
 public:
  explicit FrameReader(size_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next startup-phase packet (Int32 length, then body), or nullopt when incomplete. A
  // declared body over kMaxStartupPacketBytes (or the message limit) is an error at once.
  Result<std::optional<Frame>> NextStartup();
  // The next typed message (Byte1 type, Int32 length, body), or nullopt when incomplete.
  Result<std::optional<Frame>> Next();
  size_t buffered() const { return buffer_.size() - consumed_; }
  // The largest message body from now on (small before authentication, larger after).
  void set_max_message_bytes(size_t max_message_bytes) { max_message_bytes_ = max_message_bytes; }

 private:
  Result<std::optional<Frame>> Take(bool typed);

  size_t max_message_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;
};

// --- frontend messages ---------------------------------------------------------------------

struct StartupMessage {
  int32_t protocol = 0;
  std::map<std::string, std::string> parameters;  // user, database, application_name, ...
};
struct SslRequest {};
struct GssEncRequest {};
struct CancelRequest {
  int32_t process_id = 0;
  int32_t secret_key = 0;
};
using StartupPacket = std::variant<StartupMessage, SslRequest, GssEncRequest, CancelRequest>;

Result<StartupPacket> ParseStartupPacket(std::string_view body);

struct Query {
  std::string sql;
};
struct Parse {
  std::string statement;
  std::string query;
  std::vector<uint32_t> parameter_types;  // 0 = unspecified
};
struct Bind {
  std::string portal;
  std::string statement;
  std::vector<int16_t> parameter_formats;              // empty: all text; one: for all
  std::vector<std::optional<std::string>> parameters;  // nullopt = NULL
  std::vector<int16_t> result_formats;
};
struct Describe {
  char kind = 'S';  // 'S' statement or 'P' portal
  std::string name;
};
struct Execute {
  std::string portal;
  int32_t max_rows = 0;  // 0 = all
};
struct Close {
  char kind = 'S';
  std::string name;
};
struct PasswordMessage {  // also SASLInitialResponse / SASLResponse: interpreted by the state
  std::string body;
};
struct SaslInitialResponse {
  std::string mechanism;
  std::optional<std::string> data;
};
struct CopyFail {
  std::string message;
};

Result<Query> ParseQuery(std::string_view body);
Result<Parse> ParseParse(std::string_view body);
Result<Bind> ParseBind(std::string_view body);
Result<Describe> ParseDescribe(std::string_view body);
Result<Execute> ParseExecute(std::string_view body);
Result<Close> ParseClose(std::string_view body);
Result<SaslInitialResponse> ParseSaslInitialResponse(std::string_view body);
Result<CopyFail> ParseCopyFail(std::string_view body);

// The format code of parameter or column `i` given Bind's list (empty: text, one: all).
int16_t FormatAt(const std::vector<int16_t>& formats, size_t i);

// --- backend messages ----------------------------------------------------------------------

struct FieldDescription {
  std::string name;
  uint32_t table_oid = 0;
  int16_t column_attribute = 0;
  uint32_t type_oid = 25;  // text
  int16_t type_size = -1;
  int32_t type_modifier = -1;
  int16_t format = 0;  // 0 text, 1 binary
};

// The fields of an ErrorResponse or NoticeResponse.
struct ErrorFields {
  std::string severity = "ERROR";  // ERROR, FATAL, PANIC, WARNING, NOTICE, ...
  std::string sqlstate = "XX000";
  std::string message;
  std::string detail;
  std::string hint;
  int32_t position = 0;  // 1-based character position in the query, 0 = none
};

// The SQLSTATE a weir Status carries on the wire: the code of an error raised with a SQLSTATE
// (detail source "sqlstate") or by SCRAM ("scram"), XX000 (internal_error) for any other. The
// one mapping, for the server's login errors, the sessions' errors and the query log.
std::string SqlStateOf(const Status& status);
// `status` as an ErrorResponse's fields: its SQLSTATE and message, with `severity`.
ErrorFields ErrorFieldsOf(const Status& status, std::string severity = "ERROR");

// Appends backend messages to one buffer, to be written to the socket in one go. String fields
// (messages, column names, tags, settings) are always UTF-8 without NULs: a NUL inside (which
// would end the field early and desynchronise the client) and each byte that is not part of
// well-formed UTF-8 (a client's bytes echoed in an error) are written as U+FFFD.
class MessageWriter {
 public:
  void AuthenticationOk();
  void AuthenticationSasl(const std::vector<std::string>& mechanisms);
  void AuthenticationSaslContinue(std::string_view data);
  void AuthenticationSaslFinal(std::string_view data);
  void ParameterStatus(std::string_view name, std::string_view value);
  void BackendKeyData(int32_t process_id, int32_t secret_key);
  void ReadyForQuery(char transaction_status);  // 'I' idle, 'T' in transaction, 'E' failed
  void RowDescription(const std::vector<FieldDescription>& fields);
  void DataRow(const std::vector<std::optional<std::string_view>>& values);
  void CommandComplete(std::string_view tag);
  void EmptyQueryResponse();
  void ErrorResponse(const ErrorFields& fields);
  void NoticeResponse(const ErrorFields& fields);
  void ParseComplete();
  void BindComplete();
  void CloseComplete();
  void NoData();
  void PortalSuspended();
  void ParameterDescription(const std::vector<uint32_t>& type_oids);
  void CopyInResponse(bool binary, size_t columns);
  void CopyOutResponse(bool binary, size_t columns);
  void CopyData(std::string_view data);
  void CopyDone();
  // The single byte answering SSLRequest / GSSENCRequest ('S' or 'N').
  void SingleByte(char answer);

  const std::string& data() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Clear() { out_.clear(); }

 private:
  // Starts a message of `type`; returns the offset of its length field.
  size_t Begin(char type);
  void End(size_t length_at);
  void Int16(int16_t v);
  void Int32(int32_t v);
  void CString(std::string_view s);
  void Fields(char type, const ErrorFields& fields);

  std::string out_;
};

}  // namespace weir::serve::pgwire
