#include "config/units.h"

#include <gtest/gtest.h>

namespace weir::config {
namespace {

using std::chrono::milliseconds;

TEST(UnitsTest, ByteSizes) {
  EXPECT_EQ(ParseByteSize("1048576"), 1048576);
  EXPECT_EQ(ParseByteSize("100MiB"), 100 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("64KiB"), 64 * 1024);
  EXPECT_EQ(ParseByteSize("1GiB"), 1LL << 30);
  EXPECT_EQ(ParseByteSize("1GB"), 1000LL * 1000 * 1000);
  EXPECT_EQ(ParseByteSize("2 mb"), 2000000);
  EXPECT_EQ(ParseByteSize("10B"), 10);
  EXPECT_EQ(ParseByteSize("12x"), std::nullopt);
  EXPECT_EQ(ParseByteSize("MiB"), std::nullopt);
  EXPECT_EQ(ParseByteSize("-1"), std::nullopt);
  EXPECT_EQ(ParseByteSize("1.5GiB"), std::nullopt);
  EXPECT_EQ(ParseByteSize("99999999999TiB"), std::nullopt);  // overflow
  EXPECT_EQ(ParseByteSize(""), std::nullopt);
}

TEST(UnitsTest, Durations) {
  EXPECT_EQ(ParseDuration("60s"), milliseconds(60000));
  EXPECT_EQ(ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(ParseDuration("2m"), milliseconds(120000));
  EXPECT_EQ(ParseDuration("1h"), milliseconds(3600000));
  EXPECT_EQ(ParseDuration("7d"), milliseconds(7 * 86400000LL));  // weir maintain's default 5d
  EXPECT_EQ(ParseDuration("1d12h"), milliseconds(36 * 3600000LL));
  EXPECT_EQ(ParseDuration("1m30s"), milliseconds(90000));
  EXPECT_EQ(ParseDuration("60"), std::nullopt);    // no unit
  EXPECT_EQ(ParseDuration("0"), milliseconds(0));  // zero needs none
  EXPECT_EQ(ParseDuration("00"), std::nullopt);
  EXPECT_EQ(ParseDuration("5w"), std::nullopt);  // days are the largest unit
  EXPECT_EQ(ParseDuration("s"), std::nullopt);
  EXPECT_EQ(ParseDuration(""), std::nullopt);
}

TEST(UnitsTest, BoolsAndIntegers) {
  EXPECT_EQ(ParseBool("TRUE"), true);
  EXPECT_EQ(ParseBool("off"), false);
  EXPECT_EQ(ParseBool("maybe"), std::nullopt);
  EXPECT_EQ(ParseInteger("-42"), -42);
  EXPECT_EQ(ParseInteger("42x"), std::nullopt);
  EXPECT_EQ(ParseInteger("99999999999999999999"), std::nullopt);
}

TEST(UnitsTest, FormatsRoundTrip) {
  EXPECT_EQ(FormatByteSize(100 * 1024 * 1024), "100MiB");
  EXPECT_EQ(FormatByteSize(1LL << 30), "1GiB");
  EXPECT_EQ(FormatByteSize(1000), "1000");
  EXPECT_EQ(FormatByteSize(0), "0");
  EXPECT_EQ(FormatDuration(milliseconds(96000)), "96s");
  EXPECT_EQ(FormatDuration(milliseconds(60000)), "1m");
  EXPECT_EQ(FormatDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(FormatDuration(milliseconds(7200000)), "2h");
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0");
  for (const int64_t bytes : {int64_t{1}, int64_t{1536}, int64_t{1} << 40}) {
    EXPECT_EQ(ParseByteSize(FormatByteSize(bytes)), bytes);
  }
}

}  // namespace
}  // namespace weir::config
