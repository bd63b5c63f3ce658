// Fills a new Kafka topic with reference events (bench/event_generator), for the consume and
// end-to-end benchmarks.
//
//   bench_fill_topic --bootstrap B --topic T [--partitions 8] [--events 2000000] [--seed 42]
//                    [--compression lz4|none]
//
// Creates the topic (fails if it exists), produces with an idempotent producer (linger.ms=50,
// 1 MB batches), waits for every delivery report and exits 1 on any delivery error. Events go
// to the partitions round-robin in runs of 1,000, so every partition gets the same share.
// Prints events/s and bytes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "event_generator.h"
#include "kafka_bench_util.h"

namespace weir::bench {
namespace {

std::atomic<int64_t> g_delivered{0};
std::atomic<int64_t> g_failed{0};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    g_delivered.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (g_failed.fetch_add(1, std::memory_order_relaxed) < 5) {
    std::fprintf(stderr, "DELIVERY ERROR partition %d: %s\n", message->partition,
                 rd_kafka_err2str(message->err));
  }
}

void OnError(rd_kafka_t* rk, int err, const char* reason, void*) {
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    char fatal[512];
    rd_kafka_fatal_error(rk, fatal, sizeof fatal);
    Die(std::string("fatal producer error: ") + fatal);
  }
  std::fprintf(stderr, "producer error %s: %s\n", rd_kafka_err2name(code), reason);
}

void CreateTopic(rd_kafka_t* rk, const std::string& topic, int partitions) {
  char error[512];
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, error, sizeof error);
  if (new_topic == nullptr) Die(std::string("NewTopic: ") + error);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &new_topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 60000);
  if (event == nullptr) Die("CreateTopics timed out");
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event);
  if (result == nullptr) Die(std::string("CreateTopics: ") + rd_kafka_event_error_string(event));
  size_t count = 0;
  const rd_kafka_topic_result_t** topics = rd_kafka_CreateTopics_result_topics(result, &count);
  if (count != 1) Die("CreateTopics returned no result for the topic");
  if (rd_kafka_topic_result_error(topics[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die("creating topic " + topic + ": " + rd_kafka_topic_result_error_string(topics[0]));
  }
  rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
}

int Main(int argc, char** argv) {
  const auto flags = ParseFlags(argc, argv,
                                {{"bootstrap", ""},
                                 {"topic", ""},
                                 {"partitions", "8"},
                                 {"events", "2000000"},
                                 {"seed", "42"},
                                 {"compression", "lz4"}},
                                "bench_fill_topic --bootstrap B --topic T [--partitions 8] "
                                "[--events 2000000] [--seed 42] [--compression lz4|none]");
  const std::string topic = flags.at("topic");
  const int partitions = std::stoi(flags.at("partitions"));
  const int64_t events = std::stoll(flags.at("events"));
  const uint64_t seed = std::stoull(flags.at("seed"));
  if (partitions < 1 || events < 1) Die("--partitions and --events must be positive");

  ConfPtr conf = MakeConf({{"bootstrap.servers", flags.at("bootstrap")},
                           {"enable.idempotence", "true"},
                           {"acks", "all"},
                           {"linger.ms", "50"},
                           {"batch.size", "1000000"},
                           {"batch.num.messages", "100000"},
                           {"queue.buffering.max.messages", "1000000"},
                           {"queue.buffering.max.kbytes", "1048576"},
                           {"compression.codec", flags.at("compression")},
                           {"message.timeout.ms", "300000"}});
  rd_kafka_conf_set_dr_msg_cb(conf.get(), OnDelivery);
  rd_kafka_conf_set_error_cb(conf.get(), OnError);
  KafkaPtr producer = MakeClient(RD_KAFKA_PRODUCER, std::move(conf));

  CreateTopic(producer.get(), topic, partitions);
  const int found = WaitForTopic(producer.get(), topic, std::chrono::seconds(60));
  if (found != partitions) {
    Die("topic has " + std::to_string(found) + " partitions, expected " +
        std::to_string(partitions));
  }

  EventGenerator generator(seed);
  int64_t bytes = 0;
  size_t min_size = SIZE_MAX;
  size_t max_size = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < events; ++i) {
    const std::string value = generator.Next(i);
    bytes += static_cast<int64_t>(value.size());
    min_size = std::min(min_size, value.size());
    max_size = std::max(max_size, value.size());
    rd_kafka_vu_t fields[4];
    fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    fields[0].u.cstr = topic.c_str();
    fields[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    fields[1].u.i32 = static_cast<int32_t>((i / 1000) % partitions);
    fields[2].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[2].u.mem = {const_cast<char*>(value.data()), value.size()};
    fields[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    fields[3].u.i = RD_KAFKA_MSG_F_COPY;
    while (true) {
      rd_kafka_error_t* error = rd_kafka_produceva(producer.get(), fields, 4);
      if (error == nullptr) break;
      const rd_kafka_resp_err_t err = rd_kafka_error_code(error);
      const std::string text = rd_kafka_error_string(error);
      rd_kafka_error_destroy(error);
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        Die("produce event " + std::to_string(i) + ": " + text);
      rd_kafka_poll(producer.get(), 50);
    }
    if (g_failed.load(std::memory_order_relaxed) > 0) break;
    if ((i & 1023) == 0) rd_kafka_poll(producer.get(), 0);
  }
  const rd_kafka_resp_err_t flushed = rd_kafka_flush(producer.get(), 600000);
  const auto end = std::chrono::steady_clock::now();
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die(std::string("flush: ") + rd_kafka_err2str(flushed) + " (" +
        std::to_string(rd_kafka_outq_len(producer.get())) + " messages undelivered)");
  }
  if (g_failed.load() > 0 || g_delivered.load() != events) {
    Die(std::to_string(g_failed.load()) + " delivery errors, " +
        std::to_string(g_delivered.load()) + " of " + std::to_string(events) + " delivered");
  }
  const double seconds = std::chrono::duration<double>(end - start).count();
  std::printf(
      "topic %s: %lld events in %d partitions, %lld bytes (%.1f MiB, %.0f B/event, %zu..%zu), "
      "compression %s\n",
      topic.c_str(), static_cast<long long>(events), partitions, static_cast<long long>(bytes),
      static_cast<double>(bytes) / 1048576.0,
      static_cast<double>(bytes) / static_cast<double>(events), min_size, max_size,
      flags.at("compression").c_str());
  std::printf("produced in %.2f s: %.0f events/s, %.1f MiB/s\n", seconds,
              static_cast<double>(events) / seconds,
              static_cast<double>(bytes) / 1048576.0 / seconds);
  return 0;
}

}  // namespace
}  // namespace weir::bench

int main(int argc, char** argv) { return weir::bench::Main(argc, argv); }
