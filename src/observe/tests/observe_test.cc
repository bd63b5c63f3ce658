#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "observe/exposition.h"
#include "observe/http_server.h"
#include "observe/metric_names.h"
#include "observe/metrics_registry.h"
#include "observe/status_page.h"

namespace weir::observe {
namespace {

TEST(ExpositionTest, SampleValues) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(-0.0), "0");
  EXPECT_EQ(FormatSampleValue(1234), "1234");
  EXPECT_EQ(FormatSampleValue(-7), "-7");
  EXPECT_EQ(FormatSampleValue(1e20), "100000000000000000000");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatSampleValue(2.5e-7), "2.5e-07");
  EXPECT_EQ(FormatSampleValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatSampleValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatSampleValue(0.0 / 0.0), "NaN");
}

TEST(ExpositionTest, Names) {
  EXPECT_TRUE(IsValidMetricName("weir_records_total"));
  EXPECT_TRUE(IsValidMetricName("a:b"));
  EXPECT_FALSE(IsValidMetricName("9lives"));
  EXPECT_FALSE(IsValidMetricName("has-dash"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_TRUE(IsValidLabelName("dataset"));
  EXPECT_FALSE(IsValidLabelName("__reserved"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
}

TEST(ExpositionTest, AppendGaugeFamily) {
  std::string out;
  AppendGauge(out, "rdkafka_lag", "Lag.\\ per\npartition",
              {{{{"partition", "0"}}, 3}, {{{"partition", "1"}}, 4.5}});
  AppendGauge(out, "rdkafka_up", "Up.", {}, 1);
  EXPECT_EQ(out,
            "# HELP rdkafka_lag Lag.\\\\ per\\npartition\n"
            "# TYPE rdkafka_lag gauge\n"
            "rdkafka_lag{partition=\"0\"} 3\n"
            "rdkafka_lag{partition=\"1\"} 4.5\n"
            "# HELP rdkafka_up Up.\n"
            "# TYPE rdkafka_up gauge\n"
            "rdkafka_up 1\n");
}

TEST(MetricsRegistryTest, RendersCounter) {
  MetricsRegistry registry;
  registry.Counter("weir_records_consumed_total", "Records read.", {{"dataset", "events"}})
      .Increment();
  registry.Counter("weir_records_consumed_total", "Records read.", {{"dataset", "clicks"}})
      .Increment(1234);
  registry.Counter("weir_records_consumed_total", "Records read.", {{"dataset", "events"}})
      .Increment(2);
  EXPECT_EQ(registry.Render(),
            "# HELP weir_records_consumed_total Records read.\n"
            "# TYPE weir_records_consumed_total counter\n"
            "weir_records_consumed_total{dataset=\"clicks\"} 1234\n"
            "weir_records_consumed_total{dataset=\"events\"} 3\n");
}

TEST(MetricsRegistryTest, RendersGaugeWithEscapedLabels) {
  MetricsRegistry registry;
  // Labels render sorted by name, values escaped.
  registry.Gauge("weir_consumer_lag", "Lag.", {{"topic", "a\\b\"c\nd"}, {"partition", "7"}})
      .Set(42);
  Gauge& paused = registry.Gauge("weir_paused_partitions", "Paused.", {});
  paused.Set(3);
  paused.Add(-1.5);
  EXPECT_EQ(registry.Render(),
            "# HELP weir_consumer_lag Lag.\n"
            "# TYPE weir_consumer_lag gauge\n"
            "weir_consumer_lag{partition=\"7\",topic=\"a\\\\b\\\"c\\nd\"} 42\n"
            "# HELP weir_paused_partitions Paused.\n"
            "# TYPE weir_paused_partitions gauge\n"
            "weir_paused_partitions 1.5\n");
}

TEST(MetricsRegistryTest, RendersHistogram) {
  MetricsRegistry registry;
  const double bounds[] = {0.1, 1, 2.5};
  Histogram& histogram = registry.Histogram("weir_flush_duration_seconds", "Flush time.",
                                            {{"dataset", "events"}}, bounds);
  histogram.Observe(0.05);
  histogram.Observe(0.1);  // upper bounds are inclusive
  histogram.Observe(2);
  histogram.Observe(7.25);
  EXPECT_EQ(registry.Render(),
            "# HELP weir_flush_duration_seconds Flush time.\n"
            "# TYPE weir_flush_duration_seconds histogram\n"
            "weir_flush_duration_seconds_bucket{dataset=\"events\",le=\"0.1\"} 2\n"
            "weir_flush_duration_seconds_bucket{dataset=\"events\",le=\"1\"} 2\n"
            "weir_flush_duration_seconds_bucket{dataset=\"events\",le=\"2.5\"} 3\n"
            "weir_flush_duration_seconds_bucket{dataset=\"events\",le=\"+Inf\"} 4\n"
            "weir_flush_duration_seconds_sum{dataset=\"events\"} 9.4\n"
            "weir_flush_duration_seconds_count{dataset=\"events\"} 4\n");
}

TEST(MetricsRegistryTest, DefaultBucketsAndFamilyOrder) {
  MetricsRegistry registry;
  registry.Histogram(kCommitDuration, {{"dataset", "e"}}).Observe(0.3);
  registry.Counter(kCommits, {{"dataset", "e"}}).Increment();
  registry.AddCollector([](std::string& out) { AppendGauge(out, "rdkafka_up", "Up.", {}, 1); });
  const std::string text = registry.Render();
  // Families sorted by name, collectors last.
  EXPECT_LT(text.find("# TYPE weir_commit_duration_seconds histogram"),
            text.find("# TYPE weir_commits_total counter"));
  EXPECT_LT(text.find("weir_commits_total{dataset=\"e\"} 1"), text.find("rdkafka_up 1"));
  EXPECT_NE(text.find("weir_commit_duration_seconds_bucket{dataset=\"e\",le=\"0.25\"} 0\n"
                      "weir_commit_duration_seconds_bucket{dataset=\"e\",le=\"0.5\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("le=\"0.005\""), std::string::npos);
  EXPECT_NE(text.find("le=\"120\"} 1\n"), std::string::npos);
  EXPECT_EQ(DefaultSecondsBuckets().size(), 14u);
}

TEST(MetricsRegistryTest, SameNameAndLabelsIsSameSeries) {
  MetricsRegistry registry;
  Counter& a = registry.Counter("c_total", "C.", {{"x", "1"}, {"y", "2"}});
  Counter& b = registry.Counter("c_total", "C.", {{"y", "2"}, {"x", "1"}});
  Counter& other = registry.Counter("c_total", "C.", {{"x", "1"}, {"y", "3"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &other);
  Histogram& h1 = registry.Histogram(kFlushDuration, {{"dataset", "e"}});
  Histogram& h2 = registry.Histogram(kFlushDuration, {{"dataset", "e"}});
  EXPECT_EQ(&h1, &h2);
}

TEST(MetricsRegistryTest, ConcurrentIncrementsAreExact) {
  MetricsRegistry registry;
  Counter& counter = registry.Counter("c_total", "C.", {});
  Histogram& histogram = registry.Histogram("h_seconds", "H.", {});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100000; ++i) {
        counter.Increment();
        histogram.Observe(1);
      }
    });
  }
  // Scrapes run concurrently with the updates.
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(registry.Render().empty());
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.value(), 400000);
  EXPECT_EQ(histogram.CumulativeCounts().back(), 400000u);
  EXPECT_EQ(histogram.sum(), 400000);
  EXPECT_NE(registry.Render().find("c_total 400000\n"), std::string::npos);
}

TEST(MetricsRegistryDeathTest, ConflictingRegistrationIsAProgrammerError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  MetricsRegistry registry;
  registry.Counter("c_total", "C.", {});
  EXPECT_DEATH(registry.Gauge("c_total", "C.", {}), "family.type == type");
  EXPECT_DEATH(registry.Counter("c_total", "Other help.", {}), "family.help == help");
  EXPECT_DEATH(registry.Counter("bad-name", "B.", {}), "IsValidMetricName");
  EXPECT_DEATH(registry.Counter(kRecordsRejected, {{"dataset", "e"}}), "LabelsMatchDef");
}

TEST(MetricNamesTest, StandardFamiliesAreWellFormed) {
  MetricsRegistry registry;
  std::set<std::string_view> names;
  for (const MetricDef* def : kStandardMetrics) {
    EXPECT_TRUE(IsValidMetricName(def->name)) << def->name;
    EXPECT_TRUE(def->name.starts_with("weir_")) << def->name;
    EXPECT_FALSE(def->help.empty()) << def->name;
    EXPECT_EQ(def->type == MetricType::kCounter, def->name.ends_with("_total")) << def->name;
    EXPECT_TRUE(names.insert(def->name).second) << def->name;
    Labels labels;
    for (std::string_view label : def->label_names) {
      if (!label.empty()) labels.emplace(label, "x");
    }
    switch (def->type) {
      case MetricType::kCounter:
        registry.Counter(*def, labels);
        break;
      case MetricType::kGauge:
        registry.Gauge(*def, labels);
        break;
      case MetricType::kHistogram:
        registry.Histogram(*def, labels);
        break;
    }
  }
  EXPECT_NE(registry.Render().find("# TYPE weir_consumer_lag gauge\n"
                                   "weir_consumer_lag{partition=\"x\",topic=\"x\"} 0\n"),
            std::string::npos);
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.Counter("weir_records_consumed_total", "Records read.", {{"dataset", "events"}})
        .Increment(5);
  }

  HttpServerOptions Options() {
    HttpServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.registry = &registry_;
    options.health = [this] { return ProbeResult{healthy_.load(), "loop stalled for 31 s"}; };
    options.readiness = [this] {
      return ready_.load() ? ProbeResult{true, ""} : ProbeResult{false, "draining"};
    };
    options.status = &status_;
    return options;
  }

  MetricsRegistry registry_;
  StatusModel status_{"ingest", "test"};
  std::atomic<bool> healthy_{true};
  std::atomic<bool> ready_{false};
};

