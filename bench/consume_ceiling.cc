// The librdkafka consume-only ceiling: how fast one consumer with weir's fetch settings reads a
// topic when it does nothing but touch each payload.
//
//   bench_consume_ceiling --bootstrap B --topic T --events N
//
// A fresh group id; every partition assigned at OFFSET_BEGINNING; read_committed,
// fetch.min.bytes=1048576, fetch.wait.max.ms=500, queued.max.messages.kbytes=16384 (as weir
// sets them); rd_kafka_consumer_poll per message, summing payload lengths, until N messages.
// Prints seconds, events/s and MB/s (from the assignment, and from the first message).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "kafka_bench_util.h"

namespace weir::bench {
namespace {

int Main(int argc, char** argv) {
  const auto flags = ParseFlags(argc, argv, {{"bootstrap", ""}, {"topic", ""}, {"events", ""}},
                                "bench_consume_ceiling --bootstrap B --topic T --events N");
  const std::string topic = flags.at("topic");
  const int64_t events = std::stoll(flags.at("events"));
  const std::string group =
      "bench-ceiling-" + std::to_string(getpid()) + "-" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());

  KafkaPtr consumer =
      MakeClient(RD_KAFKA_CONSUMER, MakeConf({{"bootstrap.servers", flags.at("bootstrap")},
                                              {"group.id", group},
                                              {"enable.auto.commit", "false"},
                                              {"enable.auto.offset.store", "false"},
                                              {"enable.partition.eof", "false"},
                                              {"isolation.level", "read_committed"},
                                              {"fetch.min.bytes", "1048576"},
                                              {"fetch.wait.max.ms", "500"},
                                              {"queued.max.messages.kbytes", "16384"}}));
  rd_kafka_poll_set_consumer(consumer.get());
  const int partitions = WaitForTopic(consumer.get(), topic, std::chrono::seconds(30));

  PartitionListPtr assignment(rd_kafka_topic_partition_list_new(partitions));
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
  }
  const auto start = std::chrono::steady_clock::now();
  if (rd_kafka_assign(consumer.get(), assignment.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die("assign failed");
  }

  int64_t received = 0;
  int64_t bytes = 0;
  auto first = start;
  auto last_progress = start;
  while (received < events) {
    MessagePtr message(rd_kafka_consumer_poll(consumer.get(), 500));
    const auto now = std::chrono::steady_clock::now();
    if (!message) {
      if (now - last_progress > std::chrono::seconds(60)) {
        Die("no message for 60 s after " + std::to_string(received) + " of " +
            std::to_string(events));
      }
      continue;
    }
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Die(std::string("consume: ") + rd_kafka_message_errstr(message.get()));
    }
    if (received == 0) first = now;
    last_progress = now;
    bytes += static_cast<int64_t>(message->len);
    ++received;
  }
  const auto end = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(end - start).count();
  const double from_first = std::chrono::duration<double>(end - first).count();
  std::printf("consumed %lld events, %lld payload bytes (%.1f MiB) from %d partitions\n",
              static_cast<long long>(received), static_cast<long long>(bytes),
              static_cast<double>(bytes) / 1048576.0, partitions);
  std::printf("from assign:        %.2f s, %.0f events/s, %.1f MB/s\n", seconds,
              static_cast<double>(received) / seconds, static_cast<double>(bytes) / 1e6 / seconds);
  std::printf("from first message: %.2f s, %.0f events/s, %.1f MB/s\n", from_first,
              static_cast<double>(received) / from_first,
              static_cast<double>(bytes) / 1e6 / from_first);
  std::printf("CEILING_EVENTS_PER_S %.0f\n", static_cast<double>(received) / seconds);
  rd_kafka_consumer_close(consumer.get());
  return 0;
}

}  // namespace
}  // namespace weir::bench

int main(int argc, char** argv) { return weir::bench::Main(argc, argv); }
