#include "ingest/decode_workers.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace weir::ingest {
namespace {

struct Seen {
  std::string topic;
  int32_t partition;
  int64_t offset;
  std::string key;
  bool key_is_null;
  std::string payload;
  int64_t timestamp_ms;
  size_t headers;
};

TEST(DecodeWorkersTest, EachWorkerDecodesCopiesOfItsRecordsInOrderAndDrainWaitsForAll) {
  std::vector<std::vector<Seen>> seen(3);
  DecodeWorkers workers(3, {}, [&](size_t worker, const kafka::Message& m, HeaderValues headers) {
    seen[worker].push_back({std::string(m.topic), m.partition, m.offset, std::string(m.key),
                            m.key_is_null, std::string(m.payload), m.timestamp_ms, headers.size()});
  });
  ASSERT_EQ(workers.size(), 3u);
  constexpr int kRecords = 5000;  // several batches per worker, and partial ones
  for (int i = 0; i < kRecords; ++i) {
    // Each message's views die with it, as librdkafka's do after the poll.
    std::string payload = R"({"i": )" + std::to_string(i) + "}";
    std::string key = "k" + std::to_string(i);
    std::string topic = "events";
    kafka::Message message;
    message.topic = topic;
    message.partition = i % 6;
    message.offset = i / 6;
    message.key = key;
    message.key_is_null = i % 7 == 0;
    message.payload = payload;
    message.timestamp_ms = 1000 + i;
    workers.Submit(static_cast<size_t>(message.partition) % 3, message);
    payload.assign(payload.size(), 'x');  // the copy must not see this
    if (i % 997 == 0) workers.Push();
  }
  EXPECT_GT(workers.queued_bytes() + 1, 0);
  workers.Drain();
  EXPECT_EQ(workers.queued_bytes(), 0);
  size_t total = 0;
  for (size_t w = 0; w < 3; ++w) {
    std::vector<int64_t> last(6, -1);
    for (const Seen& s : seen[w]) {
      EXPECT_EQ(static_cast<size_t>(s.partition) % 3, w);
      EXPECT_GT(s.offset, last[static_cast<size_t>(s.partition)]) << "in offset order";
      last[static_cast<size_t>(s.partition)] = s.offset;
      const int64_t i = s.offset * 6 + s.partition;
      EXPECT_EQ(s.topic, "events");
      EXPECT_EQ(s.payload, R"({"i": )" + std::to_string(i) + "}");
      EXPECT_EQ(s.key, "k" + std::to_string(i));
      EXPECT_EQ(s.key_is_null, i % 7 == 0);
      EXPECT_EQ(s.timestamp_ms, 1000 + i);
      EXPECT_EQ(s.headers, 0u);
    }
    total += seen[w].size();
  }
  EXPECT_EQ(total, static_cast<size_t>(kRecords));
}

TEST(DecodeWorkersTest, HeaderValuesAreCopiedInTheOrderNamedAndMissingOnesAreNull) {
  // Hand-built messages carry no librdkafka headers: every named header reads as absent.
  std::vector<std::vector<std::optional<std::string>>> got;
  std::mutex mutex;
  DecodeWorkers workers(2, {"trace", "source"},
                        [&](size_t, const kafka::Message&, HeaderValues headers) {
                          std::lock_guard lock(mutex);
                          got.emplace_back();
                          for (const auto& h : headers) {
                            got.back().push_back(h ? std::optional(std::string(*h)) : std::nullopt);
                          }
                        });
  kafka::Message message;
  message.topic = "t";
  message.payload = "{}";
  for (int i = 0; i < 10; ++i) {
    message.partition = i;
    workers.Submit(static_cast<size_t>(i % 2), message);
  }
  workers.Drain();
  ASSERT_EQ(got.size(), 10u);
  for (const auto& headers : got) {
    ASSERT_EQ(headers.size(), 2u);
    EXPECT_FALSE(headers[0].has_value());
    EXPECT_FALSE(headers[1].has_value());
  }
}

TEST(DecodeWorkersTest, AFullQueueMakesSubmitWaitForTheWorker) {
  std::atomic<bool> released{false};
  bool first = true;
  DecodeWorkers workers(1, {}, [&](size_t, const kafka::Message&, HeaderValues) {
    // The worker holds its first record until the test lets it go.
    while (first && !released.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    first = false;
  });
  std::string payload(4000, 'a');
  kafka::Message message;
  message.topic = "t";
  message.payload = payload;
  // Batches hand over at 1 MiB: 263 of these records (4,001 bytes with the topic). With the
  // worker holding the first batch and four queued, the sixth cannot be handed over: Submit
  // waits. The test lets the worker go once 5.5 MiB are queued and 50 ms have passed, and sees
  // that no more than six batches were submitted by then, however fast or slow this machine.
  constexpr int kPerBatch = 263;
  std::atomic<int> submitted{0};
  int submitted_at_release = 0;
  std::thread release([&] {
    while (workers.queued_bytes() < (11 << 20) / 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    submitted_at_release = submitted.load();
    released.store(true);
  });
  for (int i = 0; i < 10 * kPerBatch; ++i) {
    workers.Submit(0, message);
    submitted.fetch_add(1);
  }
  release.join();
  workers.Drain();
  EXPECT_LE(submitted_at_release, 6 * kPerBatch);
  EXPECT_GE(submitted_at_release, 5 * kPerBatch);
  EXPECT_EQ(workers.queued_bytes(), 0);
}

}  // namespace
}  // namespace weir::ingest
