// PostgreSQL's session settings that clients set and read (application_name, TimeZone,
// extra_float_digits, search_path, transaction_isolation, ...): their table (defaults, types).
// serve's SessionSettings owns their values and keeps each in the session's DuckDB variable
// `pg_<name>`, which SHOW, current_setting() and pg_settings read (SettingValueSql);
// SetStatementSql is left to SET TRANSACTION / SET SESSION CHARACTERISTICS.
//
// Threading: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::serve::compat {

struct PgSetting {
  std::string_view name;     // canonical spelling, e.g. "DateStyle"
  std::string_view value;    // PostgreSQL's value when the session has not set it
  std::string_view vartype;  // pg_settings.vartype
  bool settable;             // false: SET is left to DuckDB, which refuses it
};
const std::vector<PgSetting>& PgSettings();

// The setting named `name` (case-insensitive), if weir answers it.
const PgSetting* FindPgSetting(std::string_view name);

// A SQL expression (VARCHAR) for the session's current value of `setting`.
std::string SettingValueSql(const PgSetting& setting);

// `SET name = values` (values already as text; empty for SET ... TO DEFAULT / RESET) as the
// DuckDB statement that does it; nullopt when the setting is not one weir handles.
std::optional<std::string> SetStatementSql(std::string_view name,
                                           const std::vector<std::string>& values, bool reset);

// `SHOW name` as a DuckDB query; nullopt when the setting is not one weir answers (DuckDB's
// own SHOW, such as SHOW TABLES, then runs).
std::optional<std::string> ShowStatementSql(std::string_view name);

}  // namespace weir::serve::compat
