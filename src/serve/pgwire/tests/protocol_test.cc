#include "serve/pgwire/protocol.h"

#include <gtest/gtest.h>

namespace weir::serve::pgwire {
namespace {

// Builds frontend messages byte by byte, as a client would.
class Bytes {
 public:
  Bytes& I16(int16_t v) {
    s_.push_back(static_cast<char>(static_cast<uint16_t>(v) >> 8));
    s_.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& I32(int32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      s_.push_back(static_cast<char>(static_cast<uint32_t>(v) >> shift));
    }
    return *this;
  }
  Bytes& Str(std::string_view v) {
    s_.append(v);
    s_.push_back('\0');
    return *this;
  }
  Bytes& Raw(std::string_view v) {
    s_.append(v);
    return *this;
  }
  // The body as a typed message (type, length, body).
  std::string Message(char type) const {
    Bytes m;
    m.Raw(std::string(1, type)).I32(static_cast<int32_t>(s_.size() + 4)).Raw(s_);
    return m.s_;
  }
  std::string Startup() const {
    Bytes m;
    m.I32(static_cast<int32_t>(s_.size() + 4)).Raw(s_);
    return m.s_;
  }
  const std::string& str() const { return s_; }

 private:
  std::string s_;
};

std::string CodeOf(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail ? detail->code() : "";
}

TEST(FrameReaderTest, CutsMessagesAcrossArbitraryChunks) {
  const std::string stream = Bytes().Str("SELECT 1").Message('Q') + Bytes().Message('S');
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    FrameReader reader(1 << 20);
    std::vector<Frame> frames;
    for (size_t at = 0; at < stream.size(); at += chunk) {
      reader.Feed(std::string_view(stream).substr(at, chunk));
      while (true) {
        auto next = reader.Next();
        ASSERT_TRUE(next.ok());
        if (!*next) break;
        frames.push_back(std::move(**next));
      }
    }
    ASSERT_EQ(frames.size(), 2u) << chunk;
    EXPECT_EQ(frames[0].type, 'Q');
    EXPECT_EQ(frames[0].body, std::string("SELECT 1\0", 9));
    EXPECT_EQ(frames[1].type, 'S');
    EXPECT_EQ(frames[1].body, "");
    EXPECT_EQ(reader.buffered(), 0u);
  }
}

TEST(FrameReaderTest, RejectsBadAndOversizedLengths) {
  FrameReader reader(100);
  reader.Feed(Bytes().Raw("Q").I32(3).str());
  EXPECT_EQ(CodeOf(reader.Next().status()), "08P01");
  FrameReader small(100);
  small.Feed(Bytes().Raw("Q").I32(1000).str());
  auto too_big = small.Next();
  EXPECT_EQ(CodeOf(too_big.status()), "08P01");
  EXPECT_NE(too_big.status().message().find("exceeds the limit of 100"), std::string::npos);
}

TEST(FrameReaderTest, CapsTheStartupPacketAt10000BytesAsPostgreSql) {
  FrameReader reader(1 << 20);
  const std::string body(10000, 'x');
  reader.Feed(Bytes().Raw(body).Startup());
  auto largest = reader.NextStartup();
  ASSERT_TRUE(largest.ok()) << largest.status().ToString();
  ASSERT_TRUE(largest->has_value());
  EXPECT_EQ((**largest).body.size(), 10000u);
  // One byte more is refused from its length word alone, before any of the body is buffered.
  FrameReader over(1 << 20);
  over.Feed(Bytes().I32(4 + 10001).str());
  auto refused = over.NextStartup();
  EXPECT_EQ(CodeOf(refused.status()), "08P01");
  EXPECT_EQ(refused.status().message(),
            "invalid length of startup packet: 10001 bytes (at most 10000)");
  // Typed messages keep the reader's own limit, which can be raised after authentication.
  FrameReader typed(10000);
  typed.Feed(Bytes().Raw(std::string(20000, 'q')).Message('Q'));
  EXPECT_EQ(CodeOf(typed.Next().status()), "08P01");
  FrameReader raised(10000);
  raised.set_max_message_bytes(1 << 20);
  raised.Feed(Bytes().Raw(std::string(20000, 'q')).Message('Q'));
  auto big = raised.Next();
  ASSERT_TRUE(big.ok());
  ASSERT_TRUE(big->has_value());
  EXPECT_EQ((**big).body.size(), 20000u);
}

TEST(StartupTest, RecognisesEveryStartupPacket) {
  FrameReader reader(1 << 16);
  reader.Feed(Bytes().I32(kSslRequestCode).Startup());
  reader.Feed(Bytes()
                  .I32(kProtocolVersion3)
                  .Str("user")
                  .Str("alice")
                  .Str("database")
                  .Str("lake")
                  .Str("")
                  .Startup());
  auto ssl = ParseStartupPacket((**reader.NextStartup()).body);
  ASSERT_TRUE(ssl.ok());
  EXPECT_TRUE(std::holds_alternative<SslRequest>(*ssl));
  auto startup = ParseStartupPacket((**reader.NextStartup()).body);
  ASSERT_TRUE(startup.ok()) << startup.status().ToString();
  const auto& message = std::get<StartupMessage>(*startup);
  EXPECT_EQ(message.protocol, kProtocolVersion3);
  EXPECT_EQ(message.parameters.at("user"), "alice");
  EXPECT_EQ(message.parameters.at("database"), "lake");

  auto gss = ParseStartupPacket(Bytes().I32(kGssEncRequestCode).str());
  EXPECT_TRUE(std::holds_alternative<GssEncRequest>(*gss));
  auto cancel = ParseStartupPacket(Bytes().I32(kCancelRequestCode).I32(42).I32(-7).str());
  ASSERT_TRUE(cancel.ok());
  EXPECT_EQ(std::get<CancelRequest>(*cancel).process_id, 42);
  EXPECT_EQ(std::get<CancelRequest>(*cancel).secret_key, -7);

  auto old = ParseStartupPacket(Bytes().I32(2 << 16).str());
  EXPECT_EQ(CodeOf(old.status()), "0A000");
  auto unterminated = ParseStartupPacket(Bytes().I32(kProtocolVersion3).Raw("user").str());
  EXPECT_EQ(CodeOf(unterminated.status()), "08P01");
}

TEST(FrontendTest, ParseAndBindCarryTheirFields) {
  auto parse = ParseParse(Bytes().Str("s1").Str("SELECT $1::int").I16(1).I32(23).str());
  ASSERT_TRUE(parse.ok());
  EXPECT_EQ(parse->statement, "s1");
  EXPECT_EQ(parse->query, "SELECT $1::int");
  EXPECT_EQ(parse->parameter_types, std::vector<uint32_t>{23});

  auto bind = ParseBind(Bytes()
                            .Str("p")
                            .Str("s1")
                            .I16(1)
                            .I16(1)  // all parameters binary
                            .I16(2)
                            .I32(4)
                            .Raw(std::string("\0\0\0\x2a", 4))
                            .I32(-1)
                            .I16(1)
                            .I16(1)
                            .str());
  ASSERT_TRUE(bind.ok()) << bind.status().ToString();
  EXPECT_EQ(bind->portal, "p");
  ASSERT_EQ(bind->parameters.size(), 2u);
  EXPECT_EQ(*bind->parameters[0], std::string("\0\0\0\x2a", 4));
  EXPECT_FALSE(bind->parameters[1].has_value());
  EXPECT_EQ(FormatAt(bind->parameter_formats, 1), 1);
  EXPECT_EQ(FormatAt(bind->result_formats, 5), 1);
  EXPECT_EQ(FormatAt({}, 0), 0);
}

// Counts are unsigned on the wire (PostgreSQL and pgjdbc allow 65,535 parameters); reading them
// as signed refused every statement with more than 32,767.
TEST(FrontendTest, ParameterCountsAboveInt16MaxAreRead) {
  constexpr int kParams = 40000;
  Bytes parse = Bytes().Str("").Str("SELECT 1").I16(static_cast<int16_t>(kParams));
  for (int i = 0; i < kParams; ++i) parse.I32(23);
  auto parsed = ParseParse(parse.str());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->parameter_types.size(), static_cast<size_t>(kParams));

