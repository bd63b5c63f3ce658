// Small librdkafka helpers shared by the Kafka benchmarks (bench_fill_topic,
// bench_consume_ceiling): RAII handles, configuration (librdkafka logging through weir's
// logger), flag parsing, dying loudly.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/logging.h"
#include "bench_util.h"
#include "kafka/rdkafka_log.h"

namespace weir::bench {

struct KafkaDestroy {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct ConfDestroy {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct MessageDestroy {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
struct PartitionListDestroy {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    rd_kafka_topic_partition_list_destroy(l);
  }
};
using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaDestroy>;
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, ConfDestroy>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDestroy>;
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDestroy>;

// librdkafka's lines go through weir's logger (text on stderr, as weir ingest writes them).
inline ConfPtr MakeConf(const std::map<std::string, std::string>& settings) {
  static const bool logging = ConfigureLogging("info", LogFormat::kText).ok();
  (void)logging;
  ConfPtr conf(rd_kafka_conf_new());
  kafka::RouteLogToWeir(conf.get());
  char error[512];
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf.get(), key.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      Die("librdkafka property " + key + "=" + value + ": " + error);
    }
  }
  return conf;
}

inline KafkaPtr MakeClient(rd_kafka_type_t type, ConfPtr conf) {
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), error, sizeof error);
  if (rk == nullptr) Die(std::string("rd_kafka_new: ") + error);
  conf.release();  // rd_kafka_new took ownership
  return KafkaPtr(rk);
}

// The partition count of `topic` from broker metadata (0: the topic does not exist or a
// partition has no leader yet).
inline int PartitionCount(rd_kafka_t* rk, const std::string& topic) {
  rd_kafka_topic_t* handle = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, handle, &metadata, 10000);
  rd_kafka_topic_destroy(handle);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return 0;
  int count = 0;
  if (metadata->topic_cnt == 1 && metadata->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    count = metadata->topics[0].partition_cnt;
    for (int i = 0; i < metadata->topics[0].partition_cnt; ++i) {
      if (metadata->topics[0].partitions[i].leader < 0) count = 0;
    }
  }
  rd_kafka_metadata_destroy(metadata);
  return count;
}

// Waits until `topic` has a leader for each partition; returns the partition count.
inline int WaitForTopic(rd_kafka_t* rk, const std::string& topic, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const int count = PartitionCount(rk, topic);
    if (count > 0) return count;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  Die("topic " + topic + " did not appear (with leaders) within " +
      std::to_string(timeout.count()) + "s");
}

// "--name value" flags into a map; dies on anything else or a name not in `known`.
inline std::map<std::string, std::string> ParseFlags(
    int argc, char** argv, const std::map<std::string, std::string>& known,
    const std::string& usage) {
  std::map<std::string, std::string> out = known;  // the defaults ("" = required)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || out.count(arg.substr(2)) == 0 || i + 1 >= argc) {
      Die("bad argument " + arg + "\nusage: " + usage);
    }
    out[arg.substr(2)] = argv[++i];
  }
  for (const auto& [name, value] : out) {
    if (value.empty()) Die("--" + name + " is required\nusage: " + usage);
  }
  return out;
}

}  // namespace weir::bench
