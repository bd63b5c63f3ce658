// One session's PostgreSQL settings (GUCs): SET, SET LOCAL, RESET, RESET ALL, the startup
// packet's parameters (and its `options`, "-c name=value"), their fate at the end of a
// transaction (SET LOCAL reverts at its end; a rolled-back transaction's SETs revert too), the
// ParameterStatus reports of GUC_REPORT settings, and the effect of each value on DuckDB.
//
// The settings are those of compat::PgSettings(). Values are checked and spelt as PostgreSQL 15
// does; what weir cannot honour is refused (0A000) rather than accepted without effect:
// DateStyle outputs other than ISO, IntervalStyle other than postgres, bytea_output escape,
// standard_conforming_strings off, client encodings other than UTF8 (and its aliases) and
// SQL_ASCII, time zones that are not IANA names (POSIX specs, numeric offsets).
//
// What DuckDB must see is applied through `apply` (DuckDB statements; the TimeZone is DuckDB's
// own session setting, so timestamptz arithmetic, casts and text input follow it; every value
// is also the session variable pg_<name> that SHOW, current_setting() and pg_settings read).
//
// Threading: owned and used by the session's thread only.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "serve/values/time_zone.h"

namespace weir::serve {

class SessionSettings {
 public:
  using Apply = std::function<Status(const std::string& duckdb_sql)>;
  // `boot`: values that replace the table's defaults for this server (statement_timeout, ...).
  explicit SessionSettings(std::map<std::string, std::string> boot = {}, Apply apply = nullptr);
  SessionSettings(SessionSettings&&) = default;
  void set_apply(Apply apply) { apply_ = std::move(apply); }

  // Whether `name` is a setting this object owns (any case).
  static bool Owns(std::string_view name);

  // The startup packet's parameters: each one this object owns is set, and becomes the value
  // RESET returns to; `options` is split into its "-c name=value" / "--name=value" parts.
  // Other names are ignored. An invalid value is its error (the caller makes it FATAL).
  Status ApplyStartup(const std::map<std::string, std::string>& parameters);
  // Makes DuckDB see every value that differs from the table's (after ApplyStartup).
  Status ApplyAll();

  // SET [LOCAL] name TO values (as PostgreSQL's parser gives them: strings, numbers).
  // `in_transaction`: a transaction block is open (SET LOCAL outside one changes nothing; the
  // caller warns). `list_quoted[i]`: values[i] was a string constant (for search_path).
  Status Set(std::string_view name, const std::vector<std::string>& values, bool local,
             bool in_transaction, const std::vector<bool>& list_quoted = {});
  // RESET name / SET name TO DEFAULT (with `local`: SET LOCAL name TO DEFAULT).
  Status Reset(std::string_view name, bool local, bool in_transaction);
  // RESET ALL (also part of DISCARD ALL).
  void ResetAll(bool in_transaction);

  // A transaction block began / ended (committed or rolled back).
  void BeginTransaction();
  void EndTransaction(bool committed);

  // The current value of an owned setting, as SHOW gives it ("" when not owned).
  std::string Get(std::string_view name) const;
  const TimeZone& time_zone() const { return zone_; }
  int extra_float_digits() const { return extra_float_digits_; }
  // A duration setting (statement_timeout, ...) in milliseconds.
  int64_t Millis(std::string_view name) const;

  // The GUC_REPORT settings whose value changed since the last call (every one the first
  // time), in PostgreSQL's spelling, for ParameterStatus messages.
  std::vector<std::pair<std::string, std::string>> TakeReports();

 private:
  struct Entry {
    std::string reset;    // what RESET gives: the table's default, the server's, the startup's
    std::string session;  // the value outside SET LOCAL
    std::string current;  // the value in effect
  };
  // The canonical value of `name` for `values`, or the error PostgreSQL gives.
  Result<std::string> Canonical(const std::string& lower, const std::vector<std::string>& values,
                                const std::vector<bool>& list_quoted);
  // Puts `value` into effect for `lower` (DuckDB's side first; the entry only when it took).
  Status Enact(const std::string& lower, const std::string& value);
  void Revert(const std::string& lower, const std::string& value);

  std::map<std::string, Entry> entries_;  // by lower-case name
  std::optional<std::map<std::string, Entry>> before_transaction_;
  std::map<std::string, std::string> reported_;  // by canonical name
  Apply apply_;
  TimeZone zone_ = TimeZone::Utc();
  int extra_float_digits_ = 1;
};

// A duration in milliseconds as PostgreSQL shows it: "0", "250ms", "5s", "1min", "2h", "1d".
std::string ShowMillis(int64_t millis);

}  // namespace weir::serve
