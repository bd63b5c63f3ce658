#include "app/record_filters.h"

#include <cctype>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "lake/iceberg/http_client.h"

namespace weir::app {
namespace {

// The settings were validated; a value that does not parse here is a programming error.
Result<records::FilterValues> ValuesOf(const config::DatasetSettings& d,
                                       const std::vector<std::string>& tokens,
                                       const char* setting) {
  auto values = records::ParseFilterValues(tokens);
  if (!values.ok()) {
    return Status::Invalid("datasets[", d.name, "].", setting, ": ", values.status().message());
  }
  return values;
}

Result<std::shared_ptr<const records::RecordFilter>> MakeFilter(
    const config::DatasetSettings& d, std::shared_ptr<const records::KeepValuesSource> keep) {
  const auto& f = d.filter;
  if (f.keep_field.empty() && f.drop_field.empty()) return nullptr;
  records::FilterConfig config;
  if (!f.keep_field.empty()) {
    config.keep_field = f.keep_field;
    config.keep_values = std::move(keep);
  }
  if (!f.drop_field.empty()) {
    config.drop_field = f.drop_field;
    WEIR_ASSIGN_OR_RAISE(config.drop_values, ValuesOf(d, f.drop_values, "filter.drop_values"));
  }
  WEIR_ASSIGN_OR_RAISE(auto filter, records::RecordFilter::Make(std::move(config)));
  return std::shared_ptr<const records::RecordFilter>(std::move(filter));
}

}  // namespace

Result<std::shared_ptr<const records::RecordFilter>> MakeStaticFilter(
    const config::DatasetSettings& d) {
  std::shared_ptr<const records::KeepValuesSource> keep;
  if (!d.filter.keep_field.empty()) {
    WEIR_ASSIGN_OR_RAISE(auto values, ValuesOf(d, d.filter.keep_values, "filter.keep_values"));
    spdlog::info("dataset {}: allowlist on {} ({} {} value(s))", d.name, d.filter.keep_field,
                 values.size(), records::ToString(values.kind));
    keep = std::make_shared<records::StaticKeepValues>(std::move(values));
  }
  if (!d.filter.drop_field.empty()) {
    spdlog::info("dataset {}: denylist on {} ({} value(s))", d.name, d.filter.drop_field,
                 d.filter.drop_values.size());
  }
  return MakeFilter(d, std::move(keep));
}

Result<records::FetchIncludeValues> MakeHttpFetch(const config::IncludeValuesSettings& s) {
  lake::iceberg::HttpLimits limits;
  limits.total_timeout = s.request_timeout;
  limits.connect_timeout = std::min(s.request_timeout, std::chrono::milliseconds(10'000));
  limits.max_response_bytes = s.max_bytes;
  WEIR_ASSIGN_OR_RAISE(std::shared_ptr<lake::iceberg::HttpClient> client,
                       lake::iceberg::HttpClient::Make(limits));
  lake::iceberg::HttpRequest request;
  request.url = s.url;
  request.headers.emplace_back("Accept", "application/json");
  if (!s.auth_header_name.empty()) request.headers.emplace_back(s.auth_header_name, s.auth_token);
  // The poll thread is the client's only user.
  return records::FetchIncludeValues(
      [client, request](const std::stop_token& stop) -> Result<std::string> {
        WEIR_ASSIGN_OR_RAISE(auto response, client->Send(request, stop));
        if (response.status >= 300 && response.status < 400) {
          // Never followed: the auth header must not travel to another host.
          return Status::IOError("redirect refused (HTTP ", response.status, ")");
        }
        if (response.status != 200) {
          return Status::IOError("HTTP ", response.status, " (expected 200)");
        }
        return std::move(response.body);
      });
}

Result<std::unique_ptr<IncludeValuesPollers>> IncludeValuesPollers::Start(
    const config::IngestSettings& settings, ingest::PipelineOptions* options,
    observe::MetricsRegistry* metrics, std::stop_token stop) {
  auto out = std::make_unique<IncludeValuesPollers>();
  for (size_t i = 0; i < settings.datasets.size(); ++i) {
    const config::DatasetSettings& d = settings.datasets[i];
    const auto& iv = d.include_values;
    if (iv.url.empty()) {
      if (!d.filter.keep_field.empty()) {
        metrics
            ->Gauge("weir_include_values_mode",
                    "1 for the include-values mode this dataset runs (static, shadow, "
                    "authoritative).",
                    {{"dataset", d.name}, {"mode", "static"}})
            .Set(1);
      }
      continue;
    }
    records::IncludeValuesOptions o;
    o.url = iv.url;
    std::string mode;  // validated: shadow or authoritative, any case
    for (const char c : iv.mode)
      mode += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    o.mode = mode == "authoritative" ? records::IncludeValuesMode::kAuthoritative
                                     : records::IncludeValuesMode::kShadow;
    WEIR_ASSIGN_OR_RAISE(o.pins, ValuesOf(d, d.filter.keep_values, "filter.keep_values"));
    o.removal_polls = iv.removal_polls;
    o.poll_interval = iv.poll_interval;
    o.startup_timeout = iv.startup_timeout;
    if (iv.removal_polls == 1) {
      spdlog::warn("dataset {}: include_values.removal_polls is 1: removals are not damped",
                   d.name);
    }
    spdlog::info(
        "dataset {}: include-values from {} ({} mode, every {} ms ±10 %); {} pinned value(s), "
        "removable only by configuration: {}",
        d.name, iv.url, records::ToString(o.mode), iv.poll_interval.count(), o.pins.size(),
        fmt::join(o.pins.Labels(), ","));
    WEIR_ASSIGN_OR_RAISE(auto fetch, MakeHttpFetch(iv));
    auto& reporter = *out->metrics_.emplace_back(
        std::make_unique<ingest::IncludeValuesMetrics>(*metrics, d.name, o.mode));
    auto poller = std::make_shared<records::IncludeValuesPoller>(
        o, std::move(fetch),
        [&reporter](const records::IncludeValuesReport& report) { reporter.Report(report); },
        Clock::System(), std::random_device{}());
    WEIR_RETURN_NOT_OK(WithContext(poller->Start(stop), "datasets[" + d.name + "].include_values"));
    WEIR_ASSIGN_OR_RAISE(options->datasets[i].filter, MakeFilter(d, poller));
    out->pollers_.push_back(std::move(poller));
  }
  return out;
}

void IncludeValuesPollers::Stop() {
  for (auto& poller : pollers_) poller->Stop();
}

}  // namespace weir::app
