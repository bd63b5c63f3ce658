#include "serve/session/session_settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "base/sql_quote.h"
#include "base/text.h"
#include "serve/compat/settings.h"
#include "serve/session/commands.h"

namespace weir::serve {
namespace {

Status InvalidValue(std::string_view name, std::string_view value, std::string_view hint = "") {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22023",
                         fmt::format("invalid value for parameter \"{}\": \"{}\"{}", name, value,
                                     hint.empty() ? std::string() : fmt::format(" ({})", hint)));
}

// PostgreSQL 15's GUC_REPORT settings among ours: sent in ParameterStatus when they change.
constexpr std::string_view kReported[] = {"application_name",
                                          "client_encoding",
                                          "DateStyle",
                                          "integer_datetimes",
                                          "IntervalStyle",
                                          "is_superuser",
                                          "server_encoding",
                                          "server_version",
                                          "standard_conforming_strings",
                                          "TimeZone",
                                          "default_transaction_read_only"};

bool IsDuration(const std::string& lower) {
  return lower == "statement_timeout" || lower == "idle_session_timeout" ||
         lower == "idle_in_transaction_session_timeout" || lower == "lock_timeout";
}

// The enum settings: their values, lower case.
const std::vector<std::string_view>* EnumValues(const std::string& lower) {
  static const std::map<std::string, std::vector<std::string_view>> kEnums = {
      {"client_min_messages",
       {"debug5", "debug4", "debug3", "debug2", "debug1", "debug", "log", "notice", "warning",
        "error"}},
      {"default_transaction_isolation",
       {"serializable", "repeatable read", "read committed", "read uncommitted"}},
      {"transaction_isolation",
       {"serializable", "repeatable read", "read committed", "read uncommitted"}},
      {"synchronous_commit", {"local", "remote_write", "remote_apply", "on", "off"}},
      {"bytea_output", {"escape", "hex"}},
      {"IntervalStyle", {"postgres", "postgres_verbose", "sql_standard", "iso_8601"}},
  };
  auto found = kEnums.find(lower);
  if (found == kEnums.end()) found = kEnums.find(lower == "intervalstyle" ? "IntervalStyle" : "");
  return found != kEnums.end() ? &found->second : nullptr;
}

// parse_bool: on/off, true/false, yes/no, 1/0 and their unambiguous prefixes.
std::optional<bool> ParseBool(std::string_view text) {
  const std::string v = ToLower(std::string(TrimSpace(text)));
  if (v.empty()) return std::nullopt;
  const auto prefix_of = [&](std::string_view word, size_t min) {
    return v.size() >= min && v.size() <= word.size() && word.substr(0, v.size()) == v;
  };
  if (prefix_of("true", 1) || prefix_of("yes", 1) || v == "on" || v == "1") return true;
  if (prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || v == "0") {
    return false;
  }
  return std::nullopt;
}

// quote_identifier: what search_path shows for a name given as a string.
std::string QuoteIdentifierIfNeeded(const std::string& name) {
  bool plain =
      !name.empty() && (std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    plain = plain && (std::islower(static_cast<unsigned char>(c)) ||
                      std::isdigit(static_cast<unsigned char>(c)) || c == '_');
  }
  if (plain) return name;
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The schema names of a search_path value ("\"$user\", public" -> {"$user", "public"}).
std::vector<std::string> SearchPathNames(std::string_view value) {
  std::vector<std::string> names;
  std::string current;
  bool quoted = false;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (quoted) {
      if (c == '"' && i + 1 < value.size() && value[i + 1] == '"') {
        current += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        current += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      names.push_back(current);
      current.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (!current.empty() || !names.empty()) names.push_back(current);
  return names;
}

// The DuckDB statements that make DuckDB's search path PostgreSQL's: public is the lake's main;
// "$user" and pg_catalog have no DuckDB counterpart (the compatibility catalog is always
// searched); schemas that do not exist are left out (DuckDB refuses them, PostgreSQL skips
// them when it looks names up).
std::string DuckDbSearchPathSql(std::string_view value) {
  std::string list;
  for (const std::string& schema : SearchPathNames(value)) {
    if (schema.empty() || schema == "$user" || schema == "pg_catalog") continue;
    list += (list.empty() ? "" : ", ") +
            QuoteLiteral(schema == "public" ? std::string("main") : schema);
  }
  return "SET VARIABLE weir_search_path = (SELECT coalesce(string_agg(s, ',' ORDER BY o), "
         "'main') FROM unnest([" +
         list +
         "]::VARCHAR[]) WITH ORDINALITY t(s, o) WHERE s IN (SELECT schema_name FROM "
         "duckdb_schemas() WHERE database_name = 'lake')); "
         "SET search_path = getvariable('weir_search_path'); ";
}

Result<std::string> CanonicalDateStyle(const std::vector<std::string>& values) {
  std::string output = "ISO";
  std::string order = "MDY";
  for (const std::string& value : values) {
    std::string token;
    const std::string text = value + ",";
    for (char c : text) {
      if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) {
        token += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        continue;
      }
      if (token.empty()) continue;
      if (token == "ISO") {
        output = "ISO";
      } else if (token == "SQL" || token == "POSTGRES" || token == "GERMAN") {
        return Unsupported(fmt::format(
            "DateStyle \"{}\" is not supported: weir serve writes dates and times in the ISO "
            "style only (\"ISO, MDY\", \"ISO, DMY\" or \"ISO, YMD\")",
            value));
      } else if (token == "YMD") {
        order = "YMD";
      } else if (token == "DMY" || token == "EURO" || token == "EUROPEAN") {
        order = "DMY";
      } else if (token == "MDY" || token == "US" || token == "NONEURO" || token == "NONEUROPEAN") {
        order = "MDY";
      } else if (token != "DEFAULT") {
        return InvalidValue("DateStyle", value, "unrecognized key word");
      }
      token.clear();
    }
  }
  return output + ", " + order;
}

Result<std::string> CanonicalEncoding(const std::string& value) {
  std::string key;
  for (char c : value) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (key == "utf8" || key == "unicode") return std::string("UTF8");
  if (key == "sqlascii") return std::string("SQL_ASCII");  // bytes pass unchanged, as in PG
  static const char* kKnown[] = {"latin1", "latin2",  "latin9",  "win1252", "win1251",  "euc_jp",
                                 "sjis",   "gbk",     "big5",    "koi8r",   "iso88591", "iso885915",
                                 "euckr",  "gb18030", "win1250", "win866",  "koi8u",    "eucjp"};
  for (const char* known : kKnown) {
    std::string plain;
    for (const char* p = known; *p; ++p) {
      if (*p != '_') plain += *p;
    }
    if (key == plain) {
      return Unsupported(fmt::format(
          "conversion between {} and UTF8 is not supported (weir serve speaks UTF8 only)", value));
    }
  }
  return InvalidValue("client_encoding", value);
}

// PostgreSQL 15 keeps application_name to printable ASCII ('?' for the rest; pg_stat_activity
// shows its first 63 bytes).
std::string CleanApplicationName(std::string_view value) {
  std::string out;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte >= 32 && byte <= 126 ? c : '?';
  }
  return out;
}

}  // namespace

std::string ShowMillis(int64_t millis) {
  if (millis == 0) return "0";
  static const std::pair<int64_t, const char*> kUnits[] = {
      {86400000, "d"}, {3600000, "h"}, {60000, "min"}, {1000, "s"}};
  for (const auto& [scale, unit] : kUnits) {
    if (millis % scale == 0) return fmt::format("{}{}", millis / scale, unit);
  }
  return fmt::format("{}ms", millis);
}

SessionSettings::SessionSettings(std::map<std::string, std::string> boot, Apply apply)
    : apply_(std::move(apply)) {
  for (const compat::PgSetting& setting : compat::PgSettings()) {
    const std::string lower = ToLower(std::string(setting.name));
    std::string value(setting.value);
    if (auto found = boot.find(lower); found != boot.end()) value = found->second;
    entries_[lower] = Entry{value, value, value};
  }
}

bool SessionSettings::Owns(std::string_view name) { return compat::FindPgSetting(name) != nullptr; }

Result<std::string> SessionSettings::Canonical(const std::string& lower,
                                               const std::vector<std::string>& values,
                                               const std::vector<bool>& list_quoted) {
  const compat::PgSetting* setting = compat::FindPgSetting(lower);
  const std::string name(setting->name);
  if (!setting->settable) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "55P02",
                           fmt::format("parameter \"{}\" cannot be changed", name));
  }
  const bool list = lower == "datestyle" || lower == "search_path";
  if (values.size() != 1 && !list) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42601",
                           fmt::format("SET {} takes only one argument", name));
  }
  if (lower == "search_path") {
    std::string path;
    for (size_t i = 0; i < values.size(); ++i) {
      const bool quote = i < list_quoted.size() ? list_quoted[i] : true;
      path += (path.empty() ? "" : ", ") + (quote ? QuoteIdentifierIfNeeded(values[i]) : values[i]);
    }
    return path;
  }
  if (lower == "datestyle") return CanonicalDateStyle(values);
  const std::string& value = values[0];
  if (lower == "timezone") {
    WEIR_ASSIGN_OR_RAISE(TimeZone zone, TimeZone::Find(TrimSpace(value)));
    return zone.name();
  }
  if (lower == "client_encoding") return CanonicalEncoding(value);
  if (lower == "application_name") return CleanApplicationName(value);
  if (IsDuration(lower)) {
    WEIR_ASSIGN_OR_RAISE(int64_t millis, ParseDurationMillis(name, value));
    return ShowMillis(millis);
  }
  if (lower == "extra_float_digits") {
    const std::string text(TrimSpace(value));
    int digits = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), digits);
    if (ec != std::errc() || end != text.data() + text.size()) return InvalidValue(name, value);
    if (digits < -15 || digits > 3) {
      return InvalidValue(name, value, "the valid range is -15 .. 3");
    }
    return std::to_string(digits);
  }
  if (setting->vartype == "bool") {
    const auto parsed = ParseBool(value);
    if (!parsed) {
      return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22023",
                             fmt::format("parameter \"{}\" requires a Boolean value", name));
    }
    if (lower == "standard_conforming_strings" && !*parsed) {
      return Unsupported("standard_conforming_strings cannot be turned off in weir serve");
    }
    return std::string(*parsed ? "on" : "off");
  }
  if (const auto* allowed = EnumValues(lower)) {
    const std::string v = ToLower(std::string(TrimSpace(value)));
    std::string list_text;
    for (std::string_view option : *allowed) {
      list_text += (list_text.empty() ? "" : ", ") + std::string(option);
      if (option == v) {
        if (lower == "intervalstyle" && v != "postgres") {
          return Unsupported(fmt::format(
              "IntervalStyle \"{}\" is not supported: weir serve writes intervals in the "
              "postgres style only",
              value));
        }
        if (lower == "bytea_output" && v != "hex") {
          return Unsupported("bytea_output \"escape\" is not supported: bytea is sent as hex");
        }
        return v;
      }
    }
    return InvalidValue(name, value, "available values: " + list_text);
  }
  return value;
}

