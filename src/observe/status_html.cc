#include <time.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/number_text.h"
#include "observe/html.h"
#include "observe/statement_text.h"
#include "observe/status_page.h"

namespace weir::observe {
namespace {

constexpr const char* kStyle =
    "body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}"
    "h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 4px}"
    "h3{font-size:13px;margin:10px 0 2px}small{color:#666;font-weight:normal}"
    "table{border-collapse:collapse;margin:2px 0 6px}"
    "td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}"
    "th{background:#f3f3f3}td.text,th.text{text-align:left}"
    "section{border-top:2px solid #ccc;margin-top:10px}"
    ".charts{display:flex;gap:12px;flex-wrap:wrap}.paused{color:#a30}"
    "code{font-size:12px;white-space:pre-wrap}";

std::string UtcTime(int64_t unix_ms) {
  const time_t seconds = static_cast<time_t>(unix_ms / 1000);
  struct tm tm {};
  gmtime_r(&seconds, &tm);
  char text[32];
  strftime(text, sizeof text, "%Y-%m-%d %H:%M:%SZ", &tm);
  return text;
}

// <td> with a raw value attribute and the displayed text.
std::string Cell(std::string_view field, double value, std::string_view shown = {}) {
  return fmt::format("<td data-field=\"{}\" data-value=\"{}\">{}</td>", field,
                     fmt::format("{}", value),
                     shown.empty() ? HtmlEscape(DisplayNumber(value)) : HtmlEscape(shown));
}

std::string KeyValueRow(std::string_view label, std::string_view field, double value,
                        std::string_view shown = {}) {
  return fmt::format("<tr><th class=\"text\">{}</th>{}</tr>", label, Cell(field, value, shown));
}

std::vector<double> Column(const Rates& rates, size_t value) {
  std::vector<double> column;
  for (const auto& point : rates.points) column.push_back(value < point.size() ? point[value] : 0);
  return column;
}

std::string Span(const Rates& rates) {
  if (rates.points_at_unix_ms.size() < 2) return "";
  const int64_t seconds = (rates.points_at_unix_ms.back() - rates.points_at_unix_ms.front()) / 1000;
  return fmt::format("last {} min {} s", seconds / 60, seconds % 60);
}

// A count that may be unknown (-1): shown as "unknown" with an empty data-value.
std::string CountCell(std::string_view field, int64_t value) {
  if (value < 0) {
    return fmt::format("<td data-field=\"{}\" data-value=\"\">unknown</td>", field);
  }
  return Cell(field, static_cast<double>(value));
}

std::string SecondsText(int64_t ms) {
  const int64_t s = std::max<int64_t>(0, ms) / 1000;
  return s >= 3600 ? fmt::format("{} h {} min", s / 3600, s % 3600 / 60)
         : s >= 60 ? fmt::format("{} min {} s", s / 60, s % 60)
                   : fmt::format("{} s", s);
}

// A flush in flight longer than this is shown as a problem.
constexpr int64_t kSlowFlushMs = 10'000;

void AppendActivity(std::string& out, const DatasetSnapshot& d, size_t index, int64_t now_ms) {
  const CommitActivity& a = d.activity;
  const int64_t in_flight_ms =
      a.in_flight_since_unix_ms > 0 ? now_ms - a.in_flight_since_unix_ms : 0;
  const bool trouble = in_flight_ms > kSlowFlushMs || a.failing_since_unix_ms > 0;
  out += fmt::format(
      "<h3>flush and commit</h3><p id=\"flush-{}\" data-field=\"flush_in_flight_ms\" "
      "data-value=\"{}\"{}>",
      index, in_flight_ms, trouble ? " class=\"paused\"" : "");
  out += a.in_flight_since_unix_ms > 0
             ? fmt::format("a flush in flight for {} (since {})", SecondsText(in_flight_ms),
                           UtcTime(a.in_flight_since_unix_ms))
             : std::string("no flush in flight");
  if (a.failing_since_unix_ms > 0) {
    out += fmt::format(
        "; failing since {}: {} failed attempt(s), the last at {}: <code "
        "data-field=\"last_error\">{}</code>",
        UtcTime(a.failing_since_unix_ms), a.failed_attempts, UtcTime(a.last_error_unix_ms),
        HtmlEscape(a.last_error));
  }
  out += fmt::format(
      "</p><p id=\"last-commit-{}\" data-field=\"last_commit_age_ms\" "
      "data-value=\"{}\">",
      index, d.commits.empty() ? -1 : now_ms - d.commits.front().at_unix_ms);
  out += d.commits.empty() ? std::string("no commit yet")
                           : fmt::format("last commit {} ago ({})",
                                         SecondsText(now_ms - d.commits.front().at_unix_ms),
                                         UtcTime(d.commits.front().at_unix_ms));
  out += "</p>";
}

void AppendDataset(std::string& out, const DatasetSnapshot& d, size_t index, int64_t now_ms) {
  const auto rate = [&](const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0; };
  int64_t lag_total = 0;
  for (const auto& [partition, p] : d.lag) {
    if (p.lag() < 0) {
      lag_total = -1;
      break;
    }
    lag_total += p.lag();
  }
  out += fmt::format(
      "<section class=\"dataset\" id=\"dataset-{}\" data-dataset=\"{}\"><h2>{} <small>topic "
      "{}</small></h2>",
      index, HtmlEscape(d.name), HtmlEscape(d.name), HtmlEscape(d.topic));
  out +=
      "<table class=\"summary\"><tr><th></th><th>total</th><th>per s now</th>"
      "<th>per s, 15 min</th></tr>";
  out += fmt::format("<tr><th class=\"text\">events</th>{}{}{}</tr>",
                     Cell("events_total", static_cast<double>(d.events_total)),
                     Cell("events_per_second_now", rate(d.rates.now, 0)),
                     Cell("events_per_second_15m", rate(d.rates.window, 0)));
  out += fmt::format(
      "<tr><th class=\"text\">bytes</th>{}{}{}</tr></table>",
      Cell("bytes_total", static_cast<double>(d.bytes_total),
           BytesText(static_cast<double>(d.bytes_total))),
      Cell("bytes_per_second_now", rate(d.rates.now, 1), BytesText(rate(d.rates.now, 1))),
      Cell("bytes_per_second_15m", rate(d.rates.window, 1), BytesText(rate(d.rates.window, 1))));
  out += "<table class=\"kv\">";
  out += KeyValueRow("commits", "commits_total", static_cast<double>(d.commits_total));
  out += KeyValueRow("rows committed", "rows_total", static_cast<double>(d.rows_total));
  out += KeyValueRow("rejects", "rejects_total", static_cast<double>(d.rejects_total));
  out += fmt::format("<tr><th class=\"text\">lag (messages not in the lake)</th>{}</tr>",
                     CountCell("lag_total", lag_total));
  out += "</table>";
  AppendActivity(out, d, index, now_ms);
  out += "<div class=\"charts\"><div><h3>events/s</h3>";
  out += LineChartSvg(fmt::format("events-chart-{}", index),
                      {{"events/s", "#36c", Column(d.rates, 0)}}, "events/s", Span(d.rates));
  out += "</div><div><h3>bytes/s</h3>";
  out += LineChartSvg(fmt::format("bytes-chart-{}", index),
                      {{"bytes/s", "#c63", Column(d.rates, 1)}}, "B/s", Span(d.rates));
  out += fmt::format("</div><div><h3>file sizes, last {} files</h3>", d.file_sizes_seen);
  std::vector<std::string> labels;
  for (int64_t bound : FileSizeBounds()) {
    labels.push_back(bound >= (1LL << 30)   ? fmt::format("{}G", bound >> 30)
                     : bound >= (1LL << 20) ? fmt::format("{}M", bound >> 20)
                                            : fmt::format("{}K", bound >> 10));
  }
  labels.push_back(">" + labels.back());
  out += BarChartSvg(fmt::format("file-sizes-{}", index), labels, d.file_size_counts);
  out += "</div></div>";

  out += fmt::format(
      "<h3>lag by partition</h3><table id=\"lag-{}\"><tr><th>partition</th>"
      "<th>lag</th><th>not fetched</th><th>high watermark</th><th>in the lake up to</th></tr>",
      index);
  for (const auto& [partition, p] : d.lag) {
    out += fmt::format("<tr data-partition=\"{}\"><td>{}</td>{}{}{}{}</tr>", partition, partition,
                       CountCell("lag", p.lag()), CountCell("fetch_lag", p.fetch_lag()),
                       CountCell("high_watermark", p.high_watermark),
                       CountCell("lake_next_offset", p.lake_next));
  }
  if (d.lag.empty()) out += "<tr><td class=\"text\" colspan=\"5\">no partition assigned</td></tr>";
  out += "</table>";

  out += fmt::format(
      "<h3>paused partitions</h3><p id=\"paused-{}\" data-field=\"paused\" "
      "data-value=\"{}\"{}>",
      index, d.paused.partitions.size(), d.paused.partitions.empty() ? "" : " class=\"paused\"");
  if (d.paused.partitions.empty()) {
    out += "none";
  } else {
    std::string list;
    for (int32_t p : d.paused.partitions) list += (list.empty() ? "" : ", ") + std::to_string(p);
    out += fmt::format("{} ({})", HtmlEscape(list), HtmlEscape(d.paused.reason));
  }
  out += "</p>";

  out += fmt::format(
      "<h3>last {} commits</h3><table id=\"commits-{}\"><tr><th>at (UTC)</th><th>snapshot</th>"
      "<th>rows</th><th>rejects</th><th>files</th><th>bytes</th><th>write ms</th>"
      "<th>commit ms</th></tr>",
      kStatusCommits, index);
  for (size_t i = 0; i < d.commits.size(); ++i) {
    const CommitRecord& c = d.commits[i];
    out += fmt::format(
        "<tr data-commit=\"{}\"><td class=\"text\">{}</td>{}{}{}{}{}{}{}</tr>", i,
        UtcTime(c.at_unix_ms),
        Cell("snapshot_id", static_cast<double>(c.snapshot_id), std::to_string(c.snapshot_id)),
        Cell("rows", static_cast<double>(c.rows)), Cell("rejects", static_cast<double>(c.rejects)),
        Cell("files", static_cast<double>(c.files)), Cell("bytes", static_cast<double>(c.bytes)),
        Cell("write_ms", static_cast<double>(c.write_ms)),
        Cell("commit_ms", static_cast<double>(c.commit_ms)));
  }
  if (d.commits.empty()) out += "<tr><td class=\"text\" colspan=\"8\">no commit yet</td></tr>";
  out += "</table>";

  out += fmt::format(
      "<h3>rejects by reason</h3><table id=\"rejects-{}\"><tr><th class=\"text\">"
      "reason</th><th>records</th></tr>",
      index);
  for (const auto& [reason, count] : d.rejects) {
    out +=
        fmt::format("<tr data-reason=\"{}\"><td class=\"text\">{}</td>{}</tr>", HtmlEscape(reason),
                    HtmlEscape(reason), Cell("count", static_cast<double>(count)));
  }
  if (d.rejects.empty()) out += "<tr><td class=\"text\" colspan=\"2\">none</td></tr>";
  out += "</table></section>";
}

void AppendServe(std::string& out, const ServeSnapshot& s) {
  const auto rate = [](const std::vector<double>& v, size_t i) { return i < v.size() ? v[i] : 0; };
  out += "<section id=\"serve\"><h2>sessions and queries</h2><table class=\"kv\">";
  out += KeyValueRow("open sessions", "sessions", static_cast<double>(s.sessions));
  out +=
      "</table><table id=\"queries\"><tr><th class=\"text\">status</th><th>total</th>"
      "<th>per s now</th><th>per s, 15 min</th></tr>";
  const std::pair<const char*, int64_t> statuses[] = {
      {"ok", s.queries_ok}, {"error", s.queries_error}, {"cancelled", s.queries_cancelled}};
  for (size_t i = 0; i < std::size(statuses); ++i) {
    const auto& [name, total] = statuses[i];
    out += fmt::format("<tr data-status=\"{}\"><th class=\"text\">{}</th>{}{}{}</tr>", name, name,
                       Cell("queries_total", static_cast<double>(total)),
                       Cell("queries_per_second_now", rate(s.rates.now, i)),
                       Cell("queries_per_second_15m", rate(s.rates.window, i)));
  }
  out += "</table><div class=\"charts\"><div><h3>queries/s by status</h3>";
  out += LineChartSvg("queries-chart",
                      {{"ok", "#393", Column(s.rates, 0)},
                       {"error", "#c33", Column(s.rates, 1)},
                       {"cancelled", "#c93", Column(s.rates, 2)}},
                      "queries/s", Span(s.rates));
  out += fmt::format(
      "</div></div><h3>slowest statements, last 15 min</h3><p><small>Literal values are shown "
      "as ?; texts are cut at {} characters.</small></p><table id=\"slowest\"><tr><th>seconds"
      "</th><th class=\"text\">status</th><th class=\"text\">user</th><th class=\"text\">at "
      "(UTC)</th><th class=\"text\">statement</th></tr>",
      kStatementDisplayChars);
  for (size_t i = 0; i < s.slowest.size(); ++i) {
    const SlowStatement& q = s.slowest[i];
    out += fmt::format(
        "<tr data-statement=\"{}\">{}<td class=\"text\" data-field=\"status\">{}</td>"
        "<td class=\"text\" data-field=\"user\">{}</td><td class=\"text\">{}</td>"
        "<td class=\"text\"><code data-field=\"statement\">{}</code></td></tr>",
        i, Cell("seconds", q.seconds, fmt::format("{:.3f}", q.seconds)), HtmlEscape(q.status),
        HtmlEscape(q.user), UtcTime(q.at_unix_ms), HtmlEscape(q.statement));
  }
  if (s.slowest.empty()) out += "<tr><td class=\"text\" colspan=\"5\">none yet</td></tr>";
  out += "</table></section>";
}

}  // namespace

std::string RenderStatusHtml(const StatusSnapshot& status, int refresh_seconds) {
  std::string out =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" "
      "href=\"data:,\">";
  if (refresh_seconds > 0) {
    out += fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">", refresh_seconds);
  }
  out += fmt::format("<title>weir {} status</title><style>{}</style></head><body>",
                     HtmlEscape(status.service), kStyle);
  out += fmt::format(
      "<h1 id=\"service\" data-service=\"{}\">weir {} <small>{}</small></h1><p>up <span "
      "data-field=\"uptime_seconds\" data-value=\"{}\">{:.0f} s</span> · at {} · "
      "<a href=\"/status.json\">JSON</a> · <a href=\"/metrics\">metrics</a></p>",
      HtmlEscape(status.service), HtmlEscape(status.service), HtmlEscape(status.version),
      status.uptime_seconds, status.uptime_seconds, UtcTime(status.generated_at_unix_ms));
  if (status.service == "ingest") {
    if (status.wal.wal_mode) {
      out += fmt::format(
          "<p id=\"wal\" data-field=\"wal_mode\" data-value=\"wal\">WAL mode: {} segment(s), "
          "{} not yet committed{}</p>",
          status.wal.segments, HtmlEscape(BytesText(static_cast<double>(status.wal.bytes))),
          status.wal.oldest_unconfirmed_unix_ms > 0
              ? ", oldest from " + UtcTime(status.wal.oldest_unconfirmed_unix_ms)
              : "");
    } else {
      out +=
          "<p id=\"wal\" data-field=\"wal_mode\" data-value=\"direct\">direct mode (no "
          "write-ahead log: records are committed from memory)</p>";
    }
    if (status.broker.unreachable_since_unix_ms > 0) {
      out += fmt::format(
          "<p id=\"kafka\" data-field=\"brokers\" data-value=\"unreachable\" class=\"paused\">"
          "Kafka brokers unreachable since {} ({}): <code>{}</code></p>",
          UtcTime(status.broker.unreachable_since_unix_ms),
          SecondsText(status.generated_at_unix_ms - status.broker.unreachable_since_unix_ms),
          HtmlEscape(status.broker.error));
    } else {
      out +=
          "<p id=\"kafka\" data-field=\"brokers\" data-value=\"ok\">Kafka brokers "
          "reachable</p>";
    }
    if (status.datasets.empty()) out += "<p>no dataset</p>";
    for (size_t i = 0; i < status.datasets.size(); ++i) {
      AppendDataset(out, status.datasets[i], i, status.generated_at_unix_ms);
    }
  }
  if (status.serve) AppendServe(out, *status.serve);
  out += "</body></html>\n";
  return out;
}

}  // namespace weir::observe
