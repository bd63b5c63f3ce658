#include "serve/compat/settings.h"

#include "base/sql_quote.h"
#include "base/text.h"

namespace weir::serve::compat {
namespace {

std::string VariableName(std::string_view name) { return "pg_" + ToLower(std::string(name)); }

// DuckDB's search path ("lake.main,other") in PostgreSQL's spelling ("public, other").
constexpr std::string_view kSearchPathSql =
    "CASE WHEN current_setting('search_path') IN ('', 'lake.main', 'main') "
    "THEN '\"$user\", public' ELSE array_to_string(list_transform("
    "string_split(current_setting('search_path'), ','), "
    "s -> CASE regexp_replace(trim(s), '^lake\\.', '') WHEN 'main' THEN 'public' "
    "ELSE regexp_replace(trim(s), '^lake\\.', '') END), ', ') END";

}  // namespace

const std::vector<PgSetting>& PgSettings() {
  static const std::vector<PgSetting> settings = {
      {"application_name", "", "string", true},
      {"block_size", "8192", "integer", false},
      {"bytea_output", "hex", "enum", true},
      {"client_encoding", "UTF8", "string", true},
      {"client_min_messages", "notice", "enum", true},
      {"DateStyle", "ISO, MDY", "string", true},
      {"default_table_access_method", "heap", "string", true},
      {"default_transaction_deferrable", "off", "bool", true},
      {"default_transaction_isolation", "read committed", "enum", true},
      {"default_transaction_read_only", "off", "bool", true},
      {"escape_string_warning", "on", "bool", true},
      {"extra_float_digits", "1", "integer", true},
      {"idle_in_transaction_session_timeout", "0", "integer", true},
      {"idle_session_timeout", "0", "integer", true},
      {"integer_datetimes", "on", "bool", false},
      {"IntervalStyle", "postgres", "enum", true},
      {"is_superuser", "off", "bool", false},
      {"jit", "off", "bool", true},
      {"lc_collate", "C", "string", false},
      {"lc_ctype", "C", "string", false},
      {"lc_messages", "C", "string", true},
      {"lc_monetary", "C", "string", true},
      {"lc_numeric", "C", "string", true},
      {"lc_time", "C", "string", true},
      {"lock_timeout", "0", "integer", true},
      {"max_function_args", "100", "integer", false},
      {"max_identifier_length", "63", "integer", false},
      {"max_index_keys", "32", "integer", false},
      {"row_security", "on", "bool", true},
      {"search_path", "\"$user\", public", "string", true},
      {"server_encoding", "UTF8", "string", false},
      {"server_version", "15.0 (weir)", "string", false},
      {"server_version_num", "150000", "integer", false},
      {"standard_conforming_strings", "on", "bool", true},
      {"statement_timeout", "0", "integer", true},
      {"synchronous_commit", "on", "enum", true},
      {"TimeZone", "UTC", "string", true},
      {"transaction_deferrable", "off", "bool", true},
      {"transaction_isolation", "read committed", "enum", true},
      {"transaction_read_only", "off", "bool", true},
  };
  return settings;
}

const PgSetting* FindPgSetting(std::string_view name) {
  const std::string wanted = ToLower(std::string(name));
  for (const PgSetting& setting : PgSettings()) {
    if (ToLower(std::string(setting.name)) == wanted) return &setting;
  }
  return nullptr;
}

std::string SettingValueSql(const PgSetting& setting) {
  const std::string lower = ToLower(std::string(setting.name));
  if (lower == "search_path") {
    return "coalesce(CAST(getvariable('pg_search_path') AS VARCHAR), " +
           std::string(kSearchPathSql) + ")";
  }
  std::string fallback = QuoteLiteral(setting.value);
  if (lower == "transaction_isolation") {
    fallback = "coalesce(getvariable('pg_default_transaction_isolation'), " + fallback + ")";
  }
  if (!setting.settable) return fallback;
  return "coalesce(CAST(getvariable(" + QuoteLiteral(VariableName(setting.name)) +
         ") AS VARCHAR), " + fallback + ")";
}

std::optional<std::string> SetStatementSql(std::string_view name,
                                           const std::vector<std::string>& values, bool reset) {
  const PgSetting* setting = FindPgSetting(name);
  if (setting == nullptr || !setting->settable) return std::nullopt;
  if (ToLower(std::string(name)) == "search_path") {
    // DuckDB resolves names through its own search path: PostgreSQL's public is the lake's
    // main; "$user" and pg_catalog have no DuckDB counterpart (pg_catalog is always searched).
    std::string path;
    for (const std::string& value : values) {
      const std::string schema = ToLower(value);
      if (schema == "$user" || schema == "pg_catalog") continue;
      path += (path.empty() ? "" : ",") + (schema == "public" ? std::string("main") : value);
    }
    if (reset || path.empty()) path = "main";
    return "SET search_path = " + QuoteLiteral(path);
  }
  const std::string variable = VariableName(setting->name);  // [a-z_]: a plain identifier
  if (reset) return "RESET VARIABLE " + variable;
  std::string value;
  for (const std::string& v : values) value += (value.empty() ? "" : ", ") + v;
  return "SET VARIABLE " + variable + " = " + QuoteLiteral(value);
}

std::optional<std::string> ShowStatementSql(std::string_view name) {
  const PgSetting* setting = FindPgSetting(name);
  if (setting == nullptr) return std::nullopt;
  return "SELECT " + SettingValueSql(*setting) + " AS \"" + std::string(setting->name) + "\"";
}

}  // namespace weir::serve::compat
