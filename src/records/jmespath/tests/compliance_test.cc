// The JMESPath compliance suite (jmespath/jmespath.test), every file but benchmarks.json: each
// case compiles and evaluates its expression on its suite's `given` document, once as an owned
// value and once borrowed from simdjson's document, and must give the expected `result` (by
// JMESPath equality) or the expected `error` kind (the ErrorDetail code).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "assert_status.h"
#include "records/jmespath/expression.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {
namespace {

// Counted when the suite was pinned; a new suite version changes these on purpose.
constexpr int kExpectedFiles = 15;
constexpr int kExpectedCases = 892;

bool Has(const Value& object, std::string_view key, Value* out) {
  bool found = false;
  object.ForEachMember([&](std::string_view name, const Value& value) {
    if (name == key) {
      *out = value;
      found = true;
    }
  });
  return found;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ErrorCode(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail == nullptr ? "(no detail) " + status.ToString() : detail->code();
}

// "" when the case passes on `given`; what went wrong otherwise.
std::string RunCase(const Value& given, const std::string& expression, bool expects_error,
                    const std::string& error, const Value& result) {
  auto compiled = Expression::Compile(expression);
  if (!compiled.ok()) {
    if (expects_error && ErrorCode(compiled.status()) == error) return "";
    return "compile failed: " + compiled.status().ToString();
  }
  Value actual;
  const Status status = compiled->Evaluate(given, &actual);
  if (expects_error) {
    if (!status.ok() && ErrorCode(status) == error) return "";
    return "expected a " + error + " error, got " +
           (status.ok() ? "the result " + ToJson(actual) : status.ToString());
  }
  if (!status.ok()) return "evaluation failed: " + status.ToString();
  if (!Equal(actual, result)) {
    return "expected " + ToJson(result) + ", got " + ToJson(actual);
  }
  return "";
}

TEST(JmespathCompliance, EveryCaseOfEveryFileButBenchmarksPasses) {
  const std::filesystem::path dir = WEIR_JMESPATH_COMPLIANCE_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir))
      << dir << " is missing: the suite lives in shared/testdata/jmespath-compliance next to the "
      << "repository";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json" && entry.path().filename() != "benchmarks.json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(static_cast<int>(files.size()), kExpectedFiles);

  int total = 0;
  int passed = 0;
  simdjson::dom::parser parser;
  for (const auto& file : files) {
    ASSERT_OK_AND_ASSIGN(const Value suites, ParseJson(ReadFile(file)));
    ASSERT_TRUE(suites.is_array()) << file;
    for (size_t s = 0; s < suites.size(); ++s) {
      const Value suite = suites.At(s);
      Value given;
      Value cases;
      ASSERT_TRUE(Has(suite, "given", &given) && Has(suite, "cases", &cases)) << file;
      const simdjson::padded_string given_text(ToJson(given));
      simdjson::dom::element given_document;
      ASSERT_EQ(parser.parse(given_text).get(given_document), simdjson::SUCCESS);
      for (size_t c = 0; c < cases.size(); ++c) {
        const Value test = cases.At(c);
        Value expression;
        Value error;
        Value result;
        ASSERT_TRUE(Has(test, "expression", &expression)) << file;
        const bool expects_error = Has(test, "error", &error);
        const bool expects_result = Has(test, "result", &result);
        ASSERT_NE(expects_error, expects_result) << file << ": " << ToJson(test);
        const std::string text(expression.string());
        const std::string error_kind(expects_error ? error.string() : "");
        ++total;
        std::string failure = RunCase(given, text, expects_error, error_kind, result);
        if (failure.empty()) {
          failure =
              RunCase(Value::Borrowed(given_document), text, expects_error, error_kind, result);
          if (!failure.empty()) failure = "(on the simdjson document) " + failure;
        }
        if (failure.empty()) {
          ++passed;
        } else {
          ADD_FAILURE() << file.filename().string() << ": " << text << ": " << failure;
        }
      }
    }
  }
  std::cout << "jmespath compliance: " << passed << "/" << total << " cases passed" << std::endl;
  EXPECT_EQ(total, kExpectedCases);
  EXPECT_EQ(passed, total);
}

}  // namespace
}  // namespace weir::records::jmespath