  Bytes bind = Bytes().Str("").Str("").I16(0).I16(static_cast<int16_t>(kParams));
  for (int i = 0; i < kParams; ++i) bind.I32(1).Raw(i == kParams - 1 ? "z" : "a");
  bind.I16(0);
  auto bound = ParseBind(bind.str());
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  ASSERT_EQ(bound->parameters.size(), static_cast<size_t>(kParams));
  EXPECT_EQ(*bound->parameters.back(), "z");
}

TEST(FrontendTest, BindWhoseParameterRunsPastTheMessageIsAProtocolViolation) {
  // One parameter declared 1000 bytes long in a message holding 3.
  auto bind = ParseBind(Bytes().Str("").Str("").I16(0).I16(1).I32(1000).Raw("abc").str());
  ASSERT_FALSE(bind.ok());
  EXPECT_EQ(CodeOf(bind.status()), "08P01");
  EXPECT_NE(bind.status().message().find("parameter value runs past the end"), std::string::npos)
      << bind.status().message();
  EXPECT_EQ(CodeOf(ParseBind(Bytes().Str("").Str("").I16(0).I16(1).I32(-5).str()).status()),
            "08P01");
  EXPECT_EQ(
      CodeOf(ParseBind(Bytes().Str("").Str("").I16(2).I16(0).I16(0).I16(1).I32(0).I16(0).str())
                 .status()),
      "08P01");  // two formats for one parameter
}

