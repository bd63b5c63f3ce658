#include "wal/recovery.h"

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "assert_status.h"
#include "wal/tests/wal_test_util.h"

namespace weir::wal {
namespace {

using testing::ScratchDir;

// Answers from a table per file name; counts the questions.
class ScriptedProbe final : public TableProbe {
 public:
  std::map<std::string, Answer> answers;
  std::optional<Status> error;
  int calls = 0;
  Result<Answer> Probe(const SegmentEntry& file) override {
    ++calls;
    if (error) return *error;
    const auto found = answers.find(file.file_name);
    return found == answers.end() ? Answer{} : found->second;
  }
};

class RecoveryTest : public ::testing::Test {
 protected:
  RecoveryTest() : dir_("recovery") {}
  // Creates a ready (end >= 0) or active (end < 0) file of topic t, partition p.
  std::string File(int32_t p, int64_t start, int64_t end) {
    SegmentName name{SegmentState::kActive, "t", p, start, -1, *Uuid::Parse(Id(++files_))};
    if (end >= 0) name = name.Ready(end);
    const std::string path = dir_.path() + "/" + name.FileName();
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("x", f);
    std::fclose(f);
    return name.FileName();
  }
  static std::string Id(int n) {
    char text[40];
    std::snprintf(text, sizeof text, "01890a5d-ac96-774b-bcce-%012d", n);
    return text;
  }
  std::map<std::string, RecoveryDecision> Plan(const CommittedOffsets& committed) {
    auto entries = ListSegments(dir_.path());
    EXPECT_TRUE(entries.ok());
    auto plan = PlanRecovery(*entries, committed, probe_);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    std::map<std::string, RecoveryDecision> by_name;
    for (auto& decision : *plan) by_name[decision.file.file_name] = decision;
    return by_name;
  }