Status SessionSettings::Enact(const std::string& lower, const std::string& value) {
  Entry& entry = entries_[lower];
  if (apply_ && value != entry.current) {
    std::string sql;
    if (lower == "timezone") {
      sql = "SET TimeZone = " + QuoteLiteral(value) + "; ";
    } else if (lower == "search_path") {
      sql = DuckDbSearchPathSql(value);
    }
    sql += "SET VARIABLE pg_" + lower + " = " + QuoteLiteral(value);
    Status applied = apply_(sql);
    if (!applied.ok()) {
      // DuckDB's ICU may not know a zone of the system's database (or the reverse).
      if (lower == "timezone") return InvalidValue("TimeZone", value, applied.message());
      return applied;
    }
  }
  if (lower == "timezone") {
    auto zone = TimeZone::Find(value);
    zone_ = zone.ok() ? *zone : TimeZone::Utc();
  } else if (lower == "extra_float_digits") {
    extra_float_digits_ = std::stoi(value);
  }
  entry.current = value;
  return Status::OK();
}

void SessionSettings::Revert(const std::string& lower, const std::string& value) {
  (void)Enact(lower, value);  // a value that was in effect before is valid
}

Status SessionSettings::ApplyStartup(const std::map<std::string, std::string>& parameters) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [name, value] : parameters) {
    if (name == "options") continue;
    pairs.emplace_back(name, value);
  }
  if (auto options = parameters.find("options"); options != parameters.end()) {
    // "-c name=value --name=value", backslash escaping a space (libpq's PGOPTIONS syntax).
    std::vector<std::string> words;
    std::string word;
    const std::string& text = options->second;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        word += text[++i];
      } else if (std::isspace(static_cast<unsigned char>(text[i]))) {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
      } else {
        word += text[i];
      }
    }
    if (!word.empty()) words.push_back(std::move(word));
    for (size_t i = 0; i < words.size(); ++i) {
      std::string assignment;
      if (words[i] == "-c" && i + 1 < words.size()) {
        assignment = words[++i];
      } else if (words[i].starts_with("-c")) {
        assignment = words[i].substr(2);
      } else if (words[i].starts_with("--")) {
        assignment = words[i].substr(2);
      } else {
        continue;
      }
      const size_t equals = assignment.find('=');
      if (equals == std::string::npos) {
        return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42601",
                               fmt::format("-c {} requires a value", assignment));
      }
      std::string name = assignment.substr(0, equals);
      std::replace(name.begin(), name.end(), '-', '_');
      pairs.emplace_back(name, assignment.substr(equals + 1));
    }
  }
  for (const auto& [name, value] : pairs) {
    if (!Owns(name)) continue;
    const std::string lower = ToLower(name);
    // libpq sends the parts of a list setting (DateStyle) as one string.
    WEIR_ASSIGN_OR_RAISE(std::string canonical, Canonical(lower, {value}, {false}));
    if (lower == "search_path") canonical = value;
    Entry& entry = entries_[lower];
    entry.reset = entry.session = canonical;
    WEIR_RETURN_NOT_OK(Enact(lower, canonical));
  }
  return Status::OK();
}