TEST(FrontendTest, SmallMessagesAndTheirViolations) {
  EXPECT_EQ(ParseQuery(Bytes().Str("SELECT 1; SELECT 2").str())->sql, "SELECT 1; SELECT 2");
  EXPECT_EQ(CodeOf(ParseQuery("no terminator").status()), "08P01");
  EXPECT_EQ(ParseDescribe(Bytes().Raw("P").Str("portal").str())->kind, 'P');
  EXPECT_EQ(CodeOf(ParseDescribe(Bytes().Raw("X").Str("").str()).status()), "08P01");
  auto execute = ParseExecute(Bytes().Str("").I32(128).str());
  EXPECT_EQ(execute->max_rows, 128);
  EXPECT_EQ(CodeOf(ParseExecute(Bytes().Str("").I32(1).Raw("x").str()).status()), "08P01");
  EXPECT_EQ(ParseClose(Bytes().Raw("S").Str("s1").str())->name, "s1");
  auto sasl = ParseSaslInitialResponse(Bytes().Str("SCRAM-SHA-256").I32(3).Raw("n,,").str());
  EXPECT_EQ(sasl->mechanism, "SCRAM-SHA-256");
  EXPECT_EQ(*sasl->data, "n,,");
  EXPECT_EQ(ParseCopyFail(Bytes().Str("client gave up").str())->message, "client gave up");
}

TEST(MessageWriterTest, EncodesBackendMessagesByteForByte) {
  MessageWriter w;
  w.ReadyForQuery('I');
  EXPECT_EQ(w.Take(), std::string("Z\0\0\0\x05I", 6));
  w.AuthenticationOk();
  EXPECT_EQ(w.Take(), std::string("R\0\0\0\x08\0\0\0\0", 9));
  w.CommandComplete("SELECT 1");
  EXPECT_EQ(w.Take(), std::string("C\0\0\0\x0dSELECT 1\0", 14));
  w.DataRow({std::string_view("ab"), std::nullopt});
  EXPECT_EQ(w.Take(), std::string("D\0\0\0\x10\0\x02\0\0\0\x02"
                                  "ab\xff\xff\xff\xff",
                                  17));
  w.ErrorResponse({"ERROR", "28P01", "password authentication failed", "", "", 0});
  EXPECT_EQ(w.Take(), std::string("E\0\0\0\x3aSERROR\0VERROR\0C28P01\0"
                                  "Mpassword authentication failed\0\0",
                                  59));
  w.PortalSuspended();
  w.NoData();
  EXPECT_EQ(w.Take(), std::string("s\0\0\0\x04n\0\0\0\x04", 10));
  w.AuthenticationSasl({"SCRAM-SHA-256"});
  EXPECT_EQ(w.Take(), std::string("R\0\0\0\x17\0\0\0\x0aSCRAM-SHA-256\0\0", 24));
}

