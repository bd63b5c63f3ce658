// A session's time zone (PostgreSQL's TimeZone setting): an IANA zone of the system's time zone
// database (`$TZDIR`, else /usr/share/zoneinfo: the files Debian's PostgreSQL reads too), found
// by name case-insensitively as PostgreSQL does, and its UTC offset at any instant (through
// Arrow's copy of Howard Hinnant's tz library, which reads those files).
//
// Threading: Find may be called from any thread; a TimeZone is immutable and shareable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace arrow_vendored::date {
class time_zone;
}

namespace weir::serve {

class TimeZone {
 public:
  // The zone called `name` (any case): its canonical spelling ("america/new_york" is
  // "America/New_York"). 22023 (PostgreSQL's invalid_parameter_value) when there is none.
  static Result<TimeZone> Find(std::string_view name);
  static const TimeZone& Utc();

  const std::string& name() const { return name_; }
  // Seconds east of UTC at `utc_seconds` (seconds since 1970-01-01 UTC).
  int32_t OffsetAt(int64_t utc_seconds) const;

 private:
  TimeZone(std::string name, const arrow_vendored::date::time_zone* zone)
      : name_(std::move(name)), zone_(zone) {}
  std::string name_;
  const arrow_vendored::date::time_zone* zone_;  // owned by the process-wide database
};

}  // namespace weir::serve
