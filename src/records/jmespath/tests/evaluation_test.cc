// Evaluation beyond the compliance suite: number semantics, compact JSON, code points, stable
// sorts, error classes, and values borrowed from simdjson's document.
#include <gtest/gtest.h>

#include <string>

#include "assert_status.h"
#include "records/jmespath/expression.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {
namespace {

// The JSON text of `expression` applied to `document` (parsed into an owned value).
std::string Eval(std::string_view expression, std::string_view document) {
  auto input = ParseJson(document);
  if (!input.ok()) return "bad document: " + input.status().ToString();
  auto compiled = Expression::Compile(expression);
  if (!compiled.ok()) return "compile error: " + compiled.status().ToString();
  auto result = compiled->Evaluate(*input);
  if (!result.ok()) return "error: " + result.status().ToString();
  return ToJson(*result);
}

TEST(JmespathEvaluation, IntegersStayExactAndDoublesStayDoubles) {
  EXPECT_EQ(Eval("a", R"({"a": 9007199254740993})"), "9007199254740993");
  EXPECT_EQ(Eval("sum(a)", R"({"a": [9007199254740993, 1]})"), "9007199254740994");
  EXPECT_EQ(Eval("sum(a)", R"({"a": [9223372036854775807, 1]})"), "9223372036854775808");
  EXPECT_EQ(Eval("sum(a)", R"({"a": [1, 0.5]})"), "1.5");
  EXPECT_EQ(Eval("avg(a)", R"({"a": [1, 2]})"), "1.5");
  EXPECT_EQ(Eval("abs(a)", R"({"a": -9223372036854775808})"), "9223372036854775808");
  EXPECT_EQ(Eval("ceil(a)", R"({"a": 1.2})"), "2");
  EXPECT_EQ(Eval("floor(a)", R"({"a": -1.2})"), "-2");
  EXPECT_EQ(Eval("a == `1.0`", R"({"a": 1})"), "true");
  EXPECT_EQ(Eval("a < `1.5`", R"({"a": 1})"), "true");
  EXPECT_EQ(Eval("to_number('12')", "{}"), "12");
  EXPECT_EQ(Eval("to_number('-1.5e3')", "{}"), "-1500");
  EXPECT_EQ(Eval("to_number('1e999')", "{}"), "null");
  EXPECT_EQ(Eval("to_number(' 1')", "{}"), "null");
}

TEST(JmespathEvaluation, OrderingComparesNumbersOnlyAndEqualityIsDeep) {
  EXPECT_EQ(Eval("a < b", R"({"a": "x", "b": "y"})"), "null");
  EXPECT_EQ(Eval("a == b", R"({"a": {"x": [1, {"y": null}]}, "b": {"x": [1.0, {"y": null}]}})"),
            "true");
  EXPECT_EQ(Eval("a == b", R"({"a": {"x": 1, "y": 2}, "b": {"y": 2, "x": 1}})"), "true");
  EXPECT_EQ(Eval("a == b", R"({"a": {"x": 1}, "b": {"x": 1, "y": null}})"), "false");
  EXPECT_EQ(Eval("a == b", R"({"a": [1, 2], "b": [2, 1]})"), "false");
  EXPECT_EQ(Eval("a != b", R"({"a": true, "b": 1})"), "true");
}

TEST(JmespathEvaluation, ToStringGivesCompactJsonInKeyOrder) {
  EXPECT_EQ(Eval("to_string(@)", R"({"b": [1, 2.5, "x\"y"], "a": {"c": null}})"),
            R"("{\"b\":[1,2.5,\"x\\\"y\"],\"a\":{\"c\":null}}")");
  EXPECT_EQ(Eval("to_string(a)", R"({"a": "tab\there"})"), R"("tab\there")");
  EXPECT_EQ(Eval("to_string(`[\"\\u0001\"]`)", "{}"), R"("[\"\\u0001\"]")");
}

TEST(JmespathEvaluation, StringsAreMeasuredAndReversedInCodePoints) {
  EXPECT_EQ(Eval("length(a)", R"({"a": "h\u00e9\u2713\ud83d\ude00"})"), "4");
  EXPECT_EQ(Eval("reverse(a)", R"({"a": "a\u00e9\ud83d\ude00"})"),
            "\"\xF0\x9F\x98\x80\xC3\xA9\x61\"");
  EXPECT_EQ(Eval("sort(a)", R"({"a": ["\u00e9", "z", "a"]})"), "[\"a\",\"z\",\"\xC3\xA9\"]");
}

TEST(JmespathEvaluation, SortByIsStableAndMaxByTakesTheFirstOfEqualKeys) {
  const std::string people =
      R"({"p": [{"k": 2, "n": "a"}, {"k": 1, "n": "b"}, {"k": 2, "n": "c"}, {"k": 1, "n": "d"}]})";
  EXPECT_EQ(Eval("sort_by(p, &k)[].n", people), R"(["b","d","a","c"])");
  EXPECT_EQ(Eval("max_by(p, &k).n", people), R"("a")");
  EXPECT_EQ(Eval("min_by(p, &k).n", people), R"("b")");
  EXPECT_EQ(Eval("reverse(sort_by(p, &n))[].n", people), R"(["d","c","b","a"])");
}

TEST(JmespathEvaluation, MultiSelectHashesKeepTheirKeyOrderAndMergeOverwritesInPlace) {
  EXPECT_EQ(Eval("{z: a, a: b, m: c}", R"({"a": 1, "b": 2, "c": 3})"), R"({"z":1,"a":2,"m":3})");
  EXPECT_EQ(Eval("merge(@, `{\"a\": 9, \"d\": 4}`)", R"({"a": 1, "b": 2})"),
            R"({"a":9,"b":2,"d":4})");
  EXPECT_EQ(Eval("keys(@)", R"({"b": 1, "a": 2})"), R"(["b","a"])");
}

TEST(JmespathEvaluation, TypeErrorsAreBadDataNamingTheFunctionAndArgument) {
  ASSERT_OK_AND_ASSIGN(const Expression expression, Expression::Compile("abs(a)"));
  ASSERT_OK_AND_ASSIGN(const Value input, ParseJson(R"({"a": "x"})"));
  const auto result = expression.Evaluate(input);
  ASSERT_FALSE(result.ok());
  const ErrorDetail* detail = GetErrorDetail(result.status());
  ASSERT_NE(detail, nullptr);
  EXPECT_EQ(detail->error_class(), ErrorClass::kBadData);
  EXPECT_EQ(detail->source(), "jmespath");
  EXPECT_EQ(detail->code(), "invalid-type");
  EXPECT_EQ(result.status().message(),
            "invalid-type error at offset 0: abs(): argument 1 must be number, got string");
}

TEST(JmespathEvaluation, TheLongestChainAllowedEvaluatesWithinTheStack) {
  std::string chain = "a";
  while (chain.size() + 2 <= 16384) chain += ".a";
  EXPECT_EQ(Eval(chain, R"({"a": {"a": {"a": 1}}})"), "null");
  std::string pipes = "a";
  while (pipes.size() + 4 <= 16384) pipes += " | @";
  EXPECT_EQ(Eval(pipes, R"({"a": 5})"), "5");
}

TEST(JmespathEvaluation, ABorrowedDocumentGivesTheSameResultsAsItsOwnedCopy) {
  const std::string text =
      R"({"a": {"b": [1, {"c": "x"}, [2, 3]]}, "d": [{"e": 1}, {"e": 2}, {"f": 3}], "g": "s"})";
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(padded).get(root), simdjson::SUCCESS);
  ASSERT_OK_AND_ASSIGN(const Value owned, ParseJson(text));
  for (const char* expression :
       {"a.b[1].c", "a.b[-1][0]", "d[*].e", "d[?e > `1`]", "a.b[]", "*.b", "keys(@)", "values(a)",
        "length(d)", "to_string(a)", "{x: g, y: d[0]}", "[g, a.b[0]]",
        "sort_by(d, &to_string(e))[].e", "a.b[::-1]", "merge(d[0], d[2])", "@"}) {
    ASSERT_OK_AND_ASSIGN(const Expression compiled, Expression::Compile(expression));
    ASSERT_OK_AND_ASSIGN(const Value from_document, compiled.Evaluate(Value::Borrowed(root)));
    ASSERT_OK_AND_ASSIGN(const Value from_copy, compiled.Evaluate(owned));
    EXPECT_EQ(ToJson(from_document), ToJson(from_copy)) << expression;
    EXPECT_FALSE(from_document.Owned().is_borrowed());
    EXPECT_EQ(ToJson(from_document.Owned()), ToJson(from_copy)) << expression;
  }
  ASSERT_OK_AND_ASSIGN(const Expression path, Expression::Compile("a.b[1]"));
  EXPECT_TRUE(path.is_plain_path());
  ASSERT_OK_AND_ASSIGN(const Value found, path.Evaluate(Value::Borrowed(root)));
  EXPECT_TRUE(found.is_borrowed());  // a view into the document, nothing copied
  ASSERT_OK_AND_ASSIGN(const Expression projection, Expression::Compile("d[*].e"));
  EXPECT_FALSE(projection.is_plain_path());
}

}  // namespace
}  // namespace weir::records::jmespath
