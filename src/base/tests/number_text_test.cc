#include "base/number_text.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace weir {
namespace {

TEST(NumberTextTest, ShortestRoundTrippingForm) {
  EXPECT_EQ(ShortestText(0.5), "0.5");
  EXPECT_EQ(ShortestText(-100.25), "-100.25");
  EXPECT_EQ(ShortestText(3.0), "3");
  EXPECT_EQ(ShortestText(1e300), "1e+300");
  EXPECT_EQ(ShortestText(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(std::strtod(ShortestText(2.0 / 3.0).c_str(), nullptr), 2.0 / 3.0);
}

}  // namespace
}  // namespace weir
