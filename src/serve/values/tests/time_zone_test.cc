// TimeZone on the system's zone files (the ones Debian's PostgreSQL 15 reads): offsets around
// DST changes, before standard time, and past the files' last transition (the POSIX rule).
#include <gtest/gtest.h>

#include <string>

#include "serve/values/time_zone.h"

namespace weir::serve {
namespace {

int64_t Utc(int y, int m, int d, int hh = 0, int mm = 0, int ss = 0) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
  return days * 86400 + hh * 3600 + mm * 60 + ss;
}

TimeZone Zone(const std::string& name) {
  auto zone = TimeZone::Find(name);
  EXPECT_TRUE(zone.ok()) << zone.status().ToString();
  return zone.ok() ? *zone : TimeZone::Utc();
}

TEST(TimeZone, NamesAreFoundWhateverTheirCaseAndShownAsTheZoneFileIsNamed) {
  EXPECT_EQ(Zone("america/new_york").name(), "America/New_York");
  EXPECT_EQ(Zone("ASIA/KOLKATA").name(), "Asia/Kolkata");
  EXPECT_EQ(Zone("utc").name(), "UTC");
  for (const char* bad : {"Nowhere/Bogus", "", "/etc/passwd", "../../etc/passwd",
                          "America/../../etc/passwd", "America", "zone1970.tab"}) {
    auto zone = TimeZone::Find(bad);
    ASSERT_FALSE(zone.ok()) << bad;
    EXPECT_EQ(zone.status().message(),
              std::string("invalid value for parameter \"TimeZone\": \"") + bad + "\"");
  }
}

TEST(TimeZone, NewYorkAroundItsDaylightSavingChanges) {
  const TimeZone ny = Zone("America/New_York");
  EXPECT_EQ(ny.OffsetAt(Utc(2024, 3, 10, 6, 59, 59)), -5 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2024, 3, 10, 7)), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2024, 11, 3, 5, 59, 59)), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2024, 11, 3, 6)), -5 * 3600);
  // Past the last transition in the file: the footer's EST5EDT,M3.2.0,M11.1.0.
  EXPECT_EQ(ny.OffsetAt(Utc(2099, 7, 1)), -4 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2099, 1, 1)), -5 * 3600);
  EXPECT_EQ(ny.OffsetAt(Utc(2099, 3, 8, 6, 59, 59)), -5 * 3600);  // 2nd Sunday of March 2099
  EXPECT_EQ(ny.OffsetAt(Utc(2099, 3, 8, 7)), -4 * 3600);
  // Local mean time before 1883: -4:56:02.
  EXPECT_EQ(ny.OffsetAt(Utc(1850, 6, 1)), -(4 * 3600 + 56 * 60 + 2));
}

TEST(TimeZone, KolkataHalfHoursAndTheSouthernHemisphere) {
  EXPECT_EQ(Zone("Asia/Kolkata").OffsetAt(Utc(2024, 7, 1)), 5 * 3600 + 1800);
  const TimeZone sydney = Zone("Australia/Sydney");  // daylight time spans the new year
  EXPECT_EQ(sydney.OffsetAt(Utc(2080, 1, 1)), 11 * 3600);
  EXPECT_EQ(sydney.OffsetAt(Utc(2080, 7, 1)), 10 * 3600);
  EXPECT_EQ(TimeZone::Utc().OffsetAt(Utc(2024, 7, 1)), 0);
}

TEST(TimeZone, MalformedZoneDataIsRefused) {
  for (const std::string& bytes : {std::string(), std::string("TZif2"), std::string(60, 'x'),
                                   std::string("TZif2") + std::string(39, '\0')}) {
    EXPECT_FALSE(TimeZone::FromTzif("broken", bytes).ok());
  }
}

}  // namespace
}  // namespace weir::serve