TEST_F(HttpServerTest, ServesMetricsProbesAndStatus) {
  auto made = HttpServer::Make(Options());
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<HttpServer> server = std::move(made).ValueOrDie();
  ASSERT_TRUE(server->Start().ok());
  ASSERT_GT(server->port(), 0);
  httplib::Client client("127.0.0.1", server->port());

  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, registry_.Render());
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");

  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok: loop stalled for 31 s\n");
  healthy_ = false;
  health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body, "loop stalled for 31 s\n");

  auto ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_EQ(ready->body, "draining\n");
  ready_ = true;
  ready = client.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(ready->body, "ok\n");

  status_.Dataset("events", "events-topic").Consumed(10);
  auto status = client.Get("/status?refresh=0");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, 200);
  EXPECT_EQ(status->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(status->get_header_value("Content-Security-Policy"), kStatusPageCsp);
  EXPECT_NE(status->body.find("data-dataset=\"events\""), std::string::npos);
  EXPECT_EQ(status->body.find("http-equiv=\"refresh\""), std::string::npos);
  auto refreshing = client.Get("/status");
  ASSERT_TRUE(refreshing);
  EXPECT_NE(refreshing->body.find("http-equiv=\"refresh\" content=\"15\""), std::string::npos);
  auto json = client.Get("/status.json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 200);
  EXPECT_EQ(json->get_header_value("Content-Type"), "application/json");
  EXPECT_NE(json->body.find("\"events_total\":1,"), std::string::npos) << json->body;

  auto missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);

  server->Stop();
  server->Stop();
  EXPECT_FALSE(client.Get("/metrics"));
}

