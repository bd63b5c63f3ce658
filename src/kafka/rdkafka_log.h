// librdkafka's log lines through weir's logger, instead of librdkafka's own
// `%3|1796111981.685|FAIL|rdkafka#producer-1| ...` lines on stderr.
//
// Each line keeps its facility in the message ("librdkafka FAIL: ...") and gets the client
// name and the broker as fields (base/logging.h), in text and JSON alike. Syslog levels map
// to spdlog's: 0-2 critical, 3 error, 4 warning, 5-6 info, 7 debug. A line repeated within
// kRepeatWindow is let through once; the next one after the window carries `suppressed=N`.
//
// Threading: librdkafka calls the log callback from its own threads; the sink is thread-safe.
// One process-wide sink, since the default logger it writes to is process-wide too.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <spdlog/common.h>

#include "base/clock.h"
#include "base/log_rate_limiter.h"

namespace weir::kafka {

inline constexpr std::chrono::seconds kRepeatWindow{10};

// Sends the log lines of clients made from `conf` to the default logger.
void RouteLogToWeir(rd_kafka_conf_t* conf);

// The spdlog level of a syslog level as librdkafka reports it.
spdlog::level::level_enum LevelOfSyslog(int level);

// A librdkafka log line split into the broker it concerns (empty when none) and the message.
// Broker threads prefix their lines with "[thrd:<name at start>]: <current name>: ".
struct RdKafkaLine {
  std::string broker;
  std::string message;
};
RdKafkaLine ParseRdKafkaLine(std::string_view line);

// Lets the first line of each kind through per `window` and counts the others. A kind is the
// client, facility and broker with the message up to its parenthesised details, digits left
// out: "Connect to ipv4#h:1 failed: Connection refused (after 0ms in state CONNECT)" and the
// same "(after 3ms ..., 1 identical error(s) suppressed)" are one kind, as are "1/3 brokers
// are down" and "2/3 brokers are down".
// Thread-safe; `clock` must outlive it.
class RepeatedLineLimiter {
 public:
  RepeatedLineLimiter(const Clock& clock, std::chrono::milliseconds window);

  // nullopt: suppress the line. Otherwise how many lines of its kind were suppressed since the
  // last one let through.
  std::optional<int64_t> Admit(std::string_view kind);

  // The kind of a line (see the class comment).
  static std::string KindOf(std::string_view client, std::string_view facility,
                            std::string_view broker, std::string_view message);

 private:
  const Clock& clock_;
  LogRateLimiter limiter_;
};

}  // namespace weir::kafka
