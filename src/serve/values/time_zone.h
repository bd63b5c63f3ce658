// A session's time zone (PostgreSQL's TimeZone setting): an IANA zone of the system's time zone
// database (`$TZDIR`, else /usr/share/zoneinfo: the files Debian's PostgreSQL reads too), found
// by name case-insensitively as PostgreSQL does, and its UTC offset at any instant: the zone
// file's transitions (TZif, RFC 8536), then its POSIX TZ rule for the instants after the last
// one, as PostgreSQL computes them.
//
// Threading: Find may be called from any thread (loaded zones are cached process-wide, under a
// mutex); a TimeZone is immutable and cheap to copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace weir::serve {

class TimeZone {
 public:
  struct Data;
  // The zone called `name` (any case): its canonical spelling ("america/new_york" is
  // "America/New_York"). 22023 (PostgreSQL's invalid_parameter_value) when there is none.
  static Result<TimeZone> Find(std::string_view name);
  static const TimeZone& Utc();
  // A zone from TZif bytes (the contents of a zone file), for tests; 22023 when malformed.
  static Result<TimeZone> FromTzif(std::string name, std::string_view bytes);

  const std::string& name() const { return name_; }
  // Seconds east of UTC at `utc_seconds` (seconds since 1970-01-01 UTC).
  int32_t OffsetAt(int64_t utc_seconds) const;

 private:
  TimeZone(std::string name, std::shared_ptr<const Data> data)
      : name_(std::move(name)), data_(std::move(data)) {}
  std::string name_;
  std::shared_ptr<const Data> data_;  // null: UTC
};

}  // namespace weir::serve
