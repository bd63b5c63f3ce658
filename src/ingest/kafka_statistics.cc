#include "ingest/kafka_statistics.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include "observe/exposition.h"

namespace weir::ingest {
namespace {

namespace ondemand = simdjson::ondemand;

// Top-level librdkafka counters worth a gauge: name in the JSON → help text.
const std::map<std::string, std::string, std::less<>>& TopLevelFields() {
  static const std::map<std::string, std::string, std::less<>> fields = {
      {"replyq", "Ops waiting in librdkafka's reply queue"},
      {"msg_cnt", "Messages in librdkafka's queues"},
      {"msg_size", "Bytes of messages in librdkafka's queues"},
      {"rx", "Responses received from brokers"},
      {"rx_bytes", "Bytes received from brokers"},
      {"rxmsgs", "Messages consumed (before weir sees them)"},
      {"rxmsg_bytes", "Message bytes consumed"},
      {"tx", "Requests sent to brokers"},
      {"tx_bytes", "Bytes sent to brokers"},
  };
  return fields;
}

}  // namespace

KafkaStatistics::KafkaStatistics(observe::MetricsRegistry* registry) {
  registry->AddCollector([this](std::string& out) { Render(out); });
}

void KafkaStatistics::Update(std::string_view json) {
  std::map<std::string, double> totals;
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> partitions;
  ondemand::parser parser;
  simdjson::padded_string padded(json);
  ondemand::document doc;
  bool ok = parser.iterate(padded).get(doc) == simdjson::SUCCESS;
  ondemand::object root;
  ok = ok && doc.get_object().get(root) == simdjson::SUCCESS;
  if (ok) {
    for (auto field : root) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
        ok = false;
        break;
      }
      if (TopLevelFields().count(key)) {
        int64_t value = 0;
        if (field.value().get_int64().get(value) == simdjson::SUCCESS) {
          totals[std::string(key)] = static_cast<double>(value);
        }
      } else if (key == "topics") {
        ondemand::object topics;
        if (field.value().get_object().get(topics) != simdjson::SUCCESS) continue;
        for (auto topic : topics) {
          std::string_view topic_name;
          ondemand::object topic_object, parts;
          if (topic.unescaped_key().get(topic_name) != simdjson::SUCCESS ||
              topic.value().get_object().get(topic_object) != simdjson::SUCCESS ||
              topic_object["partitions"].get_object().get(parts) != simdjson::SUCCESS) {
            continue;
          }
          const std::string topic_text(topic_name);
          for (auto part : parts) {
            std::string_view id;
            ondemand::object p;
            if (part.unescaped_key().get(id) != simdjson::SUCCESS || id == "-1" ||
                part.value().get_object().get(p) != simdjson::SUCCESS) {
              continue;
            }
            int64_t lag = -1, queued = 0;
            for (auto pf : p) {
              std::string_view pk;
              if (pf.unescaped_key().get(pk) != simdjson::SUCCESS) continue;
              // A field of another type leaves the default (unknown lag, nothing queued).
              if (pk == "consumer_lag" && pf.value().get_int64().get(lag) != simdjson::SUCCESS) {
                lag = -1;
              }
              if (pk == "fetchq_cnt" && pf.value().get_int64().get(queued) != simdjson::SUCCESS) {
                queued = 0;
              }
            }
            if (lag >= 0) {
              partitions[{topic_text, std::string(id)}] = {static_cast<double>(lag),
                                                           static_cast<double>(queued)};
            }
          }
        }
      }
    }
  }
  std::lock_guard lock(mutex_);
  if (!ok) {
    if (!warned_) spdlog::warn("librdkafka statistics could not be parsed; gauges not updated");
    warned_ = true;
    return;
  }
  totals_ = std::move(totals);
  partitions_ = std::move(partitions);
}

void KafkaStatistics::Render(std::string& out) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, value] : totals_) {
    observe::AppendGauge(out, "weir_librdkafka_" + name, TopLevelFields().find(name)->second,
                         observe::Labels{}, value);
  }
  if (partitions_.empty()) return;
  std::vector<observe::GaugeSample> lag, queued;
  for (const auto& [key, values] : partitions_) {
    observe::Labels labels{{"topic", key.first}, {"partition", key.second}};
    lag.push_back({labels, values.first});
    queued.push_back({labels, values.second});
  }
  observe::AppendGauge(out, "weir_librdkafka_consumer_lag",
                       "Consumer lag per partition as librdkafka reports it", lag);
  observe::AppendGauge(out, "weir_librdkafka_fetchq_messages",
                       "Prefetched messages waiting per partition", queued);
}

}  // namespace weir::ingest
