#include "event_generator.h"

#include <array>
#include <cstdio>

namespace weir::bench {
namespace {

constexpr std::array<const char*, 8> kEvents = {"$pageview", "$autocapture",       "$identify",
                                                "signed_up", "$pageleave",         "purchase",
                                                "$screen",   "feature_flag_called"};
constexpr std::array<const char*, 5> kBrowsers = {"Chrome", "Firefox", "Safari", "Edge", "Opera"};
constexpr std::array<const char*, 4> kOs = {"Mac OS X", "Windows", "Linux", "iOS"};

std::string Uuid(std::mt19937_64& random) {
  char text[37];
  const uint64_t a = random();
  const uint64_t b = random();
  std::snprintf(text, sizeof text, "%08x-%04x-7%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFF),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3FFF)),
                static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFULL));
  return text;
}

}  // namespace

std::string EventGenerator::Next(int64_t index) {
  auto pick = [&](const auto& options) { return options[random_() % options.size()]; };
  const uint64_t user = random_() % 100000;
  const int64_t millis = 1767225600000 + index * 37 + static_cast<int64_t>(random_() % 1000);
  char timestamp[40];
  const int64_t seconds = millis / 1000;
  std::snprintf(timestamp, sizeof timestamp, "2026-01-%02lld %02lld:%02lld:%02lld.%03lld+00:00",
                static_cast<long long>(1 + (seconds / 86400) % 28),
                static_cast<long long>((seconds / 3600) % 24),
                static_cast<long long>((seconds / 60) % 60), static_cast<long long>(seconds % 60),
                static_cast<long long>(millis % 1000));

  std::string e;
  e.reserve(1200);
  e +=
      R"({"uuid":")" + Uuid(random_) + R"(","event":")" + pick(kEvents) +
      R"(","distinct_id":"user-)" + std::to_string(user) + R"(","team_id":)" +
      std::to_string(1 + random_() % 50) + R"(,"timestamp":")" + timestamp +
      R"(","properties":{"$seq":)" + std::to_string(index) + R"(,"$browser":")" + pick(kBrowsers) +
      R"(","$os":")" + pick(kOs) + R"(","$browser_version":)" +
      std::to_string(100 + random_() % 30) + R"(,"$screen_height":)" +
      std::to_string(600 + random_() % 1000) + R"(,"$screen_width":)" +
      std::to_string(800 + random_() % 2000) + R"(,"$viewport_height":)" +
      std::to_string(500 + random_() % 900) + R"(,"$viewport_width":)" +
      std::to_string(700 + random_() % 1800) + R"(,"$lib":"web","$lib_version":"1.)" +
      std::to_string(random_() % 200) + R"(.0","$insert_id":")" + Uuid(random_).substr(0, 16) +
      R"(","$time":)" + std::to_string(millis / 1000.0) + R"(,"$device_id":")" + Uuid(random_) +
      R"(","$current_url":"https://example.com/app/)" + std::to_string(random_() % 500) +
      R"(?ref=campaign","$host":"example.com",)" + R"("$pathname":"/app/)" +
      std::to_string(random_() % 500) +
      R"(","$referrer":"https://search.example.org/?q=weir","$referring_domain":)" +
      R"("search.example.org","$session_id":")" + Uuid(random_) + R"(","$window_id":")" +
      Uuid(random_) + R"(","$pageview_id":")" + Uuid(random_) + R"(","$is_identified":)" +
      (random_() % 2 ? "true" : "false") +
      R"(,"$active_feature_flags":["beta-dashboard","new-onboarding"],)" +
      R"("$feature/beta-dashboard":true,"utm_source":"newsletter","utm_medium":"email",)" +
      R"("utm_campaign":"winter-)" + std::to_string(random_() % 20) +
      R"(","plan":"pro","revenue":)" + std::to_string((random_() % 100000) / 100.0) +
      R"(,"cart_items":)" + std::to_string(random_() % 12) +
      R"(,"$geoip_city_name":"Lisbon","$geoip_country_code":"PT","$geoip_latitude":38.7223,)" +
      R"("$geoip_longitude":-9.1393,"token":"phc_)" + std::to_string(random_() % 1000000) +
      R"("},"person_id":")" + Uuid(random_) + R"(","elements_chain":"a.nav-link:)" +
      R"(attr__href=\"/pricing\"nth-child=\"2\";nav.header:nth-child=\"1\";body:nth-child=\"1\""})";
  return e;
}

}  // namespace weir::bench