Status SessionSettings::ApplyAll() {
  for (auto& [lower, entry] : entries_) {
    const compat::PgSetting* setting = compat::FindPgSetting(lower);
    if (entry.current == setting->value) continue;
    const std::string value = entry.current;
    entry.current = std::string(setting->value);  // so Enact applies it
    WEIR_RETURN_NOT_OK(Enact(lower, value));
  }
  return Status::OK();
}

Status SessionSettings::Set(std::string_view name, const std::vector<std::string>& values,
                            bool local, bool in_transaction, const std::vector<bool>& list_quoted) {
  const std::string lower = ToLower(std::string(name));
  if (!Owns(lower)) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42704",
                           fmt::format("unrecognized configuration parameter \"{}\"", name));
  }
  WEIR_ASSIGN_OR_RAISE(const std::string value, Canonical(lower, values, list_quoted));
  if (local && !in_transaction) return Status::OK();  // the caller warns
  if (in_transaction) BeginTransaction();
  WEIR_RETURN_NOT_OK(Enact(lower, value));
  if (!local) entries_[lower].session = value;
  return Status::OK();
}

Status SessionSettings::Reset(std::string_view name, bool local, bool in_transaction) {
  const std::string lower = ToLower(std::string(name));
  const compat::PgSetting* setting = compat::FindPgSetting(lower);
  if (setting == nullptr) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "42704",
                           fmt::format("unrecognized configuration parameter \"{}\"", name));
  }
  if (!setting->settable) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "55P02",
                           fmt::format("parameter \"{}\" cannot be changed", setting->name));
  }
  if (local && !in_transaction) return Status::OK();
  if (in_transaction) BeginTransaction();
  Entry& entry = entries_[lower];
  const std::string value = entry.reset;
  WEIR_RETURN_NOT_OK(Enact(lower, value));
  if (!local) entries_[lower].session = value;
  return Status::OK();
}

