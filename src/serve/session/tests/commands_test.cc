#include <gtest/gtest.h>

#include "serve/session/commands.h"
#include "serve/session/copy_codec.h"

namespace weir::serve {
namespace {

using Fields = std::vector<std::optional<std::string>>;

Command Recognize(const std::string& sql) {
  auto command = RecognizeCommand(sql);
  EXPECT_TRUE(command.ok()) << command.status().ToString();
  return command.ok() ? *command : Command();
}

TEST(RecognizeCommand, CopyFromStdinWithColumnsAndCsvOptions) {
  const auto command = Recognize(
      "COPY public.events (id, \"Name\") FROM STDIN WITH (FORMAT csv, HEADER true, "
      "DELIMITER ';', NULL 'n/a', QUOTE '''')");
  const auto* copy = std::get_if<CopyCommand>(&command);
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->from_stdin);
  EXPECT_EQ(copy->table, "\"main\".\"events\"");
  EXPECT_EQ(copy->columns, (std::vector<std::string>{"\"id\"", "\"Name\""}));
  EXPECT_EQ(copy->options.format, CopyFormat::kCsv);
  EXPECT_TRUE(copy->options.header);
  EXPECT_EQ(copy->options.delimiter, ';');
  EXPECT_EQ(copy->options.null_string, "n/a");
  EXPECT_EQ(copy->options.quote, '\'');
  EXPECT_EQ(copy->options.escape, '\'');  // defaults to the quote
}

TEST(RecognizeCommand, CopyQueryToStdoutKeepsTheQueryText) {
  const auto command = Recognize("COPY (SELECT a, (b) FROM t WHERE c = ')') TO STDOUT BINARY");
  const auto* copy = std::get_if<CopyCommand>(&command);
  ASSERT_NE(copy, nullptr);
  EXPECT_FALSE(copy->from_stdin);
  EXPECT_EQ(copy->query, "SELECT a, (b) FROM t WHERE c = ')'");
  EXPECT_EQ(copy->options.format, CopyFormat::kBinary);
  // Legacy syntax and defaults of the text format.
  const auto text = Recognize("copy t to stdout");
  EXPECT_EQ(std::get<CopyCommand>(text).query, "SELECT * FROM \"t\"");
  EXPECT_EQ(std::get<CopyCommand>(text).options.delimiter, '\t');
  EXPECT_EQ(std::get<CopyCommand>(text).options.null_string, "\\N");
}

TEST(RecognizeCommand, FilesAndDuckDbSyntaxAreLeftToDuckDb) {
  EXPECT_TRUE(std::holds_alternative<std::monostate>(Recognize("COPY t TO '/tmp/x.csv'")));
  EXPECT_TRUE(
      std::holds_alternative<std::monostate>(Recognize("COPY t FROM PROGRAM 'cat /etc/passwd'")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      Recognize("COPY t TO 'x.parquet' (FORMAT parquet, ROW_GROUP_SIZE 10)")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(Recognize("SELECT 1")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(Recognize("SET threads = 4")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(Recognize("FROM t SELECT a")));
}

TEST(RecognizeCommand, BadCopyOptionsNameTheOption) {
  auto bad = RecognizeCommand("COPY t FROM STDIN (FORMAT xml)");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"xml\""), std::string::npos);
  auto unknown = RecognizeCommand("COPY t FROM STDIN (FORCE_NULL (a))");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("force_null"), std::string::npos);
  EXPECT_FALSE(RecognizeCommand("COPY t TO STDOUT (FORMAT binary, HEADER)").ok());
}

TEST(RecognizeCommand, Cursors) {
  const auto declare = Recognize(
      "DECLARE \"c 1\" BINARY CURSOR WITH HOLD FOR SELECT * FROM t WHERE a = $1 FOR UPDATE");
  const auto& d = std::get<DeclareCommand>(declare);
  EXPECT_EQ(d.name, "c 1");
  EXPECT_TRUE(d.hold);
  EXPECT_TRUE(d.binary);
  EXPECT_FALSE(d.scroll);
  EXPECT_EQ(d.query, "SELECT * FROM t WHERE a = $1 FOR UPDATE");
  const auto fetch = std::get<FetchCommand>(Recognize("FETCH FORWARD 25 FROM c"));
  EXPECT_EQ(fetch.name, "c");
  EXPECT_EQ(fetch.count, 25);
  EXPECT_TRUE(fetch.forward);
  EXPECT_FALSE(fetch.move);
  EXPECT_EQ(std::get<FetchCommand>(Recognize("FETCH c")).count, 1);
  EXPECT_GE(std::get<FetchCommand>(Recognize("FETCH ALL IN c")).count, int64_t{1} << 31);
  EXPECT_TRUE(std::get<FetchCommand>(Recognize("MOVE 10 IN c")).move);
  EXPECT_FALSE(std::get<FetchCommand>(Recognize("FETCH BACKWARD 1 FROM c")).forward);
  EXPECT_FALSE(std::get<FetchCommand>(Recognize("FETCH ABSOLUTE 3 FROM c")).forward);
  EXPECT_EQ(std::get<CloseCommand>(Recognize("CLOSE c")).name, "c");
  EXPECT_TRUE(std::get<CloseCommand>(Recognize("CLOSE ALL")).all);
}

TEST(RecognizeCommand, Deallocate) {
  EXPECT_EQ(std::get<DeallocateCommand>(Recognize("DEALLOCATE _pg3_0")).name, "_pg3_0");
  EXPECT_EQ(std::get<DeallocateCommand>(Recognize("DEALLOCATE PREPARE \"S 1\"")).name, "S 1");
  EXPECT_TRUE(std::get<DeallocateCommand>(Recognize("DEALLOCATE ALL")).all);
}

TEST(RecognizeCommand, ServerSettings) {
  const auto set = std::get<SettingCommand>(Recognize("SET statement_timeout = '5s'"));
  EXPECT_EQ(set.kind, SettingCommand::Kind::kSet);
  EXPECT_EQ(set.value, "5s");
  EXPECT_EQ(std::get<SettingCommand>(Recognize("SET LOCAL statement_timeout TO 100")).value, "100");
  EXPECT_EQ(std::get<SettingCommand>(Recognize("RESET statement_timeout")).kind,
            SettingCommand::Kind::kReset);
  EXPECT_EQ(std::get<SettingCommand>(Recognize("SHOW statement_timeout")).kind,
            SettingCommand::Kind::kShow);
  EXPECT_EQ(*ParseDurationMillis("x", "250ms"), 250);
  EXPECT_EQ(*ParseDurationMillis("x", "2min"), 120000);
  EXPECT_EQ(*ParseDurationMillis("x", "7"), 7);
  EXPECT_FALSE(ParseDurationMillis("statement_timeout", "soon").ok());
  EXPECT_FALSE(ParseDurationMillis("statement_timeout", "-1").ok());
}

std::vector<Fields> ReadAll(const CopyOptions& options, const std::vector<std::string>& pieces) {
  CopyRowReader reader(options);
  std::vector<Fields> rows;
  Fields fields;
  for (const auto& piece : pieces) {
    reader.Feed(piece);
    while (true) {
      auto next = reader.NextRow(fields);
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok() || !*next) break;
      rows.push_back(fields);
    }
  }
  reader.Finish();
  while (true) {
    auto next = reader.NextRow(fields);
    EXPECT_TRUE(next.ok()) << next.status().ToString();
    if (!next.ok() || !*next) break;
    rows.push_back(fields);
  }
  return rows;
}

