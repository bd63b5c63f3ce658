#include "serve/time_zone.h"

#include <arrow/vendored/datetime.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "base/text.h"

namespace weir::serve {
namespace {

std::filesystem::path ZoneDirectory() {
  const char* dir = std::getenv("TZDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo";
}

Status InvalidZone(std::string_view name) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22023",
                         fmt::format("invalid value for parameter \"TimeZone\": \"{}\"", name));
}

// The canonical spelling of `name` under the zone directory, each component matched without
// regard to case (as PostgreSQL's pg_tzset does); "" when no such file.
std::string CanonicalName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '/') return "";
  std::filesystem::path dir = ZoneDirectory();
  std::string canonical;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t slash = std::min(name.find('/', start), name.size());
    const std::string part = ToLower(std::string(name.substr(start, slash - start)));
    if (part.empty() || part == "." || part == "..") return "";
    std::string found;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string file = entry.path().filename().string();
      if (ToLower(file) == part) {
        found = file;
        break;
      }
    }
    if (ec || found.empty()) return "";
    canonical += (canonical.empty() ? "" : "/") + found;
    dir /= found;
    start = slash + 1;
  }
  std::error_code ec;
  return std::filesystem::is_regular_file(dir, ec) ? canonical : "";
}

}  // namespace

Result<TimeZone> TimeZone::Find(std::string_view name) {
  const std::string canonical = CanonicalName(name);
  if (canonical.empty()) return InvalidZone(name);
  try {
    return TimeZone(canonical, arrow_vendored::date::locate_zone(canonical));
  } catch (const std::exception&) {
    return InvalidZone(name);  // a file of the directory that is no zone (zone1970.tab, ...)
  }
}

const TimeZone& TimeZone::Utc() {
  static const TimeZone utc = [] {
    auto found = Find("UTC");
    return found.ok() ? *found : TimeZone("UTC", nullptr);
  }();
  return utc;
}

int32_t TimeZone::OffsetAt(int64_t utc_seconds) const {
  if (zone_ == nullptr) return 0;
  const auto info = zone_->get_info(std::chrono::sys_seconds(std::chrono::seconds(utc_seconds)));
  return static_cast<int32_t>(info.offset.count());
}

}  // namespace weir::serve
