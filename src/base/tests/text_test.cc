#include "base/text.h"

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(TextTest, TrimSpaceRemovesAsciiWhitespaceAtBothEnds) {
  EXPECT_EQ(TrimSpace("  a b \t\n"), "a b");
  EXPECT_EQ(TrimSpace(""), "");
  EXPECT_EQ(TrimSpace(" \t "), "");
}

TEST(TextTest, ToLowerChangesAsciiLettersOnly) { EXPECT_EQ(ToLower("MiB-É"), "mib-É"); }

}  // namespace
}  // namespace weir
