#include "serve/compat/compat.h"

#include <gtest/gtest.h>

namespace weir::serve::compat {
namespace {

using Pieces = std::vector<std::string>;

TEST(SplitStatements, CutsAtSemicolonsOutsideQuotesAndComments) {
  EXPECT_EQ(SplitStatements("USE lake"), Pieces{"USE lake"});
  EXPECT_EQ(SplitStatements("SELECT 1; USE lake;  "), (Pieces{"SELECT 1", "USE lake"}));
  EXPECT_EQ(SplitStatements("SELECT 'a;b'; SELECT $x$;$x$ -- c;\n"),
            (Pieces{"SELECT 'a;b'", "SELECT $x$;$x$ -- c;"}));
  EXPECT_EQ(SplitStatements("SELECT /* ; */ 1"), Pieces{"SELECT /* ; */ 1"});
  EXPECT_EQ(SplitStatements("FROM t SELECT \"a;\""), Pieces{"FROM t SELECT \"a;\""});
}

TEST(SplitStatements, OneStatementWithoutASemicolonIsTrimmed) {
  EXPECT_EQ(SplitStatements("  SELECT 1\n"), Pieces{"SELECT 1"});
  EXPECT_EQ(SplitStatements("SELECT 'a' -- no semicolon\n\t"),
            Pieces{"SELECT 'a' -- no semicolon"});
  EXPECT_EQ(SplitStatements("SELECT 'unterminated"), Pieces{"SELECT 'unterminated"});
  EXPECT_TRUE(SplitStatements(" \r\n\t").empty());
}

TEST(SplitStatements, EmptyInputGivesNoStatements) {
  EXPECT_TRUE(SplitStatements("").empty());
  EXPECT_TRUE(SplitStatements(" ; ;\n").empty());
}

TEST(SplitStatements, AnUnterminatedQuoteIsLeftWholeForDuckDbToReport) {
  EXPECT_EQ(SplitStatements("SELECT 'oops; SELECT 2"), Pieces{"SELECT 'oops; SELECT 2"});
}

}  // namespace
}  // namespace weir::serve::compat
