// Property tests with a seeded generator: on random documents, the fast path (plain paths
// walked in simdjson's document) gives what the tree walk gives on the owned copy, and every
// expression gives the same result (or error) on the borrowed document as on its copy.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "assert_status.h"
#include "records/jmespath/expression.h"
#include "records/jmespath/value.h"

namespace weir::records::jmespath {
namespace {

constexpr const char* kKeys[] = {"a", "b", "c", "e f", "$x", "\u00e9"};

class Generator {
 public:
  explicit Generator(uint64_t seed) : random_(seed) {}

  int Pick(int n) { return static_cast<int>(random_() % static_cast<uint64_t>(n)); }

  // JSON text of a random value; objects and arrays nest up to `depth`.
  std::string Document(int depth, bool object = false) {
    const int kind = object ? 6 : depth > 0 ? Pick(10) : Pick(6);
    switch (kind) {
      case 0:
        return "null";
      case 1:
        return Pick(2) ? "true" : "false";
      case 2:
        return std::to_string(static_cast<int64_t>(random_() % 2001) - 1000);
      case 3:
        return std::to_string(static_cast<int64_t>(random_()));  // beyond 32 bits
      case 4:
        return std::to_string(Pick(1000)) + "." + std::to_string(Pick(100)) + "e" +
               std::to_string(Pick(5) - 2);
      case 5: {
        static const char* kStrings[] = {"\"\"",           "\"x\"",  "\"abc\"",
                                         "\"\\u2713\\n\"", "\"10\"", "\"b\""};
        return kStrings[Pick(6)];
      }
      case 6:
      case 7:
      case 8: {
        std::string text = "{";
        const int count = 1 + Pick(6);
        bool used[6] = {};
        for (int i = 0; i < count; ++i) {
          const int key = Pick(6);
          if (used[key]) continue;  // unique keys
          used[key] = true;
          if (text.size() > 1) text += ",";
          text += "\"" + std::string(kKeys[key]) + "\":" + Document(depth - 1);
        }
        return text + "}";
      }
      default: {
        std::string text = "[";
        const int count = Pick(5);
        for (int i = 0; i < count; ++i) text += (i ? "," : "") + Document(depth - 1);
        return text + "]";
      }
    }
  }

  // A plain path of one to four fields and indices; `field_first` when it follows a dot.
  std::string Path(bool field_first = true) {
    std::string text;
    const int steps = 1 + Pick(4);
    for (int i = 0; i < steps; ++i) {
      if (Pick(3) == 0 && !(i == 0 && field_first)) {
        text += "[" + std::to_string(Pick(7) - 3) + "]";
      } else {
        text += (text.empty() ? "" : ".") + Quote(kKeys[Pick(6)]);
      }
    }
    return text;
  }

  // A path that mostly follows `document` (so it finds values), sometimes stepping off it.
  std::string WalkPath(Value document) {
    std::string text;
    const int steps = 1 + Pick(4);
    for (int i = 0; i < steps; ++i) {
      if (document.is_array() && document.size() > 0 && Pick(5) != 0) {
        const int size = static_cast<int>(document.size());
        const int index = Pick(2 * size) - size;  // negative ones count from the end
        text += "[" + std::to_string(index) + "]";
        document = document.At(static_cast<size_t>(index < 0 ? index + size : index));
      } else if (document.is_object() && document.size() > 0 && Pick(5) != 0) {
        std::vector<std::string> keys;
        document.ForEachMember([&](std::string_view key, const Value&) { keys.emplace_back(key); });
        const std::string& key = keys[Pick(static_cast<int>(keys.size()))];
        text += (text.empty() ? "" : ".") + Quote(key);
        document = document.Find(key);
      } else {
        text += (text.empty() ? "" : ".") + Quote(kKeys[Pick(6)]);
        document = Value();
      }
    }
    return text;
  }