TEST(CopyRowReader, TextFormatUnescapesAndKnowsNull) {
  CopyOptions text;
  const auto rows = ReadAll(text, {"1\ta\\tb\\\\c\\nd\t\\N\n2\t\\x41\\101\t\\\\N\n", "\\.\n"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (Fields{"1", "a\tb\\c\nd", std::nullopt}));
  EXPECT_EQ(rows[1], (Fields{"2", "AA", "\\N"}));  // an escaped backslash is not NULL
}

TEST(CopyRowReader, CsvQuotesSpanMessagesAndLines) {
  CopyOptions csv;
  csv.format = CopyFormat::kCsv;
  csv.delimiter = ',';
  csv.null_string = "";
  csv.header = true;
  const auto rows =
      ReadAll(csv, {"id,body\n1,\"a, b\",x\n2,\"multi", "\nline \"\"q\"\"\",\n3,,\"\"", "\n4"});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (Fields{"1", "a, b", "x"}));
  EXPECT_EQ(rows[1], (Fields{"2", "multi\nline \"q\"", std::nullopt}));
  EXPECT_EQ(rows[2], (Fields{"3", std::nullopt, ""}));  // unquoted empty is NULL, "" is empty
  EXPECT_EQ(rows[3], (Fields{"4"}));                    // the last line needs no newline
}

