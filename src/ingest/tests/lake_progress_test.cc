#include "ingest/lake_progress.h"

#include <gtest/gtest.h>

#include "observe/metrics_registry.h"
#include "observe/status_model.h"

namespace weir::ingest {
namespace {

// A source whose lag and broker state the test sets.
class LagSource final : public RecordSource {
 public:
  Result<int> Poll(std::chrono::milliseconds, int,
                   const std::function<void(const kafka::Message&)>&) override {
    return 0;
  }
  Status Pause(const std::vector<kafka::TopicPartition>&) override { return Status::OK(); }
  Status Resume(const std::vector<kafka::TopicPartition>&) override { return Status::OK(); }
  std::vector<kafka::TopicPartition> Assignment() const override { return {}; }
  Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>&) override {
    return Status::OK();
  }
  std::vector<kafka::PartitionLag> Lag() const override { return lags; }
  std::optional<kafka::BrokerTrouble> BrokerTrouble(std::chrono::milliseconds) override {
    return trouble;
  }
  Status Close() override { return Status::OK(); }

  std::vector<kafka::PartitionLag> lags;
  std::optional<kafka::BrokerTrouble> trouble;
};

kafka::PartitionLag Lag(int32_t partition, int64_t position, int64_t high) {
  kafka::PartitionLag lag;
  lag.partition = {"events", partition};
  lag.position = position;
  lag.high_watermark = high;
  return lag;
}

TEST(LakeProgressTest, LagCountsFromTheLakesOffsetNotTheConsumersPosition) {
  observe::MetricsRegistry registry;
  observe::StatusModel model("ingest", "1.0");
  LakeProgress progress(&registry, &model);
  observe::DatasetStatus* status = progress.AddDataset("events", "events");
  ASSERT_NE(status, nullptr);
  // Partition 0 resumes from its ledger at 100; partition 1 has no ledger row; 2 has no
  // high watermark yet.
  progress.Assigned({{"events", 0}, {"events", 1}, {"events", 2}}, {{{"events", 0}, 100}});
  LagSource source;
  // The consumer read everything; the lake has nothing new (a commit is stuck).
  source.lags = {Lag(0, 500, 500), Lag(1, -1, 40), Lag(2, 7, -1)};
  progress.Publish(&source, /*force=*/true);
  auto lag = model.Snapshot().datasets.at(0).lag;
  EXPECT_EQ(lag.at(0).lag(), 400);
  EXPECT_EQ(lag.at(0).fetch_lag(), 0);
  EXPECT_EQ(lag.at(1).lag(), -1);  // unknown: nothing consumed, no position
  EXPECT_EQ(lag.at(2).lag(), -1);  // unknown: no high watermark
  std::string text = registry.Render();
  EXPECT_NE(text.find("weir_consumer_lag{partition=\"0\",topic=\"events\"} 400\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("weir_consumer_fetch_lag{partition=\"0\",topic=\"events\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(text.find("weir_consumer_lag{partition=\"1\""), std::string::npos);  // absent
  EXPECT_EQ(text.find("weir_consumer_lag{partition=\"2\""), std::string::npos);

  // Partition 1's first record at 10; then commits land.
  progress.FirstConsumed({"events", 1}, 10);
  progress.Committed("events", 0, 450);
  source.lags = {Lag(0, 500, 500), Lag(1, 40, 40), Lag(2, 7, 9)};
  progress.Publish(&source, /*force=*/true);
  lag = model.Snapshot().datasets.at(0).lag;
  EXPECT_EQ(lag.at(0).lag(), 50);
  EXPECT_EQ(lag.at(1).lag(), 30);
  EXPECT_EQ(lag.at(2).lag(), 2);  // no ledger, nothing consumed: the position
  // A commit never moves the lake's offset back (an older flush landing late).
  progress.Committed("events", 0, 420);
  progress.Publish(&source, /*force=*/true);
  EXPECT_EQ(model.Snapshot().datasets.at(0).lag.at(0).lag(), 50);

  progress.Released({{"events", 1}, {"events", 2}});
  source.lags = {Lag(0, 500, 500)};
  progress.Publish(&source, /*force=*/true);
  EXPECT_EQ(model.Snapshot().datasets.at(0).lag.size(), 1u);
  text = registry.Render();
  EXPECT_EQ(text.find("weir_consumer_fetch_lag{partition=\"1\""), std::string::npos);
}

TEST(LakeProgressTest, AFlushInFlightAndItsFailuresShowUntilOneLands) {
  observe::MetricsRegistry registry;
  observe::StatusModel model("ingest", "1.0");
  LakeProgress progress(&registry, &model);
  progress.AddDataset("events", "events");
  progress.FlushStarted("events");
  progress.AttemptFailed("events", Status::IOError("catalog locked"));
  auto activity = model.Snapshot().datasets.at(0).activity;
  EXPECT_GT(activity.in_flight_since_unix_ms, 0);
  EXPECT_GT(activity.failing_since_unix_ms, 0);
  EXPECT_EQ(activity.failed_attempts, 1);
  EXPECT_EQ(activity.last_error, "catalog locked");
  EXPECT_NE(registry.Render().find("weir_commit_in_flight_seconds{dataset=\"events\"}"),
            std::string::npos);
  progress.FlushEnded("events", /*landed=*/false);
  activity = model.Snapshot().datasets.at(0).activity;
  EXPECT_EQ(activity.in_flight_since_unix_ms, 0);
  EXPECT_EQ(activity.failed_attempts, 1);  // still failing: nothing landed
  progress.FlushStarted("events");
  progress.FlushEnded("events", /*landed=*/true);
  activity = model.Snapshot().datasets.at(0).activity;
  EXPECT_EQ(activity.failing_since_unix_ms, 0);
  EXPECT_EQ(activity.failed_attempts, 0);
  EXPECT_NE(registry.Render().find("weir_commit_in_flight_seconds{dataset=\"events\"} 0\n"),
            std::string::npos);
}

TEST(LakeProgressTest, UnreachableBrokersMakeTheProbeNotReadyAndShowOnThePage) {
  observe::MetricsRegistry registry;
  observe::StatusModel model("ingest", "1.0");
  LakeProgress progress(&registry, &model);
  LagSource source;
  progress.Publish(&source, /*force=*/true);
  EXPECT_TRUE(progress.Readiness(true).ok);
  EXPECT_FALSE(progress.Readiness(false).ok);
  source.trouble = kafka::BrokerTrouble{std::chrono::system_clock::now() - std::chrono::seconds(30),
                                        "Connection refused (_TRANSPORT)"};
  progress.Publish(&source, /*force=*/true);
  const auto probe = progress.Readiness(true);
  EXPECT_FALSE(probe.ok);
  EXPECT_NE(probe.detail.find("Kafka brokers unreachable for 30 s: Connection refused"),
            std::string::npos)
      << probe.detail;
  const auto broker = model.Snapshot().broker;
  EXPECT_GT(broker.unreachable_since_unix_ms, 0);
  EXPECT_EQ(broker.error, "Connection refused (_TRANSPORT)");
  source.trouble.reset();
  progress.Publish(&source, /*force=*/true);
  EXPECT_TRUE(progress.Readiness(true).ok);
  EXPECT_EQ(model.Snapshot().broker.unreachable_since_unix_ms, 0);
}

}  // namespace
}  // namespace weir::ingest
