#include "base/uuid.h"

#include <chrono>
#include <set>

#include <gtest/gtest.h>

namespace weir {
namespace {

using std::chrono::milliseconds;

TEST(UuidTest, V7EncodesTimeVersionAndVariant) {
  const auto start = std::chrono::system_clock::time_point(milliseconds(1767225600123));
  ManualClock clock(start);
  UuidV7Generator generator(clock, 1);
  const Uuid uuid = generator.Next();
  EXPECT_EQ(uuid.version(), 7);
  EXPECT_EQ(uuid.bytes[8] & 0xC0, 0x80);
  EXPECT_EQ(uuid.UnixMillis(), 1767225600123);
  EXPECT_EQ(uuid.ToString().substr(0, 15), "019b76da-a87b-7");
}

TEST(UuidTest, StrictlyIncreasingWithinAndAcrossMillisecondsAndBackwardSteps) {
  ManualClock clock(std::chrono::system_clock::time_point(milliseconds(1000000)));
  UuidV7Generator generator(clock, 99);
  std::set<Uuid> seen;
  Uuid previous = generator.Next();
  seen.insert(previous);
  for (int i = 0; i < 20000; ++i) {
    if (i % 5000 == 4999) clock.Advance(milliseconds(-3));  // a wall-clock step back
    if (i % 7 == 0) clock.Advance(milliseconds(1));
    const Uuid next = generator.Next();
    ASSERT_LT(previous, next) << "at " << i;
    seen.insert(next);
    previous = next;
  }
  EXPECT_EQ(seen.size(), 20001u);
}

TEST(UuidTest, ParseRoundTripsAndRejectsMalformedText) {
  ManualClock clock(std::chrono::system_clock::time_point(milliseconds(5)));
  UuidV7Generator generator(clock, 5);
  const Uuid uuid = generator.Next();
  const auto parsed = Uuid::Parse(uuid.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, uuid);
  const auto upper = Uuid::Parse("0189ABCD-0000-7000-8000-00000000000F");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(upper->ToString(), "0189abcd-0000-7000-8000-00000000000f");
  EXPECT_FALSE(Uuid::Parse("0189abcd-0000-7000-8000-00000000000").ok());
  EXPECT_FALSE(Uuid::Parse("0189abcd00000-7000-8000-00000000000f").ok());
  EXPECT_FALSE(Uuid::Parse("0189abcd-0000-7000-8000-00000000000g").ok());
}

}  // namespace
}  // namespace weir