TEST(CopyRowReader, CsvUnterminatedQuoteIsAnErrorWithItsLine) {
  CopyOptions csv;
  csv.format = CopyFormat::kCsv;
  csv.delimiter = ',';
  csv.null_string = "";
  CopyRowReader reader(csv);
  reader.Feed("1,ok\n2,\"open");
  reader.Finish();
  Fields fields;
  ASSERT_TRUE(*reader.NextRow(fields));
  auto next = reader.NextRow(fields);
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.status().message().find("line 2"), std::string::npos);
}

TEST(CopyRowReader, BinaryRowsSplitAnywhere) {
  std::string data("PGCOPY\n\xff\r\n\0", 11);
  data += std::string("\0\0\0\0\0\0\0\0", 8);
  data += std::string("\0\x02\0\0\0\x01X\xff\xff\xff\xff", 11);  // 2 fields: "X", NULL
  data += std::string("\xff\xff", 2);
  CopyOptions binary;
  binary.format = CopyFormat::kBinary;
  for (size_t cut = 1; cut < data.size(); ++cut) {
    const auto rows = ReadAll(binary, {data.substr(0, cut), data.substr(cut)});
    ASSERT_EQ(rows.size(), 1u) << cut;
    EXPECT_EQ(rows[0], (Fields{"X", std::nullopt}));
  }
}

// The binary header, then `rows`.
std::string BinaryCopy(const std::string& rows) {
  return std::string("PGCOPY\n\xff\r\n\0", 11) + std::string(8, '\0') + rows;
}

// The error of reading `data` whole with `max_row_bytes`; the OK status when it reads.
Status BinaryCopyError(const std::string& data, size_t max_row_bytes = SIZE_MAX) {
  CopyOptions binary;
  binary.format = CopyFormat::kBinary;
  CopyRowReader reader(binary, max_row_bytes);
  reader.Feed(data);
  std::vector<std::optional<std::string>> fields;
  while (true) {
    auto next = reader.NextRow(fields);
    if (!next.ok()) return next.status();
    if (!*next) return Status::OK();
  }
}

std::string SqlstateOf(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail != nullptr ? detail->code() : "";
}

TEST(CopyRowReader, BinaryNegativeFieldCountOtherThanMinusOneIs22P04NamingTheRow) {
  const std::string one_row("\0\x01\0\0\0\x01X", 7);
  // A second row whose field count is -2: before, it read as a row of no fields.
  const Status status = BinaryCopyError(BinaryCopy(one_row + std::string("\xff\xfe", 2)));
  EXPECT_EQ(SqlstateOf(status), "22P04");
  EXPECT_EQ(status.message(),
            "COPY, line 2: row field count is -2 (only -1, the end of the data, may be negative)");
  const Status lowest = BinaryCopyError(BinaryCopy(std::string("\x80\x00", 2)));
  EXPECT_EQ(lowest.message(),
            "COPY, line 1: row field count is -32768 (only -1, the end of the data, may be "
            "negative)");
  EXPECT_TRUE(BinaryCopyError(BinaryCopy(one_row + std::string("\xff\xff", 2))).ok());
}

