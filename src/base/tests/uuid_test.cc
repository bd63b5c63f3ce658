#include "base/uuid.h"

#include <chrono>
#include <set>

#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <gtest/gtest.h>

#include "base/uuid_arrow.h"

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

// millpond's uuid grammar: the five accepted shapes, each giving the same 16 bytes.
TEST(UuidTest, ParseTakesMillpondsShapesAndNothingElse) {
  const Uuid canonical = *Uuid::Parse("0123abcd-4567-89ef-0123-456789abcdef");
  EXPECT_EQ(canonical.bytes[0], 0x01);
  EXPECT_EQ(canonical.bytes[15], 0xef);
  for (const char* shape :
       {"0123ABCD-4567-89EF-0123-456789ABCDEF", "0123abcd456789ef0123456789abcdef",
        "{0123abcd-4567-89ef-0123-456789abcdef}", "{0123ABCD456789EF0123456789ABCDEF}",
        "urn:uuid:0123abcd-4567-89ef-0123-456789abcdef",
        "urn:uuid:0123abcd456789ef0123456789abcdef"}) {
    ASSERT_TRUE(Uuid::TryParse(shape)) << shape;
    EXPECT_EQ(*Uuid::TryParse(shape), canonical) << shape;
  }
  for (const char* bad :
       {"URN:UUID:0123abcd-4567-89ef-0123-456789abcdef",
        "{urn:uuid:0123abcd-4567-89ef-0123-456789abcdef}",
        "0123-abcd-4567-89ef-0123-4567-89ab-cdef", "0x0123abcd456789ef0123456789abcdef", ""}) {
    EXPECT_FALSE(Uuid::TryParse(bad)) << bad;
  }
  const auto refused = Uuid::Parse("0x12");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'0x12' is not a UUID"), std::string::npos)
      << refused.status().message();
}

TEST(UuidArrowTest, ArraysOfArrowsUuidTypeHoldTheBigEndianBytes) {
  arrow::FixedSizeBinaryBuilder storage(arrow::fixed_size_binary(16));
  const Uuid a = *Uuid::Parse("00000000-0000-0000-0000-0000000000ff");
  ASSERT_TRUE(storage.Append(a.bytes.data()).ok());
  ASSERT_TRUE(storage.AppendNull().ok());
  const auto uuids = UuidArrayOf(storage.Finish().ValueOrDie());
  ASSERT_TRUE(uuids.ok()) << uuids.status().ToString();
  EXPECT_TRUE(IsUuidArrowType(*(*uuids)->type()));
  EXPECT_EQ((*uuids)->type()->ToString(), "extension<arrow.uuid>");
  EXPECT_EQ(UuidAt(**uuids, 0), a);
  EXPECT_TRUE((*uuids)->IsNull(1));
  EXPECT_FALSE(IsUuidArrowType(*arrow::fixed_size_binary(16)));
  EXPECT_FALSE(UuidArrayOf(arrow::MakeArrayOfNull(arrow::utf8(), 1).ValueOrDie()).ok());
}

}  // namespace
}  // namespace weir
