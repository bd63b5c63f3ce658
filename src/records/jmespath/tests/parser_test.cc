// The parser's trees (precedence and associativity, printed as S-expressions) and its errors
// (kind, class and byte offset).
#include <gtest/gtest.h>

#include <string>

#include "assert_status.h"
#include "records/jmespath/ast.h"
#include "records/jmespath/parser.h"

namespace weir::records::jmespath {
namespace {

std::string Print(const Node& node) {
  auto children = [&node](std::string head) {
    for (const auto& child : node.children) head += " " + Print(*child);
    return "(" + head + ")";
  };
  switch (node.kind) {
    case NodeKind::kCurrent:
      return "@";
    case NodeKind::kField:
      return node.name;
    case NodeKind::kSubexpression:
      return children("sub");
    case NodeKind::kIndex:
      return "[" + std::to_string(node.index) + "]";
    case NodeKind::kSlice:
      return "[" + (node.start ? std::to_string(*node.start) : "") + ":" +
             (node.stop ? std::to_string(*node.stop) : "") + ":" + std::to_string(node.step) + "]";
    case NodeKind::kProjection:
      return children("project");
    case NodeKind::kValueProjection:
      return children("values");
    case NodeKind::kFilterProjection:
      return children("filter");
    case NodeKind::kFlatten:
      return children("flatten");
    case NodeKind::kComparator: {
      static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
      return children(kOps[static_cast<int>(node.comparator)]);
    }
    case NodeKind::kOr:
      return children("or");
    case NodeKind::kAnd:
      return children("and");
    case NodeKind::kNot:
      return children("not");
    case NodeKind::kLiteral:
      return "`" + ToJson(node.literal) + "`";
    case NodeKind::kMultiSelectList:
      return children("list");
    case NodeKind::kMultiSelectHash: {
      std::string head = "hash";
      for (size_t i = 0; i < node.keys.size(); ++i) {
        head += " " + node.keys[i] + ":" + Print(*node.children[i]);
      }
      return "(" + head + ")";
    }
    case NodeKind::kPipe:
      return children("pipe");
    case NodeKind::kFunction:
      return children(node.name);
    case NodeKind::kExpref:
      return children("&");
  }
  return "?";
}

std::string Tree(std::string_view expression) {
  auto tree = Parse(expression);
  if (!tree.ok()) return "error: " + tree.status().ToString();
  return Print(**tree);
}

TEST(JmespathParser, DotBindsTighterThanComparisonsWhichBindTighterThanAndThenOrThenPipe) {
  EXPECT_EQ(Tree("a.b == c || d && e | f"), "(pipe (or (== (sub a b) c) (and d e)) f)");
  EXPECT_EQ(Tree("a || b && c"), "(or a (and b c))");
  EXPECT_EQ(Tree("(a || b) && c"), "(and (or a b) c)");
  EXPECT_EQ(Tree("!a && b"), "(and (not a) b)");
  EXPECT_EQ(Tree("!a.b"), "(sub (not a) b)");  // '!' binds tighter than '.', as in jmespath.py
  EXPECT_EQ(Tree("!(a.b)"), "(not (sub a b))");
}

TEST(JmespathParser, BinaryOperatorsAssociateToTheLeftExceptThroughTheirRightOperand) {
  EXPECT_EQ(Tree("a | b | c"), "(pipe (pipe a b) c)");
  EXPECT_EQ(Tree("a || b || c"), "(or (or a b) c)");
  EXPECT_EQ(Tree("a.b.c"), "(sub (sub a b) c)");
}

TEST(JmespathParser, AProjectionTakesWhatFollowsUntilAPipeOrAnOperator) {
  EXPECT_EQ(Tree("a[*].b.c"), "(project a (sub b c))");
  EXPECT_EQ(Tree("a[*].b | c"), "(pipe (project a b) c)");
  EXPECT_EQ(Tree("a[*].b[0]"), "(project a (sub b [0]))");
  EXPECT_EQ(Tree("a.*.b"), "(values a b)");
  EXPECT_EQ(Tree("*"), "(values @ @)");
  EXPECT_EQ(Tree("a[].b"), "(project (flatten a) b)");
  EXPECT_EQ(Tree("a[][]"), "(project (flatten (project (flatten a) @)) @)");
  EXPECT_EQ(Tree("a[1:3].b"), "(project (sub a [1:3:1]) b)");
  EXPECT_EQ(Tree("[::-1]"), "(project (sub @ [::-1]) @)");
}

TEST(JmespathParser, FiltersTakeAConditionAndProjectTheRest) {
  EXPECT_EQ(Tree("a[?b > `1`].c"), "(filter a c (> b `1`))");
  EXPECT_EQ(Tree("[?a == 'x' && !b]"), "(filter @ @ (and (== a `\"x\"`) (not b)))");
}

TEST(JmespathParser, MultiSelectsFunctionsAndExpressionReferences) {
  EXPECT_EQ(Tree("a.[b, c[0]]"), "(sub a (list b (sub c [0])))");
  EXPECT_EQ(Tree("{x: a, \"y z\": b.c}"), "(hash x:a y z:(sub b c))");
  EXPECT_EQ(Tree("sort_by(a, &b.c)[0]"), "(sub (sort_by a (& (sub b c))) [0])");
  EXPECT_EQ(Tree("length(@)"), "(length @)");
  EXPECT_EQ(Tree("not_null(a, b, c)"), "(not_null a b c)");
  EXPECT_EQ(Tree("'it\\'s'"), "`\"it's\"`");
  EXPECT_EQ(Tree("`{\"k\": [1, 2.5]}`"), "`{\"k\":[1,2.5]}`");
  EXPECT_EQ(Tree("\"\\u00e9\\n\""), "\xC3\xA9\n");
}

void ExpectError(std::string_view expression, std::string_view code, size_t offset) {
  auto tree = Parse(expression);
  ASSERT_FALSE(tree.ok()) << expression << " parsed as " << Print(**tree);
  const ErrorDetail* detail = GetErrorDetail(tree.status());
  ASSERT_NE(detail, nullptr) << tree.status().ToString();
  EXPECT_EQ(detail->code(), code) << expression << ": " << tree.status().ToString();
  EXPECT_EQ(detail->error_class(), ErrorClass::kFatal);
  EXPECT_NE(tree.status().message().find("offset " + std::to_string(offset) + ":"),
            std::string::npos)
      << expression << ": " << tree.status().ToString();
}

TEST(JmespathParser, ErrorsNameTheirKindAndTheOffsetOfTheOffendingToken) {
  ExpectError("a.", "syntax", 2);       // the end
  ExpectError("a.[", "syntax", 3);      // nothing after [
  ExpectError("foo.`1`", "syntax", 4);  // a literal after a dot
  ExpectError("a[b]", "syntax", 2);     // an identifier as an index
  ExpectError("a || ", "syntax", 5);
  ExpectError("{a: b,}", "syntax", 6);     // trailing comma
  ExpectError("a = b", "syntax", 2);       // '=' alone
  ExpectError("a ~ b", "syntax", 2);       // unknown character
  ExpectError("\"abc", "syntax", 0);       // unterminated
  ExpectError("`[1,`", "syntax", 0);       // not JSON
  ExpectError("\"f\"(a)", "syntax", 0);    // a quoted function name
  ExpectError("a[1:2:3:4]", "syntax", 7);  // a fourth slice part
  ExpectError("a[::0]", "invalid-value", 2);
  ExpectError("nope(a)", "unknown-function", 0);
  ExpectError("x.length(a, b)", "invalid-arity", 2);
  ExpectError("merge()", "invalid-arity", 0);
  ExpectError("a b", "syntax", 2);  // two expressions
}

TEST(JmespathParser, NestingIsBoundedSoAHostileExpressionCannotExhaustTheStack) {
  EXPECT_EQ(Tree(std::string(200, '(') + "a" + std::string(200, ')')), "a");
  ExpectError(std::string(300, '(') + "a" + std::string(300, ')'), "syntax", 256);
  ExpectError(std::string(300, '!') + "a", "syntax", 256);
  ExpectError(std::string(kMaxExpressionBytes + 1, '!'), "syntax", kMaxExpressionBytes);
  // The longest chain allowed parses (and its tree is destroyed) without trouble.
  std::string chain = "a";
  while (chain.size() + 2 <= kMaxExpressionBytes) chain += ".a";
  ASSERT_TRUE(Parse(chain).ok());
}

}  // namespace
}  // namespace weir::records::jmespath