TEST(CopyRowReader, BinaryDeclaredLengthsOverTheLimitAreRefusedBeforeTheirBytesArrive) {
  // A field that declares 2 GiB - 1 bytes, of which none follow: refused at once (it used to
  // wait, buffering whatever came, for bytes that may never come).
  const Status field =
      BinaryCopyError(BinaryCopy(std::string("\0\x01\x7f\xff\xff\xff", 6)), 1 << 20);
  EXPECT_EQ(SqlstateOf(field), "54000");
  EXPECT_EQ(field.message(),
            "COPY, line 1: field 1 declares 2147483647 bytes, over the session's memory limit of "
            "1048576 bytes");
  // Fields each under the limit, together over it.
  std::string row("\0\x02", 2);
  row += std::string("\0\0\x02\0", 4) + std::string(512, 'a');
  row += std::string("\0\0\x02\0", 4) + std::string(512, 'b');
  const Status whole = BinaryCopyError(BinaryCopy(row), 1000);
  EXPECT_EQ(whole.message(),
            "COPY, line 1: the row declares 1034 bytes, over the session's memory limit of 1000 "
            "bytes");
  EXPECT_TRUE(BinaryCopyError(BinaryCopy(row + std::string("\xff\xff", 2)), 1034).ok());
  // The header extension.
  std::string header("PGCOPY\n\xff\r\n\0", 11);
  header += std::string("\0\0\0\0\x7f\0\0\0", 8);
  const Status extension = BinaryCopyError(header, 1 << 20);
  EXPECT_EQ(SqlstateOf(extension), "54000");
  EXPECT_EQ(extension.message(),
            "COPY: the header extension declares 2130706432 bytes, over the session's "
            "memory limit of 1048576 bytes");
  const Status negative = BinaryCopyError(BinaryCopy(std::string("\0\x01\xff\xff\xff\xfe", 6)));
  EXPECT_EQ(SqlstateOf(negative), "22P04");
  EXPECT_EQ(negative.message(), "COPY, line 1, field 1: invalid field length -2");
}

// A record that arrives a byte per CopyData message is scanned once: each message resumes the
// search for its end where the last stopped (it restarted at the record's start, so a long line
// in small messages cost time quadratic in its length). Quotes, doubled quotes and escapes split
// from what follows them are still read whole.
TEST(CopyRowReader, ALongRecordInOneByteMessagesReadsAsOne) {
  const std::string body(256 * 1024, 'x');
  CopyOptions csv;
  csv.format = CopyFormat::kCsv;
  csv.delimiter = ',';
  csv.null_string = "";
  CopyOptions escaped = csv;
  escaped.escape = '\\';
  CopyOptions text;
  struct Case {
    CopyOptions options;
    std::string data;
    Fields row;
  };
  const std::vector<Case> cases = {
      {text, "1\t" + body + "\n", Fields{"1", body}},
      {csv, "1,\"" + body + "\"\"\n,\"\n", Fields{"1", body + "\"\n,"}},
      {escaped, "\"a\\\"" + body + "\\\\\"\n", Fields{"a\"" + body + "\\"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> pieces;
    for (char ch : c.data) pieces.emplace_back(1, ch);
    const auto rows = ReadAll(c.options, pieces);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0], c.row);
  }
}

// Found by tests/fuzz/fuzz_copy: data that ended inside the header extension read as a COPY of
// no rows (NextRow said "no more" without reaching the end), so the COPY succeeded.
TEST(CopyRowReader, BinaryDataEndingInsideTheHeaderExtensionIs22P04) {
  std::string header("PGCOPY\n\xff\r\n\0", 11);
  header += std::string("\0\0\0\0\0\0\0\x10", 8) + "short";  // declares 16 bytes, has 5
  CopyOptions binary;
  binary.format = CopyFormat::kBinary;
  CopyRowReader reader(binary, 1 << 20);
  reader.Feed(header);
  std::vector<std::optional<std::string>> fields;
  auto waiting = reader.NextRow(fields);
  ASSERT_TRUE(waiting.ok());
  EXPECT_FALSE(*waiting);  // more may come
  reader.Finish();
  auto ended = reader.NextRow(fields);
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(SqlstateOf(ended.status()), "22P04");
  EXPECT_EQ(ended.status().message(),
            "COPY, line 0: incomplete header extension at the end of the data");
  EXPECT_FALSE(reader.at_end());
}

}  // namespace
}  // namespace weir::serve
