// The pipeline's guard against a source that delivers a record again: a record below its
// partition's next offset (one the ledger already holds, or one this assignment already took)
// never lands a second time. Kafka clients have done this after seeks, pauses and cooperative
// rebalances; the ledger's fence cannot catch it, because the stale record sits inside a range
// that starts where the ledger says.
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ingest/pipeline.h"
#include "ingest/record_source.h"
#include "observe/metric_names.h"
#include "writer_fixture.h"

namespace weir::ingest {
namespace {

namespace m = observe;

// Delivers partition 0 of topic "t": the offsets of `script`, in that order, then is exhausted.
class ScriptedSource final : public RecordSource {
 public:
  ScriptedSource(kafka::AssignmentListener* listener, std::vector<int64_t> script)
      : listener_(listener), script_(std::move(script)) {}

  Result<int> Poll(std::chrono::milliseconds /*timeout*/, int max_records,
                   const std::function<void(const kafka::Message&)>& sink) override {
    if (!assigned_) {
      assigned_ = true;
      WEIR_ASSIGN_OR_RAISE(const auto starts, listener_->OnAssigned({{"t", 0}}));
      (void)starts;  // the script plays a client that ignores them (a stale fetch)
    }
    int delivered = 0;
    while (delivered < max_records && next_ < script_.size()) {
      const int64_t offset = script_[next_++];
      payload_ = R"({"id": )" + std::to_string(offset) + "}";
      kafka::Message message;
      message.topic = "t";
      message.partition = 0;
      message.offset = offset;
      message.payload = payload_;
      sink(message);
      ++delivered;
    }
    return delivered;
  }
  Status Pause(const std::vector<kafka::TopicPartition>&) override { return Status::OK(); }
  Status Resume(const std::vector<kafka::TopicPartition>&) override { return Status::OK(); }
  std::vector<kafka::TopicPartition> Assignment() const override { return {{"t", 0}}; }
  Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>&) override {
    return Status::OK();
  }
  std::vector<kafka::PartitionLag> Lag() const override { return {}; }
  Status Close() override {
    if (assigned_) listener_->OnRevoked({{"t", 0}});
    assigned_ = false;
    return Status::OK();
  }
  bool Exhausted() const override { return next_ == script_.size(); }

 private:
  kafka::AssignmentListener* listener_;
  std::vector<int64_t> script_;
  size_t next_ = 0;
  bool assigned_ = false;
  std::string payload_;
};

class PipelineRedeliveryTest : public WriterFixture {
 protected:
  void SetUp() override { SetUpWriter("pipeline_redelivery_"); }

  // Runs the pipeline over `script` to exhaustion; returns the redelivered-records counter.
  double Run(std::vector<int64_t> script) {
    PipelineOptions options;
    DatasetOptions dataset;
    dataset.config = config_;
    options.datasets.push_back(std::move(dataset));
    options.source =
        [script](kafka::AssignmentListener* listener) -> Result<std::unique_ptr<RecordSource>> {
      return std::unique_ptr<RecordSource>(std::make_unique<ScriptedSource>(listener, script));
    };
    auto pipeline = Pipeline::Make(std::move(options), catalog_.get(), &metrics_);
    EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
    if (!pipeline.ok()) return -1;
    const Status ran = (*pipeline)->Run(std::stop_token{});
    EXPECT_TRUE(ran.ok()) << ran.ToString();
    return metrics_.Counter(m::kRecordsRedelivered, {{std::string(m::kLabelDataset), "events"}})
        .value();
  }

  lake::testing::FakeTableState& table() { return catalog_->state("main.events"); }

  observe::MetricsRegistry metrics_;
};

TEST_F(PipelineRedeliveryTest, RecordsDeliveredAgainWithinAnAssignmentLandOnce) {
  // 0..9, then 5..14 again (a fetch from before a seek): 15 records land, 5 are dropped.
  std::vector<int64_t> script;
  for (int64_t i = 0; i < 10; ++i) script.push_back(i);
  for (int64_t i = 5; i < 15; ++i) script.push_back(i);
  EXPECT_EQ(Run(script), 5);
  EXPECT_EQ(table().LandedRows(), 15);
  EXPECT_EQ((table().ledger[{"t", 0}]), 15);
}

TEST_F(PipelineRedeliveryTest, RecordsBelowTheLedgerAreNotTakenAgain) {
  // The ledger says 4: a client that fetched from 0 anyway delivers 0..3 again.
  table().ledger[{"t", 0}] = 4;
  std::vector<int64_t> script;
  for (int64_t i = 0; i < 10; ++i) script.push_back(i);
  EXPECT_EQ(Run(script), 4);
  EXPECT_EQ(table().LandedRows(), 6);
  EXPECT_EQ((table().ledger[{"t", 0}]), 10);
}

}  // namespace
}  // namespace weir::ingest
