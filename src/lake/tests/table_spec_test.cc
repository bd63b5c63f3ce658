#include "lake/table_spec.h"

#include <gtest/gtest.h>

#include "assert_status.h"

namespace weir::lake {
namespace {

TEST(LakeTransform, EveryTransformTextRoundTrips) {
  for (const char* text :
       {"identity", "year", "month", "day", "hour", "bucket[16]", "truncate[4]", "bucket[1]"}) {
    ASSERT_OK_AND_ASSIGN(const Transform t, ParseTransform(text));
    EXPECT_EQ(ToString(t), text);
  }
  ASSERT_OK_AND_ASSIGN(const Transform spaced, ParseTransform(" bucket [ 16 ] "));
  EXPECT_EQ(spaced, (Transform{TransformKind::kBucket, 16}));
  ASSERT_OK_AND_ASSIGN(const Transform widest, ParseTransform("truncate[2147483647]"));
  EXPECT_EQ(widest.parameter, 2147483647);
}

TEST(LakeTransform, RefusalsNameTheTextAndWhatIsWrong) {
  const auto message = [](const char* text) { return ParseTransform(text).status().message(); };
  EXPECT_NE(message("week").find("unknown transform \"week\""), std::string::npos);
  EXPECT_NE(message("bucket[0]").find("bucket count must be positive"), std::string::npos);
  EXPECT_NE(message("truncate[-1]").find("truncate width must be positive"), std::string::npos);
  EXPECT_NE(message("bucket[x]").find("bucket count must be an integer"), std::string::npos);
  EXPECT_NE(message("bucket[2147483648]").find("must be positive"), std::string::npos);
  EXPECT_FALSE(ParseTransform("bucket[]").ok());
  EXPECT_FALSE(ParseTransform("bucket").ok());
  EXPECT_FALSE(ParseTransform("").ok());
}

TEST(LakeTransform, OtherEnginesTransformsAreUnknownNotErrors) {
  for (const char* text : {"void", "zorder", "bucketize", "truncated"}) {
    ASSERT_OK_AND_ASSIGN(const auto known, ParseKnownTransform(text));
    EXPECT_FALSE(known.has_value()) << text;
  }
  EXPECT_FALSE(ParseKnownTransform("bucket[0]").ok());  // a known name, a bad parameter
}

}  // namespace
}  // namespace weir::lake
