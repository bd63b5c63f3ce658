#include "wal/segment_name.h"

#include <gtest/gtest.h>

#include <vector>

namespace weir::wal {
namespace {

const Uuid kId = *Uuid::Parse("01890a5d-ac96-774b-bcce-b302099a8057");

TEST(SegmentNameTest, ActiveAndReadyNamesFollowTheDesign) {
  SegmentName name{SegmentState::kActive, "events", 3, 100, -1, kId};
  EXPECT_EQ(name.FileName(), "active_events_3_100_01890a5d-ac96-774b-bcce-b302099a8057.parquet");
  EXPECT_EQ(name.Ready(250).FileName(),
            "ready_events_3_100-250_01890a5d-ac96-774b-bcce-b302099a8057.parquet");
}

TEST(SegmentNameTest, NamesParseBackFromTheRightSoTopicsMayHoldUnderscoresAndDots) {
  for (const std::string& topic :
       std::vector<std::string>{"events", "my_topic_2", "a.b_c", "_x_", "9"}) {
    const SegmentName active{SegmentState::kActive, topic, 12, 0, -1, kId};
    ASSERT_EQ(ParseSegmentName(active.FileName()), active) << topic;
    const SegmentName ready = active.Ready(7);
    ASSERT_EQ(ParseSegmentName(ready.FileName()), ready) << topic;
    EXPECT_EQ(ParseSegmentName(ready.FileName())->topic, topic);
  }
}

TEST(SegmentNameTest, OtherNamesAreNotSegments) {
  const std::string id = kId.ToString();
  for (const std::string& bad : std::vector<std::string>{
           "",
           "ready_events_3_100-250_" + id,                   // no suffix
           "ready_events_3_100-250_" + id + ".parquet.tmp",  // a temporary file
           "ready_events_3_100_" + id + ".parquet",          // ready without an end
           "active_events_3_100-250_" + id + ".parquet",     // active with an end
           "ready_events_3_250-100_" + id + ".parquet",      // end before start
           "ready_events_03_100-250_" + id + ".parquet",     // leading zero
           "ready_events_-3_100-250_" + id + ".parquet",     // a sign
           "ready__3_100-250_" + id + ".parquet",            // no topic
           "ready_events_3_100-250_01890A5D-AC96-774B-BCCE-B302099A8057.parquet",  // upper case
           "ready_events_3_100-250_not-a-uuid.parquet",
           "staged_events_3_100-250_" + id + ".parquet",
       }) {
    EXPECT_FALSE(ParseSegmentName(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace weir::wal
