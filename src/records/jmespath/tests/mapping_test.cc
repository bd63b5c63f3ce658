// Mappings: compiled once with errors naming the column; RecordMapper applies them per record
// and rejects what cannot be mapped with the reason.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "assert_status.h"
#include "records/jmespath/mapping.h"

namespace weir::records::jmespath {
namespace {

std::shared_ptr<const Mapping> MustCompile(std::vector<MappingColumn> columns) {
  auto mapping = Mapping::Compile(std::move(columns));
  EXPECT_TRUE(mapping.ok()) << mapping.status().ToString();
  return mapping.ok() ? *mapping : nullptr;
}

std::string RowJson(const std::vector<Value>& row) {
  std::string out;
  for (const Value& value : row) out += ToJson(value) + ";";
  return out;
}

TEST(JmespathMapping, EachColumnGetsItsExpressionsValueInOrder) {
  RecordMapper mapper(MustCompile({{"id", "uuid"},
                                   {"browser", "properties.\"$browser\""},
                                   {"first_flag", "properties.flags[0]"},
                                   {"flags", "join(',', properties.flags)"},
                                   {"n_flags", "length(properties.flags)"},
                                   {"missing", "nope.nope"}}));
  std::vector<Value> row;
  ASSERT_OK(mapper.Apply(
      R"({"uuid": "u1", "properties": {"$browser": "Firefox", "flags": ["a", "b"]}})", &row));
  EXPECT_EQ(RowJson(row), R"("u1";"Firefox";"a";"a,b";2;null;)");
  EXPECT_TRUE(row[0].is_borrowed());  // read from the document in place

  // The same mapper, the next record: the row is replaced.
  ASSERT_OK(mapper.Apply(R"({"uuid": "u2", "properties": {"flags": []}})", &row));
  EXPECT_EQ(RowJson(row), R"("u2";null;null;"";0;null;)");
}

TEST(JmespathMapping, RecordsThatAreNotAnObjectAreMappedAsTheyAre) {
  RecordMapper mapper(MustCompile({{"first", "[0]"}, {"count", "length(@)"}}));
  std::vector<Value> row;
  ASSERT_OK(mapper.Apply("[7, 8, 9]", &row));
  EXPECT_EQ(RowJson(row), "7;3;");
}

void ExpectReject(RecordMapper& mapper, std::string_view json, std::string_view reason,
                  std::string_view message) {
  std::vector<Value> row(3);
  const Status status = mapper.Apply(json, &row);
  ASSERT_FALSE(status.ok()) << json;
  const ErrorDetail* detail = GetErrorDetail(status);
  ASSERT_NE(detail, nullptr);
  EXPECT_EQ(detail->error_class(), ErrorClass::kBadData);
  EXPECT_EQ(detail->code(), reason);
  EXPECT_EQ(status.message(), message);
  EXPECT_TRUE(row.empty());
}

TEST(JmespathMapping, UnmappableRecordsAreRejectedWithTheReason) {
  RecordMapper mapper(MustCompile({{"id", "id"}, {"total", "sum(items[*].price)"}}), 64);
  ExpectReject(mapper, R"({"id": 1, "items": [{"price": 1}, {"price": "2"}]})", "mapping_failed",
               "mapping column total (sum(items[*].price)): invalid-type error at offset 0: "
               "sum(): argument 1 must be array of numbers, got array");
  ExpectReject(mapper, R"({"id": 1,)", "invalid_json",
               "invalid JSON: TAPE_ERROR: The JSON document has an improper structure: missing "
               "or superfluous commas, braces, missing keys, etc.  This is a fatal and "
               "unrecoverable error.");
  ExpectReject(mapper, "{\"id\": \"\xFF\"}", "invalid_utf8",
               "invalid UTF-8: UTF8_ERROR: The input is not valid UTF-8");
  ExpectReject(mapper, "{\"id\": \"" + std::string(60, 'x') + "\"}", "record_too_large",
               "the record has 70 bytes, more than 64");
  // The mapper goes on with the next record.
  std::vector<Value> row;
  ASSERT_OK(mapper.Apply(R"({"id": 2, "items": [{"price": 1}, {"price": 2.5}]})", &row));
  EXPECT_EQ(RowJson(row), "2;3.5;");
}

TEST(JmespathMapping, OneMappingServesAMapperPerThread) {
  const auto mapping = MustCompile({{"id", "id"},
                                    {"tags", "sort(tags)"},
                                    {"big", "tags[?length(@) > `1`] | join('+', @)"},
                                    {"shape", "{n: length(tags), first: tags[0]}"}});
  constexpr int kRecords = 2000;
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      RecordMapper mapper(mapping);
      std::vector<Value> row;
      for (int i = 0; i < kRecords; ++i) {
        const std::string id = std::to_string(t * kRecords + i);
        const std::string json = R"({"id": )" + id + R"(, "tags": ["z)" + id + R"(", "a", "m"]})";
        const std::string expected = id + R"(;["a","m","z)" + id + R"("];"z)" + id +
                                     R"(";{"n":3,"first":"z)" + id + R"("};)";
        if (!mapper.Apply(json, &row).ok() || RowJson(row) != expected) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>({0, 0}));
}

void ExpectCompileError(std::vector<MappingColumn> columns, std::string_view code,
                        std::string_view message) {
  auto mapping = Mapping::Compile(std::move(columns));
  ASSERT_FALSE(mapping.ok());
  const ErrorDetail* detail = GetErrorDetail(mapping.status());
  ASSERT_NE(detail, nullptr);
  EXPECT_EQ(detail->error_class(), ErrorClass::kFatal);
  EXPECT_EQ(detail->code(), code);
  EXPECT_EQ(mapping.status().message(), message);
}

TEST(JmespathMapping, AMappingThatDoesNotCompileNamesTheColumnAndTheProblem) {
  ExpectCompileError({{"a", "x"}, {"b", "x.[y"}}, "syntax",
                     "mapping column b (x.[y): syntax error at offset 4: expected ',', found end "
                     "of the expression");
  ExpectCompileError({{"a", "lenght(x)"}}, "unknown-function",
                     "mapping column a (lenght(x)): unknown-function error at offset 0: unknown "
                     "function lenght()");
  ExpectCompileError({{"a", "x"}, {"a", "y"}}, "invalid_mapping",
                     "mapping column a is given twice");
  ExpectCompileError({{"", "x"}}, "invalid_mapping", "a mapping column has an empty name");
  ExpectCompileError({}, "invalid_mapping", "a mapping needs at least one column");
}

}  // namespace
}  // namespace weir::records::jmespath