TEST(MessageWriterTest, RowDescriptionLaysOutEveryField) {
  MessageWriter w;
  w.RowDescription({{"id", 0, 0, 20, 8, -1, 1}});
  const std::string expected =
      std::string("T\0\0\0\x1b\0\x01id\0", 10) +
      std::string("\0\0\0\0\0\0\0\0\0\x14\0\x08\xff\xff\xff\xff\0\x01", 18);
  EXPECT_EQ(w.Take(), expected);
}

TEST(SqlStateTest, AStatusCarriesItsSqlStateOrInternalError) {
  EXPECT_EQ(SqlStateOf(ClassifiedError(ErrorClass::kBadData, "sqlstate", "25006", "read-only")),
            "25006");
  EXPECT_EQ(SqlStateOf(ClassifiedError(ErrorClass::kFatal, "scram", "28P01", "bad proof")),
            "28P01");
  // Codes of other sources are not SQLSTATEs, and a status without a detail has none.
  EXPECT_EQ(SqlStateOf(ClassifiedError(ErrorClass::kRetriable, "duckdb", "12", "io")), "XX000");
  EXPECT_EQ(SqlStateOf(Status::IOError("disk")), "XX000");
  const ErrorFields fields = ErrorFieldsOf(
      ClassifiedError(ErrorClass::kBadData, "sqlstate", "57P01", "terminating"), "FATAL");
  EXPECT_EQ(fields.severity, "FATAL");
  EXPECT_EQ(fields.sqlstate, "57P01");
  EXPECT_EQ(fields.message, "terminating");
  EXPECT_EQ(ErrorFieldsOf(Status::Invalid("x")).severity, "ERROR");
}

// Found by tests/fuzz/fuzz_session: a message of type 0 was answered with "unknown message type
// '\0'", whose NUL ended the ErrorResponse's M field early; the client then read "'" as a field
// code. A NUL can reach every string field (DuckDB's errors quote values, column names come from
// data), so each is written with U+FFFD in its place.
TEST(MessageWriterTest, StringFieldsNeverCarryANul) {
  MessageWriter w;
  w.ErrorResponse({"ERROR", "08P01", std::string("type '\0'", 8), "", "", 0});
  EXPECT_EQ(w.Take(), std::string("E\0\0\0\x26SERROR\0VERROR\0C08P01\0"
                                  "Mtype '\xef\xbf\xbd'\0\0",
                                  39));
  w.RowDescription({{std::string("a\0\0b", 4), 0, 0, 25, -1, -1, 0}});
  const std::string row = w.Take();
  EXPECT_EQ(row.substr(7, 8),
            "a\xef\xbf\xbd\xef\xbf\xbd"
            "b");
  EXPECT_EQ(row[15], '\0');
  w.CommandComplete(std::string("\0", 1));
  EXPECT_EQ(w.Take(), std::string("C\0\0\0\x08\xef\xbf\xbd\0", 9));
}

// Found by tests/fuzz/fuzz_session: a message type byte over 0x7f was echoed as it came into
// "unknown message type '...'", an ErrorResponse that is not UTF-8 (drivers decode it as the
// server's encoding, UTF8, and fail). Every byte that is not well-formed UTF-8 is U+FFFD.
TEST(MessageWriterTest, StringFieldsAreAlwaysUtf8) {
  const std::string replacement = "\xef\xbf\xbd";
  const auto written = [](std::string_view text) {
    MessageWriter w;
    w.CommandComplete(text);
    const std::string out = w.Take();
    return out.substr(5, out.size() - 6);  // the tag, without its NUL
  };
  // Well-formed text of every length passes byte for byte.
  EXPECT_EQ(written("SELECT 1 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "SELECT 1 caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(written("type '\xff'"), "type '" + replacement + "'");
  EXPECT_EQ(written("\xc3"), replacement);                                      // cut short
  EXPECT_EQ(written("\xc0\xaf"), replacement + replacement);                    // overlong '/'
  EXPECT_EQ(written("\xe0\x80\xaf"), replacement + replacement + replacement);  // overlong
  EXPECT_EQ(written("\xed\xa0\x80"), replacement + replacement + replacement);  // surrogate
  EXPECT_EQ(written("\xf4\x90\x80\x80"), replacement + replacement + replacement + replacement);
  EXPECT_EQ(written("a\x80"
                    "b"),
            "a" + replacement + "b");  // a lone continuation
}

}  // namespace
}  // namespace weir::serve::pgwire
