#include "kafka/rdkafka_log.h"

#include <cctype>
#include <string>

#include <spdlog/spdlog.h>

#include "base/logging.h"

namespace weir::kafka {
namespace {

RepeatedLineLimiter& ProcessLimiter() {
  static RepeatedLineLimiter* limiter = new RepeatedLineLimiter(Clock::System(), kRepeatWindow);
  return *limiter;  // never destroyed: librdkafka threads may log during static destruction
}

void LogLine(const rd_kafka_t* rk, int level, const char* facility, const char* line) {
  const spdlog::level::level_enum spd_level = LevelOfSyslog(level);
  if (!spdlog::default_logger_raw()->should_log(spd_level)) return;
  const std::string_view client = rk == nullptr ? "" : rd_kafka_name(rk);
  const RdKafkaLine parsed = ParseRdKafkaLine(line == nullptr ? "" : line);
  const std::string_view fac = facility == nullptr ? "" : facility;
  const auto suppressed = ProcessLimiter().Admit(
      RepeatedLineLimiter::KindOf(client, fac, parsed.broker, parsed.message));
  if (!suppressed) return;
  const std::string count = *suppressed > 0 ? std::to_string(*suppressed) : "";
  LogWithFields(spd_level, "librdkafka " + std::string(fac) + ": " + parsed.message,
                {{"client", client}, {"broker", parsed.broker}, {"suppressed", count}});
}

}  // namespace

void RouteLogToWeir(rd_kafka_conf_t* conf) { rd_kafka_conf_set_log_cb(conf, LogLine); }

spdlog::level::level_enum LevelOfSyslog(int level) {
  if (level <= 2) return spdlog::level::critical;
  if (level == 3) return spdlog::level::err;
  if (level == 4) return spdlog::level::warn;
  if (level <= 6) return spdlog::level::info;
  return spdlog::level::debug;
}

RdKafkaLine ParseRdKafkaLine(std::string_view line) {
  RdKafkaLine parsed;
  constexpr std::string_view kThread = "[thrd:";
  const size_t close = line.find("]: ");
  if (!line.starts_with(kThread) || close == std::string_view::npos) {
    parsed.message = line;
    return parsed;
  }
  const std::string_view thread = line.substr(kThread.size(), close - kThread.size());
  std::string_view rest = line.substr(close + 3);
  // The first word before ": ", when it has no space.
  const auto word = [](std::string_view text) -> std::string_view {
    const size_t colon = text.find(": ");
    if (colon == std::string_view::npos) return {};
    const std::string_view found = text.substr(0, colon);
    return found.find(' ') == std::string_view::npos ? found : std::string_view{};
  };
  // Brokers are named "host:port/<node id>" (or ".../bootstrap" before the id is known), and
  // broker threads keep the name they started with; the line's own prefix is the current name.
  // The group coordinator's lines read "GroupCoordinator: host:port: ...".
  const std::string_view first = word(rest);
  if (first.find('/') != std::string_view::npos) {
    parsed.broker = first;
    rest.remove_prefix(first.size() + 2);
  } else if (first == "GroupCoordinator" &&
             word(rest.substr(first.size() + 2)).find(':') != std::string_view::npos) {
    const std::string_view address = word(rest.substr(first.size() + 2));
    parsed.broker = address;
    parsed.message = "GroupCoordinator: ";
    rest.remove_prefix(first.size() + 2 + address.size() + 2);
  } else if (thread.find('/') != std::string_view::npos) {
    parsed.broker = thread;  // the main, app and background threads have no '/'
  }
  parsed.message += rest;
  return parsed;
}

RepeatedLineLimiter::RepeatedLineLimiter(const Clock& clock, std::chrono::milliseconds window)
    : clock_(clock), limiter_(window) {}

std::string RepeatedLineLimiter::KindOf(std::string_view client, std::string_view facility,
                                        std::string_view broker, std::string_view message) {
  std::string kind;
  kind.reserve(client.size() + facility.size() + broker.size() + message.size() + 3);
  kind.append(client).append("|").append(facility).append("|").append(broker).append("|");
  for (const char c : message.substr(0, message.find(" ("))) {
    if (!std::isdigit(static_cast<unsigned char>(c))) kind += c;
  }
  return kind;
}

std::optional<int64_t> RepeatedLineLimiter::Admit(std::string_view kind) {
  return limiter_.Admit(kind, clock_.Monotonic());
}

}  // namespace weir::kafka
