#include "wal/commit_plan.h"

#include <gtest/gtest.h>

#include "assert_status.h"

namespace weir::wal {
namespace {

int ids = 0;

SegmentEntry Ready(const std::string& topic, int32_t partition, int64_t start, int64_t end) {
  char text[40];
  std::snprintf(text, sizeof text, "01890a5d-ac96-774b-bcce-%012d", ++ids);
  SegmentName name{SegmentState::kActive, topic, partition, start, -1, *Uuid::Parse(text)};
  name = name.Ready(end);
  return SegmentEntry{"/wal/" + name.FileName(), name.FileName(), name, 100};
}

// "p:start-end" of each group.
std::vector<std::string> Spans(const std::vector<ReadyGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) {
    out.push_back(std::to_string(g.partition) + ":" + std::to_string(g.start) + "-" +
                  std::to_string(g.end) + "x" + std::to_string(g.files.size()));
  }
  return out;
}

TEST(CommitPlanTest, FilesOfOneRotationFormOneGroupAndActiveFilesAreIgnored) {
  SegmentEntry active = Ready("t", 0, 0, 9);
  active.name->state = SegmentState::kActive;
  ASSERT_OK_AND_ASSIGN(const auto groups,
                       GroupReadyFiles({Ready("t", 0, 10, 19), Ready("t", 0, 0, 9),
                                        Ready("t", 0, 0, 9), Ready("t", 1, 0, 4), active}));
  EXPECT_EQ(Spans(groups), (std::vector<std::string>{"0:0-9x2", "0:10-19x1", "1:0-4x1"}));
}

TEST(CommitPlanTest, OverlappingGroupsOfAPartitionAreAnErrorNamingBoth) {
  const SegmentEntry a = Ready("t", 0, 0, 9), b = Ready("t", 0, 5, 19);
  const auto groups = GroupReadyFiles({a, b});
  ASSERT_FALSE(groups.ok());
  EXPECT_NE(groups.status().message().find(a.path), std::string::npos);
  EXPECT_NE(groups.status().message().find(b.path), std::string::npos);
}

TEST(CommitPlanTest, TheChainFromTheLedgerCommitsAsOneRangePerPartition) {
  ASSERT_OK_AND_ASSIGN(const auto groups,
                       GroupReadyFiles({Ready("t", 0, 0, 9), Ready("t", 0, 10, 19),
                                        Ready("t", 0, 20, 20), Ready("t", 1, 50, 59)}));
  const CommitPlan plan = PlanCommit(groups, {{{"t", 0}, 0}, {{"t", 1}, 50}}, {});
  EXPECT_EQ(Spans(plan.commit),
            (std::vector<std::string>{"0:0-9x1", "0:10-19x1", "0:20-20x1", "1:50-59x1"}));
  ASSERT_EQ(plan.ranges.size(), 2u);
  EXPECT_EQ(plan.ranges[0].partition, 0);
  EXPECT_EQ(plan.ranges[0].start, 0);
  EXPECT_EQ(plan.ranges[0].end, 21);
  EXPECT_EQ(plan.ranges[1].start, 50);
  EXPECT_EQ(plan.ranges[1].end, 60);
  EXPECT_TRUE(plan.landed.empty() && plan.waiting.empty() && plan.conflicting.empty());
}

TEST(CommitPlanTest, GroupsBelowTheLedgerHaveLandedAndAGapMakesTheRestWait) {
  ASSERT_OK_AND_ASSIGN(const auto groups,
                       GroupReadyFiles({Ready("t", 0, 0, 9), Ready("t", 0, 10, 19),
                                        Ready("t", 0, 30, 39), Ready("t", 0, 40, 49)}));
  const CommitPlan plan = PlanCommit(groups, {{{"t", 0}, 10}}, {});
  EXPECT_EQ(Spans(plan.landed), (std::vector<std::string>{"0:0-9x1"}));
  EXPECT_EQ(Spans(plan.commit), (std::vector<std::string>{"0:10-19x1"}));
  // [20, 30) is nobody's here: a previous owner has not committed it yet.
  EXPECT_EQ(Spans(plan.waiting), (std::vector<std::string>{"0:30-39x1", "0:40-49x1"}));
  ASSERT_EQ(plan.ranges.size(), 1u);
  EXPECT_EQ(plan.ranges[0].end, 20);
}

TEST(CommitPlanTest, ALedgerInsideARangeIsConflictingAndStopsThatPartitionsChain) {
  ASSERT_OK_AND_ASSIGN(
      const auto groups,
      GroupReadyFiles({Ready("t", 0, 0, 9), Ready("t", 0, 10, 19), Ready("t", 1, 0, 9)}));
  const CommitPlan plan = PlanCommit(groups, {{{"t", 0}, 5}, {{"t", 1}, 0}}, {});
  EXPECT_EQ(Spans(plan.conflicting), (std::vector<std::string>{"0:0-9x1"}));
  EXPECT_EQ(Spans(plan.waiting), (std::vector<std::string>{"0:10-19x1"}));
  EXPECT_EQ(Spans(plan.commit), (std::vector<std::string>{"1:0-9x1"}));
}

TEST(CommitPlanTest, WithoutALedgerOnlyTheOriginStartsAChain) {
  ASSERT_OK_AND_ASSIGN(
      const auto groups,
      GroupReadyFiles({Ready("t", 0, 0, 9), Ready("t", 1, 100, 109), Ready("t", 2, 7, 9)}));
  const CommitPlan plan = PlanCommit(groups, {}, {{{"t", 0}, 0}, {{"t", 2}, 3}});
  EXPECT_EQ(Spans(plan.commit), (std::vector<std::string>{"0:0-9x1"}));
  // Partition 1 has no origin here (its first owner was another process); partition 2's
  // origin is before its first group.
  EXPECT_EQ(Spans(plan.waiting), (std::vector<std::string>{"1:100-109x1", "2:7-9x1"}));
}

}  // namespace
}  // namespace weir::wal