  // A random expression over paths: projections, filters, functions, multi-selects.
  std::string Expression(int depth) {
    if (depth == 0) return Path();
    const std::string p = Path();
    switch (Pick(12)) {
      case 0:
        return p + "[*]." + Expression(depth - 1);
      case 1:
        return p + ".*";
      case 2:
        return p + "[?" + Path() + " > `0`]." + Path();
      case 3:
        return p + "[]";
      case 4:
        return "length(" + p + ")";
      case 5:
        return "sort_by(" + p + ", &" + Path() + ")";
      case 6:
        return "{k: " + Expression(depth - 1) + ", l: " + Path() + "}";
      case 7:
        return "[" + Expression(depth - 1) + ", " + Path() + "]";
      case 8:
        return "to_string(" + p + ")";
      case 9:
        return p + "[::-1]";
      case 10:
        return Expression(depth - 1) + " || " + Path();
      default:
        return "max(" + p + ")";
    }
  }

 private:
  static std::string Quote(std::string_view key) {
    if (key == "a" || key == "b" || key == "c") return std::string(key);
    return "\"" + std::string(key) + "\"";
  }

  std::mt19937_64 random_;
};

std::string Outcome(const Status& status, const Value& value) {
  if (!status.ok()) return "error " + GetErrorDetail(status)->code();
  return ToJson(value);
}

TEST(JmespathPathProperty, PlainPathsInTheDocumentMatchTheTreeWalkOnTheOwnedCopy) {
  Generator generator(20261201);
  simdjson::dom::parser parser;
  int compared = 0;
  int non_null = 0;
  for (int d = 0; d < 400; ++d) {
    const std::string text = generator.Document(4, /*object=*/true);
    const simdjson::padded_string padded(text);
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(padded).get(root), simdjson::SUCCESS) << text;
    const Value borrowed = Value::Borrowed(root);
    ASSERT_OK_AND_ASSIGN(const Value owned, ParseJson(text));
    for (int p = 0; p < 25; ++p) {
      const std::string path =
          p % 2 ? generator.Path(/*field_first=*/false) : generator.WalkPath(owned);
      ASSERT_OK_AND_ASSIGN(const Expression expression, Expression::Compile(path));
      ASSERT_TRUE(expression.is_plain_path()) << path;
      Value fast_document;
      Value fast_owned;
      Value tree_owned;
      Value tree_document;
      ASSERT_OK(expression.Evaluate(borrowed, &fast_document));
      ASSERT_OK(expression.Evaluate(owned, &fast_owned));
      ASSERT_OK(expression.EvaluateTree(owned, &tree_owned));
      ASSERT_OK(expression.EvaluateTree(borrowed, &tree_document));
      const std::string expected = ToJson(tree_owned);
      ASSERT_EQ(ToJson(fast_document), expected) << path << " on " << text;
      ASSERT_EQ(ToJson(fast_owned), expected) << path << " on " << text;
      ASSERT_EQ(ToJson(tree_document), expected) << path << " on " << text;
      ASSERT_TRUE(Equal(fast_document, tree_owned)) << path << " on " << text;
      ++compared;
      non_null += tree_owned.is_null() ? 0 : 1;
    }
  }
  EXPECT_EQ(compared, 10000);
  EXPECT_GT(non_null, 1500);  // the generator reaches into the documents, not just misses
}

TEST(JmespathPathProperty, EveryExpressionGivesTheSameOnTheDocumentAsOnItsCopy) {
  Generator generator(42);
  simdjson::dom::parser parser;
  int errors = 0;
  int non_null = 0;
  for (int d = 0; d < 300; ++d) {
    const std::string text = generator.Document(4, /*object=*/true);
    const simdjson::padded_string padded(text);
    simdjson::dom::element root;
    ASSERT_EQ(parser.parse(padded).get(root), simdjson::SUCCESS) << text;
    ASSERT_OK_AND_ASSIGN(const Value owned, ParseJson(text));
    for (int e = 0; e < 20; ++e) {
      const std::string source = generator.Expression(2);
      ASSERT_OK_AND_ASSIGN(const Expression expression, Expression::Compile(source));
      Value from_document;
      Value from_copy;
      const Status document_status = expression.Evaluate(Value::Borrowed(root), &from_document);
      const Status copy_status = expression.Evaluate(owned, &from_copy);
      ASSERT_EQ(Outcome(document_status, from_document), Outcome(copy_status, from_copy))
          << source << " on " << text;
      errors += copy_status.ok() ? 0 : 1;
      non_null += copy_status.ok() && !from_copy.is_null() ? 1 : 0;
    }
  }
  EXPECT_GT(errors, 0);  // type errors are compared too
  EXPECT_GT(non_null, 500);
}

}  // namespace
}  // namespace weir::records::jmespath
