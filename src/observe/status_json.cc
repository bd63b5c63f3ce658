#include <algorithm>

#include <nlohmann/json.hpp>

#include "observe/status_page.h"

namespace weir::observe {
namespace {

using Json = nlohmann::ordered_json;

Json RatesJson(const Rates& rates, const std::vector<std::string>& names) {
  Json now = Json::object(), window = Json::object(), series = Json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    now[names[i]] = i < rates.now.size() ? rates.now[i] : 0.0;
    window[names[i]] = i < rates.window.size() ? rates.window[i] : 0.0;
  }
  for (size_t p = 0; p < rates.points.size(); ++p) {
    Json point = {{"at_unix_ms", rates.points_at_unix_ms[p]}};
    for (size_t i = 0; i < names.size() && i < rates.points[p].size(); ++i) {
      point[names[i]] = rates.points[p][i];
    }
    series.push_back(std::move(point));
  }
  return Json{{"now", std::move(now)},
              {"last_15m", std::move(window)},
              {"step_seconds", kRateStep.count()},
              {"series", std::move(series)}};
}

Json DatasetJson(const DatasetSnapshot& d) {
  const auto known = [](int64_t v) { return v < 0 ? Json() : Json(v); };
  Json lag = Json::array();
  int64_t lag_total = 0;
  bool lag_known = true;
  for (const auto& [partition, p] : d.lag) {
    lag.push_back({{"partition", partition},
                   {"lag", known(p.lag())},
                   {"fetch_lag", known(p.fetch_lag())},
                   {"high_watermark", known(p.high_watermark)},
                   {"lake_next_offset", known(p.lake_next)},
                   {"position", known(p.position)}});
    if (p.lag() < 0) lag_known = false;
    lag_total += std::max<int64_t>(0, p.lag());
  }
  const CommitActivity& a = d.activity;
  Json activity{
      {"in_flight_since_unix_ms",
       known(a.in_flight_since_unix_ms > 0 ? a.in_flight_since_unix_ms : -1)},
      {"failing_since_unix_ms", known(a.failing_since_unix_ms > 0 ? a.failing_since_unix_ms : -1)},
      {"failed_attempts", a.failed_attempts},
      {"last_error", a.last_error.empty() ? Json() : Json(a.last_error)},
      {"last_error_unix_ms", known(a.last_error_unix_ms > 0 ? a.last_error_unix_ms : -1)}};
  Json commits = Json::array();
  for (const CommitRecord& c : d.commits) {
    commits.push_back({{"snapshot_id", c.snapshot_id},
                       {"rows", c.rows},
                       {"rejects", c.rejects},
                       {"files", c.files},
                       {"bytes", c.bytes},
                       {"write_ms", c.write_ms},
                       {"commit_ms", c.commit_ms},
                       {"at_unix_ms", c.at_unix_ms}});
  }
  Json rejects = Json::object();
  for (const auto& [reason, count] : d.rejects) rejects[reason] = count;
  Json bounds = Json::array();
  for (int64_t bound : FileSizeBounds()) bounds.push_back(bound);
  return Json{
      {"name", d.name},
      {"topic", d.topic},
      {"events_total", d.events_total},
      {"bytes_total", d.bytes_total},
      {"rates", RatesJson(d.rates, {"events_per_second", "bytes_per_second"})},
      {"lag", std::move(lag)},
      // null while a partition's lag is unknown (its high watermark or lake offset)
      {"lag_total", lag_known ? Json(lag_total) : Json()},
      {"flush", std::move(activity)},
      {"last_commit_unix_ms", d.commits.empty() ? Json() : Json(d.commits.front().at_unix_ms)},
      {"commits_total", d.commits_total},
      {"rows_total", d.rows_total},
      {"commits", std::move(commits)},
      {"rejects_total", d.rejects_total},
      {"rejects", std::move(rejects)},
      {"file_sizes",
       {{"upper_bounds_bytes", std::move(bounds)},
        {"counts", d.file_size_counts},
        {"files", d.file_sizes_seen}}},
      {"paused", {{"partitions", d.paused.partitions}, {"reason", d.paused.reason}}},
  };
}

Json ServeJson(const ServeSnapshot& s) {
  Json slowest = Json::array();
  for (const SlowStatement& q : s.slowest) {
    slowest.push_back({{"seconds", q.seconds},
                       {"statement", q.statement},
                       {"user", q.user},
                       {"status", q.status},
                       {"at_unix_ms", q.at_unix_ms}});
  }
  return Json{
      {"sessions", s.sessions},
      {"queries_total",
       {{"ok", s.queries_ok}, {"error", s.queries_error}, {"cancelled", s.queries_cancelled}}},
      {"queries_per_second", RatesJson(s.rates, {"ok", "error", "cancelled"})},
      {"slowest", std::move(slowest)}};
}

}  // namespace

std::string RenderStatusJson(const StatusSnapshot& status) {
  Json wal = status.wal.wal_mode
                 ? Json{{"mode", "wal"},
                        {"segments", status.wal.segments},
                        {"bytes", status.wal.bytes},
                        {"oldest_unconfirmed_unix_ms", status.wal.oldest_unconfirmed_unix_ms}}
                 : Json{{"mode", "direct"}};
  Json datasets = Json::array();
  for (const DatasetSnapshot& d : status.datasets) datasets.push_back(DatasetJson(d));
  Json out{
      {"service", status.service},
      {"version", status.version},
      {"generated_at_unix_ms", status.generated_at_unix_ms},
      {"uptime_seconds", status.uptime_seconds},
      {"wal", std::move(wal)},
      {"kafka",
       {{"brokers_unreachable_since_unix_ms", status.broker.unreachable_since_unix_ms > 0
                                                  ? Json(status.broker.unreachable_since_unix_ms)
                                                  : Json()},
        {"error", status.broker.error.empty() ? Json() : Json(status.broker.error)}}},
      {"datasets", std::move(datasets)}};
  if (status.serve) out["serve"] = ServeJson(*status.serve);
  // Client text may hold invalid UTF-8: replaced, never an exception.
  return out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace weir::observe