  ScratchDir dir_;
  ScriptedProbe probe_;
  int files_ = 0;
};

TEST_F(RecoveryTest, AnActiveFileIsDeletedWhateverTheCommittedOffset) {
  const auto none = File(0, 0, -1), behind = File(1, 10, -1), ahead = File(2, 10, -1);
  auto plan = Plan({{{"t", 1}, 5}, {{"t", 2}, 1000}});
  EXPECT_EQ(plan[none].action, RecoveryAction::kDelete);
  EXPECT_EQ(plan[behind].action, RecoveryAction::kDelete);
  EXPECT_EQ(plan[ahead].action, RecoveryAction::kDelete);
  EXPECT_EQ(probe_.calls, 0);
}

TEST_F(RecoveryTest, AReadyFileWithoutACommittedOffsetOrNotAfterItsFirstIsDeleted) {
  const auto none = File(0, 0, 9), before = File(1, 10, 19), at = File(2, 10, 19);
  auto plan = Plan({{{"t", 1}, 5}, {{"t", 2}, 10}});
  EXPECT_EQ(plan[none].action, RecoveryAction::kDelete);
  EXPECT_FALSE(plan[none].committed.has_value());
  EXPECT_EQ(plan[before].action, RecoveryAction::kDelete);
  EXPECT_EQ(plan[at].action, RecoveryAction::kDelete);
  EXPECT_EQ(*plan[at].committed, 10);
  EXPECT_EQ(probe_.calls, 0);
}

TEST_F(RecoveryTest, AReadyFileAfterItsLastAndNotInTheTableIsKept) {
  const auto never = File(0, 10, 19), ledger_behind = File(1, 10, 19);
  probe_.answers[never] = {false, std::nullopt};
  probe_.answers[ledger_behind] = {false, 10};
  auto plan = Plan({{{"t", 0}, 20}, {{"t", 1}, 500}});
  EXPECT_EQ(plan[never].action, RecoveryAction::kKeep);
  EXPECT_EQ(plan[never].in_table, false);
  EXPECT_EQ(plan[ledger_behind].action, RecoveryAction::kKeep);
  EXPECT_EQ(probe_.calls, 2);
}

TEST_F(RecoveryTest, AReadyFileAfterItsLastAndInTheTableLosesOnlyItsLocalCopy) {
  const auto in = File(0, 10, 19), empty_in = File(1, 10, 19), empty_out = File(2, 10, 19);
  probe_.answers[in] = {true, 20};
  probe_.answers[empty_in] = {std::nullopt, 25};  // no rows: the ledger alone says
  probe_.answers[empty_out] = {std::nullopt, 10};
  auto plan = Plan({{{"t", 0}, 20}, {{"t", 1}, 20}, {{"t", 2}, 20}});
  EXPECT_EQ(plan[in].action, RecoveryAction::kDeleteLocal);
  EXPECT_EQ(plan[in].in_table, true);
  EXPECT_EQ(plan[empty_in].action, RecoveryAction::kDeleteLocal);
  EXPECT_EQ(plan[empty_out].action, RecoveryAction::kKeep);
}

TEST_F(RecoveryTest, ACommittedOffsetInsideTheRangeRefusesNamingTheFile) {
  const auto inside = File(0, 10, 19), last = File(1, 10, 19), fine = File(2, 0, 9);
  auto plan = Plan({{{"t", 0}, 11}, {{"t", 1}, 19}, {{"t", 2}, 0}});
  EXPECT_EQ(plan[inside].action, RecoveryAction::kRefuse);
  EXPECT_EQ(plan[last].action, RecoveryAction::kRefuse);
  EXPECT_EQ(plan[fine].action, RecoveryAction::kDelete);

  std::vector<RecoveryDecision> decisions;
  for (auto& [name, decision] : plan) decisions.push_back(decision);
  const Status applied = ApplyRecovery(dir_.path(), decisions);
  ASSERT_FALSE(applied.ok());
  EXPECT_NE(applied.message().find(inside), std::string::npos) << applied.message();
  EXPECT_NE(applied.message().find(last), std::string::npos) << applied.message();
  EXPECT_EQ(applied.message().find(fine), std::string::npos) << applied.message();
  EXPECT_EQ(dir_.Names().size(), 3u);  // a refusal deletes nothing
}

TEST_F(RecoveryTest, ATableThatReferencesAFileItsLedgerHasNotReachedIsRefused) {
  const auto odd = File(0, 10, 19);
  probe_.answers[odd] = {true, 15};
  auto plan = Plan({{{"t", 0}, 20}});
  EXPECT_EQ(plan[odd].action, RecoveryAction::kRefuse);
}

TEST_F(RecoveryTest, AProbeErrorStopsThePlanNamingTheFile) {
  const auto file = File(0, 10, 19);
  probe_.error = Status::IOError("catalog down (test)");
  auto entries = ListSegments(dir_.path());
  ASSERT_TRUE(entries.ok());
  const auto plan = PlanRecovery(*entries, {{{"t", 0}, 20}}, probe_);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find(file), std::string::npos);
}

TEST_F(RecoveryTest, ApplyDeletesWhatThePlanSaysAndLeavesTheRest) {
  const auto active = File(0, 0, -1), uncommitted = File(1, 0, 9), keep = File(2, 0, 9),
             in = File(3, 0, 9);
  {
    std::FILE* f = std::fopen((dir_.path() + "/notes.txt").c_str(), "w");
    std::fclose(f);
  }
  probe_.answers[in] = {true, 10};
  auto plan = Plan({{{"t", 2}, 10}, {{"t", 3}, 10}});
  EXPECT_EQ(plan["notes.txt"].action, RecoveryAction::kIgnore);
  std::vector<RecoveryDecision> decisions;
  for (auto& [name, decision] : plan) decisions.push_back(decision);
  ASSERT_OK(ApplyRecovery(dir_.path(), decisions));
  EXPECT_EQ(dir_.Names(), (std::set<std::string>{keep, "notes.txt"}));
}

}  // namespace
}  // namespace weir::wal