void SessionSettings::ResetAll(bool in_transaction) {
  if (in_transaction) BeginTransaction();
  for (auto& [lower, entry] : entries_) {
    if (!compat::FindPgSetting(lower)->settable) continue;
    const std::string value = entry.reset;
    Revert(lower, value);
    entries_[lower].session = value;
  }
}

void SessionSettings::BeginTransaction() {
  if (!before_transaction_) before_transaction_ = entries_;
}

void SessionSettings::EndTransaction(bool committed) {
  std::map<std::string, Entry> before =
      before_transaction_ ? std::move(*before_transaction_) : entries_;
  before_transaction_.reset();
  for (auto& [lower, entry] : entries_) {
    const std::string target = committed ? entry.session : before[lower].session;
    entry.session = target;
    if (entry.current != target) Revert(lower, target);
  }
}

std::string SessionSettings::Get(std::string_view name) const {
  auto found = entries_.find(ToLower(std::string(name)));
  return found != entries_.end() ? found->second.current : "";
}

int64_t SessionSettings::Millis(std::string_view name) const {
  auto millis = ParseDurationMillis(std::string(name), Get(name));
  return millis.ok() ? *millis : 0;
}

std::vector<std::pair<std::string, std::string>> SessionSettings::TakeReports() {
  std::vector<std::pair<std::string, std::string>> reports;
  for (std::string_view name : kReported) {
    const std::string value = Get(name);
    auto last = reported_.find(std::string(name));
    if (last != reported_.end() && last->second == value) continue;
    reported_[std::string(name)] = value;
    reports.emplace_back(std::string(name), value);
  }
  return reports;
}

}  // namespace weir::serve
