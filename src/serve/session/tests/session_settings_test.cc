// SessionSettings alone: values spelt as PostgreSQL 15 spells them, the refusals, SET LOCAL and
// rollbacks, startup parameters, ParameterStatus reports, and what reaches DuckDB.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "serve/session/session_settings.h"

namespace weir::serve {
namespace {

std::string SqlState(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail != nullptr ? detail->code() : "";
}

TEST(SessionSettings, ValuesAreCheckedAndSpeltAsPostgresqlDoes) {
  SessionSettings settings;
  ASSERT_TRUE(settings.Set("TIMEZONE", {"america/new_york"}, false, false).ok());
  EXPECT_EQ(settings.Get("timezone"), "America/New_York");
  EXPECT_EQ(settings.time_zone().name(), "America/New_York");
  ASSERT_TRUE(settings.Set("datestyle", {"dmy"}, false, false).ok());
  EXPECT_EQ(settings.Get("DateStyle"), "ISO, DMY");
  ASSERT_TRUE(settings.Set("datestyle", {"iso", "ymd"}, false, false).ok());
  EXPECT_EQ(settings.Get("DateStyle"), "ISO, YMD");
  ASSERT_TRUE(settings.Set("client_encoding", {"unicode"}, false, false).ok());
  EXPECT_EQ(settings.Get("client_encoding"), "UTF8");
  ASSERT_TRUE(settings.Set("jit", {"YES"}, false, false).ok());
  EXPECT_EQ(settings.Get("jit"), "on");
  ASSERT_TRUE(settings.Set("statement_timeout", {"90000"}, false, false).ok());
  EXPECT_EQ(settings.Get("statement_timeout"), "90s");
  EXPECT_EQ(settings.Millis("statement_timeout"), 90000);
  ASSERT_TRUE(
      settings.Set("search_path", {"public", "My Schema"}, false, false, {false, true}).ok());
  EXPECT_EQ(settings.Get("search_path"), "public, \"My Schema\"");
  ASSERT_TRUE(
      settings.Set("application_name", {std::string(70, 'a') + "\xc3\xa9"}, false, false).ok());
  EXPECT_EQ(settings.Get("application_name"), std::string(70, 'a') + "??");
  ASSERT_TRUE(settings.Set("extra_float_digits", {"-15"}, false, false).ok());
  EXPECT_EQ(settings.extra_float_digits(), -15);

  for (const auto& [name, value, sqlstate] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"TimeZone", "Nowhere/Bogus", "22023"},
           {"DateStyle", "bogus", "22023"},
           {"DateStyle", "SQL, DMY", "0A000"},
           {"IntervalStyle", "iso_8601", "0A000"},
           {"IntervalStyle", "bogus", "22023"},
           {"client_encoding", "LATIN1", "0A000"},
           {"client_encoding", "bogus", "22023"},
           {"extra_float_digits", "4", "22023"},
           {"extra_float_digits", "x", "22023"},
           {"jit", "maybe", "22023"},
           {"statement_timeout", "soon", "22023"},
           {"standard_conforming_strings", "off", "0A000"},
           {"server_version", "1", "55P02"},
           {"no_such_setting", "1", "42704"}}) {
    EXPECT_EQ(SqlState(settings.Set(name, {value}, false, false)), sqlstate) << name << value;
  }
  EXPECT_EQ(SqlState(settings.Set("TimeZone", {"UTC", "UTC"}, false, false)), "42601");
}

TEST(SessionSettings, SetLocalEndsWithItsTransactionAndRollbacksUndoSets) {
  std::vector<std::string> applied;
  SessionSettings settings({}, [&](const std::string& sql) {
    applied.push_back(sql);
    return Status::OK();
  });
  ASSERT_TRUE(settings.Set("TimeZone", {"Asia/Kolkata"}, true, false).ok());
  EXPECT_EQ(settings.Get("TimeZone"), "UTC");  // outside a block: nothing (the caller warns)
  EXPECT_TRUE(applied.empty());
  ASSERT_TRUE(settings.Set("TimeZone", {"Asia/Kolkata"}, true, true).ok());
  EXPECT_EQ(settings.Get("TimeZone"), "Asia/Kolkata");
  EXPECT_EQ(applied.back(),
            "SET TimeZone = 'Asia/Kolkata'; SET VARIABLE pg_timezone = 'Asia/Kolkata'");
  settings.EndTransaction(true);
  EXPECT_EQ(settings.Get("TimeZone"), "UTC");
  EXPECT_EQ(applied.back(), "SET TimeZone = 'UTC'; SET VARIABLE pg_timezone = 'UTC'");

  ASSERT_TRUE(settings.Set("TimeZone", {"America/New_York"}, false, true).ok());
  settings.EndTransaction(false);
  EXPECT_EQ(settings.Get("TimeZone"), "UTC");

  ASSERT_TRUE(settings.Set("TimeZone", {"America/New_York"}, false, true).ok());
  ASSERT_TRUE(settings.Set("TimeZone", {"Asia/Kolkata"}, true, true).ok());
  settings.EndTransaction(true);
  EXPECT_EQ(settings.Get("TimeZone"), "America/New_York");
  settings.ResetAll(false);
  EXPECT_EQ(settings.Get("TimeZone"), "UTC");
}

TEST(SessionSettings, StartupParametersBecomeWhatResetReturnsTo) {
  SessionSettings settings(std::map<std::string, std::string>{{"statement_timeout", "5s"}});
  ASSERT_TRUE(
      settings
          .ApplyStartup({{"user", "weir"},
                         {"TimeZone", "Asia/Kolkata"},
                         {"DateStyle", "ISO"},
                         {"options", "-c extra_float_digits=0 --application-name=my\\ app"}})
          .ok());
  EXPECT_EQ(settings.Get("TimeZone"), "Asia/Kolkata");
  EXPECT_EQ(settings.Get("DateStyle"), "ISO, MDY");
  EXPECT_EQ(settings.Get("extra_float_digits"), "0");
  EXPECT_EQ(settings.Get("application_name"), "my app");
  EXPECT_EQ(settings.Get("statement_timeout"), "5s");
  ASSERT_TRUE(settings.Set("TimeZone", {"UTC"}, false, false).ok());
  ASSERT_TRUE(settings.Reset("TimeZone", false, false).ok());
  EXPECT_EQ(settings.Get("TimeZone"), "Asia/Kolkata");
  EXPECT_EQ(SqlState(SessionSettings().ApplyStartup({{"TimeZone", "Nowhere"}})), "22023");
}

TEST(SessionSettings, ReportsTheReportedSettingsOnceAndThenOnlyChanges) {
  SessionSettings settings;
  const auto first = settings.TakeReports();
  ASSERT_EQ(first.size(), 11u);
  EXPECT_EQ(first[0], std::make_pair(std::string("application_name"), std::string()));
  EXPECT_TRUE(settings.TakeReports().empty());
  ASSERT_TRUE(settings.Set("TimeZone", {"Asia/Kolkata"}, false, false).ok());
  ASSERT_TRUE(settings.Set("jit", {"on"}, false, false).ok());  // not reported
  ASSERT_TRUE(settings.Set("TimeZone", {"America/New_York"}, false, false).ok());
  EXPECT_EQ(settings.TakeReports(),
            (std::vector<std::pair<std::string, std::string>>{{"TimeZone", "America/New_York"}}));
}

}  // namespace
}  // namespace weir::serve