TEST_F(HttpServerTest, PortInUseIsAnErrorNamingThePort) {
  auto first = HttpServer::Make(Options()).ValueOrDie();
  ASSERT_TRUE(first->Start().ok());
  HttpServerOptions options = Options();
  options.port = first->port();
  auto second = HttpServer::Make(options).ValueOrDie();
  const Status status = second->Start();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(ClassOf(status), ErrorClass::kFatal);
  EXPECT_NE(status.message().find(std::to_string(first->port())), std::string::npos)
      << status.ToString();
  second->Stop();
  first->Stop();
}

TEST_F(HttpServerTest, StopIsIdempotentAndRestartWorks) {
  auto server = HttpServer::Make(Options()).ValueOrDie();
  server->Stop();  // never started
  ASSERT_TRUE(server->Start().ok());
  EXPECT_FALSE(server->Start().ok());  // already running
  server->Stop();
  server->Stop();
  ASSERT_TRUE(server->Start().ok());
  httplib::Client client("127.0.0.1", server->port());
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  // The destructor stops it again.
}

// Peers that stall mid-request, lie about a body's length or vanish cost a worker for at most
// the read timeout; the server answers /status.json afterwards and memory stays bounded.
TEST_F(HttpServerTest, HostilePeersCostTheirConnectionOnly) {
  auto server = HttpServer::Make(Options()).ValueOrDie();
  ASSERT_TRUE(server->Start().ok());
  auto connect_raw = [&] {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(server->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  };
  auto send_text = [](int fd, const std::string& text) {
    (void)send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  };
  const int stalled = connect_raw();
  send_text(stalled, "GET /status HTTP/1.1\r\nHost: x\r\n");  // and nothing more
  const int liar = connect_raw();
  send_text(liar, "GET /status.json HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n");
  const int huge = connect_raw();
  send_text(huge, "GET /status?" + std::string(1 << 20, 'a') + " HTTP/1.1\r\n\r\n");
  const int vanished = connect_raw();
  send_text(vanished, "GET /status HTT");
  close(vanished);

  httplib::Client client("127.0.0.1", server->port());
  client.set_read_timeout(30, 0);
  auto json = client.Get("/status.json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 200);
  EXPECT_NE(json->body.find("\"service\":\"ingest\""), std::string::npos);
  for (int fd : {stalled, liar, huge}) close(fd);
  server->Stop();
}

TEST(HttpServerMakeTest, RejectsIncompleteOptions) {
  MetricsRegistry registry;
  HttpServerOptions options;
  EXPECT_FALSE(HttpServer::Make(options).ok());
  options.registry = &registry;
  options.health = [] { return ProbeResult{true, ""}; };
  options.readiness = [] { return ProbeResult{true, ""}; };
  options.port = 70000;
  const auto made = HttpServer::Make(options);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("70000"), std::string::npos);
  options.port = 0;
  EXPECT_TRUE(HttpServer::Make(options).ok());
}

}  // namespace
}  // namespace weir::observe
