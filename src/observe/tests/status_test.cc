#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/number_text.h"
#include "observe/html.h"
#include "observe/statement_text.h"
#include "observe/status_model.h"
#include "observe/status_page.h"

namespace weir::observe {
namespace {

using std::chrono::seconds;

ManualClock StartClock() {
  return ManualClock(std::chrono::system_clock::time_point(std::chrono::hours(480000)));
}

TEST(StatementTextTest, LiteralValuesAreReplacedAndIdentifiersKept) {
  EXPECT_EQ(DisplayStatement("SELECT * FROM \"Users\" WHERE email = 'a@b.c' AND id = 42"),
            "SELECT * FROM \"Users\" WHERE email = ? AND id = ?");
  EXPECT_EQ(DisplayStatement("select 'it''s', E'\\'x\\'', $$secret$$, $t$more$t$, 1.5e-3, .5"),
            "select ?, ?, ?, ?, ?, ?");
  EXPECT_EQ(DisplayStatement("select col1, t2.c3 from t2 -- password 'x'\n where a=$1"),
            "select col1, t2.c3 from t2 where a=$1");
  EXPECT_EQ(DisplayStatement("select /* 'hidden' /* nested */ */ x"), "select x");
  EXPECT_EQ(DisplayStatement("select 'unterminated secret"), "select ?");
  EXPECT_EQ(DisplayStatement("SELECT\n\t  1"), "SELECT ?");
}

TEST(StatementTextTest, LongStatementsAreCutAtACharacterBoundary) {
  std::string sql = "select ";
  for (int i = 0; i < 200; ++i) sql += "é";
  const std::string shown = DisplayStatement(sql);
  EXPECT_EQ(
      shown, "select " + [] {
        std::string s;
        for (size_t i = 0; i < kStatementDisplayChars - 7; ++i) s += "é";
        return s;
      }() + "…");
}

TEST(HtmlTest, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(HtmlEscape("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
  EXPECT_EQ(DisplayNumber(1234567), "1 234 567");
  EXPECT_EQ(DisplayNumber(0.25), "0.25");
  EXPECT_EQ(DisplayNumber(12.345), "12.3");
  EXPECT_EQ(DisplayNumber(73312.6), "73 313");
  EXPECT_EQ(BytesText(1536), "1.5 KiB");
}

TEST(StatusModelTest, RatesCommitsAndBoundsOfADataset) {
  ManualClock clock = StartClock();
  StatusModel model("ingest", "1.0", clock);
  DatasetStatus& d = model.Dataset("orders", "orders-topic");
  EXPECT_EQ(&d, &model.Dataset("orders", "orders-topic"));
  for (int step = 0; step < 120; ++step) {  // 20 minutes, 100 events of 10 bytes per 10 s
    for (int i = 0; i < 100; ++i) d.Consumed(10);
    clock.Advance(seconds(10));
    model.Tick();
  }
  for (int i = 0; i < 150; ++i) {
    d.Committed(CommitRecord{.snapshot_id = i, .rows = 10, .files = 2, .bytes = 3000},
                std::vector<int64_t>{1000, 2LL << 20});
  }
  d.Rejected("invalid_json");
  d.Rejected("invalid_json");
  for (int i = 0; i < 40; ++i) d.Rejected("reason_" + std::to_string(i));
  const std::map<int32_t, PartitionProgress> lag = {
      {0, {.high_watermark = 15, .lake_next = 10, .position = 12}}, {1, {.high_watermark = 7}}};
  d.SetLag(lag);
  d.SetPaused({{0, 1}, "memory budget reached"});

  const StatusSnapshot snapshot = model.Snapshot();
  ASSERT_EQ(snapshot.datasets.size(), 1u);
  const DatasetSnapshot& s = snapshot.datasets[0];
  EXPECT_EQ(s.events_total, 12000);
  EXPECT_EQ(s.bytes_total, 120000);
  ASSERT_EQ(s.rates.now.size(), 2u);
  EXPECT_DOUBLE_EQ(s.rates.now[0], 10.0);
  EXPECT_DOUBLE_EQ(s.rates.now[1], 100.0);
  EXPECT_DOUBLE_EQ(s.rates.window[0], 10.0);
  EXPECT_EQ(s.rates.points.size(), kRateSamples - 1);  // bounded: 15 minutes of steps
  EXPECT_EQ(s.commits_total, 150);
  EXPECT_EQ(s.rows_total, 1500);
  ASSERT_EQ(s.commits.size(), kStatusCommits);
  EXPECT_EQ(s.commits.front().snapshot_id, 149);  // newest first
  EXPECT_EQ(s.commits.back().snapshot_id, 130);
  EXPECT_EQ(s.file_sizes_seen, static_cast<int64_t>(kStatusFileSizes));
  EXPECT_EQ(s.file_size_counts[0], 100);  // 1000 bytes: the first bucket
  EXPECT_EQ(s.file_size_counts[3], 100);  // 2 MiB: <= 4 MiB
  EXPECT_EQ(s.rejects_total, 42);
  EXPECT_EQ(s.rejects.at("invalid_json"), 2);
  EXPECT_EQ(s.rejects.size(), kStatusReasons + 1);  // the rest counted as "other"
  EXPECT_EQ(s.rejects.at("other"), 42 - 2 - (static_cast<int64_t>(kStatusReasons) - 1));
  EXPECT_EQ(s.lag, lag);
  EXPECT_EQ(s.lag.at(0).lag(), 5);
  EXPECT_EQ(s.lag.at(0).fetch_lag(), 3);
  EXPECT_EQ(s.lag.at(1).lag(), -1);  // unknown, never 0
  EXPECT_EQ(s.paused.partitions, (std::vector<int32_t>{0, 1}));
}

TEST(StatusModelTest, TheSlowestStatementsOfTheWindowAreKeptRedacted) {
  ManualClock clock = StartClock();
  StatusModel model("serve", "1.0", clock);
  ServeStatus& serve = model.Serve();
  serve.SessionOpened();
  serve.SessionOpened();
  serve.SessionClosed();
  for (int i = 0; i < 50; ++i) {
    serve.StatementFinished(i % 10 == 0 ? QueryOutcome::kError : QueryOutcome::kOk, i * 0.01,
                            "select * from t where secret = 'value" + std::to_string(i) + "'",
                            "alice");
  }
  serve.StatementFinished(QueryOutcome::kCancelled, 0.005, "select pg_sleep(100)", "bob");
  ServeSnapshot s = *model.Snapshot().serve;
  EXPECT_EQ(s.sessions, 1);
  EXPECT_EQ(s.queries_ok, 45);
  EXPECT_EQ(s.queries_error, 5);
  EXPECT_EQ(s.queries_cancelled, 1);
  ASSERT_EQ(s.slowest.size(), kSlowStatements);
  EXPECT_DOUBLE_EQ(s.slowest.front().seconds, 0.49);
  EXPECT_DOUBLE_EQ(s.slowest.back().seconds, 0.40);
  EXPECT_EQ(s.slowest.front().statement, "select * from t where secret = ?");
  EXPECT_EQ(s.slowest.front().user, "alice");
  EXPECT_EQ(s.slowest[9].status, "error");  // 0.40 s was statement 40
  // A quarter of an hour later they have expired, and a fast statement enters again.
  clock.Advance(std::chrono::minutes(16));
  serve.StatementFinished(QueryOutcome::kOk, 0.001, "select 1", "carol");
  s = *model.Snapshot().serve;
  ASSERT_EQ(s.slowest.size(), 1u);
  EXPECT_EQ(s.slowest[0].statement, "select ?");
}

TEST(StatusModelTest, FeedersAndReadersRunConcurrently) {
  StatusModel model("ingest", "1.0");
  DatasetStatus& d = model.Dataset("a", "t");
  ServeStatus& serve = model.Serve();
  std::thread feeder([&] {
    for (int i = 0; i < 20000; ++i) {
      d.Consumed(3);
      if (i % 100 == 0) d.Committed(CommitRecord{.snapshot_id = i, .rows = 100}, {});
      if (i % 7 == 0) serve.StatementFinished(QueryOutcome::kOk, i * 1e-6, "select 1", "u");
      model.Tick();
    }
  });
  for (int i = 0; i < 200; ++i) {
    (void)RenderStatusJson(model.Snapshot());
  }
  feeder.join();
  const StatusSnapshot s = model.Snapshot();
  EXPECT_EQ(s.datasets[0].events_total, 20000);
  EXPECT_EQ(s.datasets[0].rows_total, 20000);
  EXPECT_EQ(s.serve->queries_ok, 2858);
}

TEST(StatusPageTest, HostileNamesAndStatementsAreEscapedInHtmlAndJson) {
  ManualClock clock = StartClock();
  StatusModel model("ingest", "1.0", clock);
  DatasetStatus& d = model.Dataset("<img src=x onerror=alert(1)>", "t\"'");
  d.Consumed(5);
  d.Rejected("<b>bad</b>");
  d.Committed(CommitRecord{.snapshot_id = 7, .rows = 3, .files = 1, .bytes = 99}, {{99}});
  model.Serve().StatementFinished(QueryOutcome::kOk, 2.5,
                                  "select \"</code><script>x()</script>\" from t", "<u>");
  model.Serve().StatementFinished(QueryOutcome::kOk, 2.0, "select '\xff\xfe'", "\xc3");
  const std::string html = RenderStatusHtml(model.Snapshot(), 0);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("<u>"), std::string::npos);
  EXPECT_NE(html.find("data-dataset=\"&lt;img src=x onerror=alert(1)&gt;\""), std::string::npos);
  EXPECT_NE(html.find("data-field=\"snapshot_id\" data-value=\"7\">7<"), std::string::npos);
  EXPECT_NE(html.find("direct mode"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // namespace only
  EXPECT_EQ(html.find("src="), html.find("src=x"));

  const auto json = nlohmann::json::parse(RenderStatusJson(model.Snapshot()));
  EXPECT_EQ(json["service"], "ingest");
  EXPECT_EQ(json["wal"]["mode"], "direct");
  EXPECT_EQ(json["datasets"][0]["name"], "<img src=x onerror=alert(1)>");
  EXPECT_EQ(json["datasets"][0]["events_total"], 1);
  EXPECT_EQ(json["datasets"][0]["commits"][0]["snapshot_id"], 7);
  EXPECT_EQ(json["datasets"][0]["rejects"]["<b>bad</b>"], 1);
  EXPECT_EQ(json["serve"]["slowest"][0]["statement"],
            "select \"</code><script>x()</script>\" from t");
  EXPECT_EQ(json["serve"]["slowest"][1]["statement"], "select ?");
  EXPECT_EQ(json["serve"]["slowest"][1]["user"], "\xef\xbf\xbd");  // replaced, not thrown
}

TEST(StatusPageTest, WalModeHasItsOwnSlot) {
  StatusModel model("ingest", "1.0");
  model.SetWal(WalState{.wal_mode = true, .segments = 3, .bytes = 4096});
  const auto json = nlohmann::json::parse(RenderStatusJson(model.Snapshot()));
  EXPECT_EQ(json["wal"]["mode"], "wal");
  EXPECT_EQ(json["wal"]["segments"], 3);
  EXPECT_EQ(json["wal"]["bytes"], 4096);
  EXPECT_NE(RenderStatusHtml(model.Snapshot(), 0).find("WAL mode: 3 segment(s)"),
            std::string::npos);
}

TEST(StatusPageTest, AStallShowsAsUnknownLagAFlushInFlightAndUnreachableBrokers) {
  ManualClock clock = StartClock();
  StatusModel model("ingest", "1.0", clock);
  DatasetStatus& d = model.Dataset("events", "events");
  d.SetLag({{0, {.high_watermark = 900, .lake_next = 500, .position = 900}},
            {1, {.high_watermark = -1, .lake_next = 10, .position = 10}}});
  d.FlushStarted();
  clock.Advance(seconds(25));
  d.AttemptFailed("database is <locked>");
  model.SetBroker({.unreachable_since_unix_ms = UnixMillis(clock.Now()) - 40'000,
                   .error = "Connection refused"});
  const auto json = nlohmann::json::parse(RenderStatusJson(model.Snapshot()));
  const auto& dataset = json["datasets"][0];
  EXPECT_EQ(dataset["lag"][0]["lag"], 400);
  EXPECT_EQ(dataset["lag"][0]["fetch_lag"], 0);
  EXPECT_TRUE(dataset["lag"][1]["lag"].is_null());  // unknown, never 0
  EXPECT_TRUE(dataset["lag_total"].is_null());
  EXPECT_EQ(dataset["flush"]["failed_attempts"], 1);
  EXPECT_EQ(dataset["flush"]["last_error"], "database is <locked>");
  EXPECT_EQ(dataset["flush"]["in_flight_since_unix_ms"], UnixMillis(clock.Now()) - 25'000);
  EXPECT_TRUE(dataset["last_commit_unix_ms"].is_null());
  EXPECT_EQ(json["kafka"]["error"], "Connection refused");
  const std::string html = RenderStatusHtml(model.Snapshot(), 0);
  EXPECT_NE(html.find("a flush in flight for 25 s"), std::string::npos) << html;
  EXPECT_NE(html.find("database is &lt;locked&gt;"), std::string::npos);
  EXPECT_NE(html.find("data-field=\"lag_total\" data-value=\"\">unknown<"), std::string::npos);
  EXPECT_NE(html.find("Kafka brokers unreachable since"), std::string::npos);
  EXPECT_NE(html.find("(40 s)"), std::string::npos);
  EXPECT_NE(html.find("no commit yet"), std::string::npos);

  d.FlushEnded(/*landed=*/true);
  model.SetBroker({});
  const auto calm = nlohmann::json::parse(RenderStatusJson(model.Snapshot()));
  EXPECT_TRUE(calm["datasets"][0]["flush"]["in_flight_since_unix_ms"].is_null());
  EXPECT_TRUE(calm["datasets"][0]["flush"]["failing_since_unix_ms"].is_null());
  EXPECT_TRUE(calm["kafka"]["brokers_unreachable_since_unix_ms"].is_null());
  EXPECT_NE(RenderStatusHtml(model.Snapshot(), 0).find("no flush in flight"), std::string::npos);
}

}  // namespace
}  // namespace weir::observe
