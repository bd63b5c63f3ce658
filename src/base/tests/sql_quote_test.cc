#include "base/sql_quote.h"

#include <string>

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(SqlQuoteTest, LiteralsDoubleTheirQuotes) {
  EXPECT_EQ(QuoteLiteral(""), "''");
  EXPECT_EQ(QuoteLiteral("plain"), "'plain'");
  EXPECT_EQ(QuoteLiteral("it's"), "'it''s'");
  EXPECT_EQ(QuoteLiteral("'"), "''''");
  EXPECT_EQ(QuoteLiteral("a\"b\\c"), "'a\"b\\c'");  // only ' is special
  EXPECT_EQ(QuoteLiteral(std::string("a\0b", 3)), std::string("'a\0b'", 5));
}

TEST(SqlQuoteTest, IdentifiersDoubleTheirQuotes) {
  EXPECT_EQ(QuoteIdentifier("events"), "\"events\"");
  EXPECT_EQ(QuoteIdentifier("Mixed Case"), "\"Mixed Case\"");
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(QuoteIdentifier("it's"), "\"it's\"");  // only " is special
  EXPECT_EQ(QuoteIdentifier(""), "\"\"");
}

}  // namespace
}  // namespace weir
