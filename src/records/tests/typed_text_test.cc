#include "records/typed_text.h"

#include <gtest/gtest.h>

namespace weir::records {
namespace {

constexpr char kCanonical[] = "0123abcd-4567-89ef-0123-456789abcdef";

TEST(UuidText, EveryAcceptedShapeGivesTheSameBytes) {
  const auto expected = ParseUuidText(kCanonical);
  ASSERT_TRUE(expected);
  EXPECT_EQ((*expected)[0], 0x01);
  EXPECT_EQ((*expected)[15], 0xef);
  EXPECT_EQ(UuidText(*expected), kCanonical);
  for (const char* shape : {
           "0123ABCD-4567-89EF-0123-456789ABCDEF",           // upper case
           "0123aBcD-4567-89eF-0123-456789AbCdEf",           // mixed case
           "0123abcd456789ef0123456789abcdef",               // 32 hex digits
           "{0123abcd-4567-89ef-0123-456789abcdef}",         // braces
           "{0123ABCD456789EF0123456789ABCDEF}",             // braces around 32 digits
           "urn:uuid:0123abcd-4567-89ef-0123-456789abcdef",  // URN
           "urn:uuid:0123abcd456789ef0123456789abcdef",      // URN of 32 digits
       }) {
    const auto parsed = ParseUuidText(shape);
    ASSERT_TRUE(parsed) << shape;
    EXPECT_EQ(*parsed, *expected) << shape;
    EXPECT_EQ(UuidText(*parsed), kCanonical) << shape;
  }
  // Version and variant bits are not checked.
  EXPECT_TRUE(ParseUuidText("00000000-0000-0000-0000-000000000000"));
  EXPECT_TRUE(ParseUuidText("ffffffff-ffff-ffff-ffff-ffffffffffff"));
}

TEST(UuidText, EverythingElseIsRefused) {
  for (const char* bad : {
           "",
           "URN:UUID:0123abcd-4567-89ef-0123-456789abcdef",    // the prefix is case-sensitive
           "uuid:0123abcd-4567-89ef-0123-456789abcdef",        // only urn:uuid:
           "urn:0123abcd-4567-89ef-0123-456789abcdef",         //
           "{urn:uuid:0123abcd-4567-89ef-0123-456789abcdef}",  // braces around a URN
           "urn:uuid:{0123abcd-4567-89ef-0123-456789abcdef}",  // a URN of braces
           "0123abcd-4567-89ef-0123-456789abcdefurn:",         // urn: elsewhere
           "0123-abcd-4567-89ef-0123-4567-89ab-cdef",          // hyphens at other offsets
           "0123abcd4567-89ef-0123-456789abcdef",              // some hyphens missing
           "0123abcd-4567-89ef-0123456789abcdef",              //
           "0x0123abcd456789ef0123456789abcdef",               // radix prefix
           "0123abcd_4567_89ef_0123_456789abcdef",             // underscores
           "0123abcd-4567-89ef-0123-456789abcdeg",             // not hex
           "0123abcd-4567-89ef-0123-456789abcde",              // one digit short
           "0123abcd-4567-89ef-0123-456789abcdef0",            // one digit long
           " 0123abcd-4567-89ef-0123-456789abcdef",            // spaces
           "0123abcd-4567-89ef-0123-456789abcdef ",            //
           "{0123abcd-4567-89ef-0123-456789abcdef",            // one brace
           "0123abcd-4567-89ef-0123-456789abcdef}",            //
           "{{0123abcd-4567-89ef-0123-456789abcdef}}",         // two
       }) {
    EXPECT_FALSE(ParseUuidText(bad)) << bad;
  }
}

int64_t Micros(const char* text) {
  const auto parsed = ParseTimestampText(text);
  EXPECT_TRUE(parsed) << text;
  return parsed.value_or(-1);
}

TEST(TimestampText, MillpondsWireFormatAndIsoForms) {
  constexpr int64_t k2024 = 1704110400LL * 1000000;  // 2024-01-01T12:00:00Z
  EXPECT_EQ(Micros("2024-01-01 12:00:00"), k2024);
  EXPECT_EQ(Micros("2024-01-01 12:00:00.123"), k2024 + 123000);
  EXPECT_EQ(Micros("2024-01-01 12:00:00.123456"), k2024 + 123456);
  EXPECT_EQ(Micros("2024-01-01 12:00:00.1"), k2024 + 100000);
  EXPECT_EQ(Micros("2024-01-01T12:00:00Z"), k2024);
  EXPECT_EQ(Micros("2024-01-01T12:00:00.5Z"), k2024 + 500000);
  EXPECT_EQ(Micros("2024-01-01T14:00:00+02:00"), k2024);
  EXPECT_EQ(Micros("2024-01-01T14:00:00+0200"), k2024);
  EXPECT_EQ(Micros("2024-01-01T14:00:00+02"), k2024);
  EXPECT_EQ(Micros("2024-01-01T06:30:00-05:30"), k2024);
  EXPECT_EQ(Micros("2024-01-01 12:00"), k2024);
  EXPECT_EQ(Micros("2024-01-01"), k2024 - 12LL * 3600 * 1000000);
  EXPECT_EQ(Micros("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(Micros("1969-12-31 23:59:59.999999"), -1);
  EXPECT_EQ(Micros("2024-02-29 00:00:00"), 1709164800LL * 1000000);  // a leap day
  EXPECT_EQ(Micros("2000-02-29"), 951782400LL * 1000000);
}

TEST(TimestampText, AnythingElseIsRefused) {
  for (const char* bad : {
           "",
           "2024",
           "2024-01",
           "2024-1-01",
           "2024-01-1",
           "24-01-01 12:00:00",
           "2024-13-01",
           "2024-00-01",
           "2024-01-32",
           "2023-02-29",
           "1900-02-29",
           "2024-01-01 24:00:00",
           "2024-01-01 12:60:00",
           "2024-01-01 12:00:60",
           "2024-01-01 12:00:00.",
           "2024-01-01 12:00:00.1234567",  // beyond microseconds
           "2024-01-01 12",
           "2024-01-01 12:00:00 ",
           " 2024-01-01",
           "2024-01-01x12:00:00",
           "2024-01-01 12:00:00z",
           "2024-01-01 12:00:00+2",
           "2024-01-01 12:00:00+02:0",
           "2024-01-01 12:00:00+24:00",
           "2024-01-01 12:00:00Z+01",
           "1704110400",
           "2024/01/01 12:00:00",
           "now",
       }) {
    EXPECT_FALSE(ParseTimestampText(bad)) << bad;
  }
}

}  // namespace
}  // namespace weir::records
