// A setting that matters only under another setting's value is never silently ignored: a
// PostgreSQL catalog setting with catalog.kind unset means PostgreSQL; one the deciding setting
// leaves unused stops loading, naming both.
#include <gtest/gtest.h>

#include "config/load.h"
#include "ingest_env.h"

namespace weir::config {
namespace {

using test_env::Env;
using test_env::Load;

std::string ErrorOf(const Env& env) {
  auto loaded = Load(env);
  EXPECT_FALSE(loaded.ok());
  return loaded.ok() ? "" : loaded.status().message();
}

TEST(UnusedSettings, APostgresHostWithTheKindUnsetMeansAPostgresCatalogAndSaysSo) {
  auto loaded = Load({{"WEIR_CATALOG_POSTGRES_HOST", "pg.internal"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const CatalogSettings& catalog = loaded->settings.catalog;
  EXPECT_EQ(catalog.kind, CatalogKind::kPostgres);
  EXPECT_EQ(catalog.postgres_dsn, "host=pg.internal port=5432 dbname=ducklake user=ducklake");
  ASSERT_EQ(loaded->warnings.size(), 1u);
  EXPECT_EQ(loaded->warnings[0],
            "catalog.kind: not set; postgres, implied by catalog.postgres_host (from "
            "WEIR_CATALOG_POSTGRES_HOST)");

  auto dsn = Load({{"WEIR_CATALOG_POSTGRES_DSN", "host=a dbname=b"}});
  ASSERT_TRUE(dsn.ok()) << dsn.status().message();
  EXPECT_EQ(dsn->settings.catalog.kind, CatalogKind::kPostgres);
  EXPECT_EQ(dsn->settings.catalog.postgres_dsn, "host=a dbname=b");
}

TEST(UnusedSettings, APostgresSettingUnderAnExplicitSqliteKindStopsLoadingNamingBoth) {
  const std::string error =
      ErrorOf({{"WEIR_CATALOG_KIND", "sqlite"}, {"WEIR_CATALOG_POSTGRES_HOST", "pg.internal"}});
  EXPECT_NE(error.find("catalog.postgres_host: needs catalog.kind postgres"), std::string::npos)
      << error;
  EXPECT_NE(error.find("but catalog.kind is sqlite (from WEIR_CATALOG_POSTGRES_HOST)"),
            std::string::npos)
      << error;
  // A password alone does not name a server: nothing implies PostgreSQL, so it is refused.
  EXPECT_NE(ErrorOf({{"WEIR_CATALOG_POSTGRES_PASSWORD", "secret"}})
                .find("catalog.postgres_password: needs catalog.kind postgres"),
            std::string::npos);
}

TEST(UnusedSettings, SettingsOfAnotherFormatCatalogOrModeStopLoadingNamingWhatDecides) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"WEIR_CATALOG_KIND", "postgres"},
        {"WEIR_CATALOG_POSTGRES_DSN", "host=a"},
        {"WEIR_CATALOG_SQLITE_PATH", "x.sqlite"}},
       "catalog.sqlite_path: is unused with catalog.kind postgres"},
      {{{"WEIR_ICEBERG_URI", "http://rest:8181"}},
       "iceberg.uri: needs lake.format iceberg, but lake.format is ducklake"},
      {{{"WEIR_LAKE_FORMAT", "iceberg"}, {"WEIR_CATALOG_SQLITE_PATH", "x.sqlite"}},
       "catalog.sqlite_path: is a DuckLake catalog setting, unused with lake.format iceberg"},
      {{{"WEIR_LAKE_FORMAT", "iceberg"}, {"WEIR_ICEBERG_URI", "http://rest:8181"}},
       "iceberg.uri: is a REST catalog setting, unused with iceberg.catalog sql"},
      {{{"WEIR_LAKE_FORMAT", "iceberg"},
        {"WEIR_ICEBERG_CATALOG", "rest"},
        {"WEIR_ICEBERG_URI", "http://rest:8181"},
        {"WEIR_ICEBERG_SQLITE_PATH", "c.db"}},
       "iceberg.sqlite_path: is a SQL catalog setting, unused with iceberg.catalog rest"},
      {{{"WEIR_WAL_DIR", "/var/lib/weir/wal"}},
       "wal.dir: needs ingest.mode wal, but ingest.mode is direct (no WAL is written)"},
  };
  for (const auto& [env, message] : cases) {
    const std::string error = ErrorOf(env);
    EXPECT_NE(error.find(message), std::string::npos) << "want: " << message << "\ngot: " << error;
  }
}

TEST(UnusedSettings, SettingsThatAreUsedLoadWithoutAWord) {
  for (const Env& env : std::vector<Env>{
           {{"WEIR_INGEST_MODE", "wal"}, {"WEIR_WAL_DIR", "/w"}},
           {{"WEIR_LAKE_FORMAT", "iceberg"}, {"WEIR_ICEBERG_SQLITE_PATH", "c.db"}},
           {{"WEIR_LAKE_FORMAT", "iceberg"},
            {"WEIR_ICEBERG_CATALOG", "rest"},
            {"WEIR_ICEBERG_URI", "http://rest:8181"}},
           {{"WEIR_CATALOG_KIND", "postgres"}, {"WEIR_CATALOG_POSTGRES_HOST", "pg"}},
           {{"WEIR_CATALOG_SQLITE_PATH", "lake/catalog.sqlite"}},
       }) {
    auto loaded = Load(env);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_TRUE(loaded->warnings.empty()) << loaded->warnings.front();
  }
}

}  // namespace
}  // namespace weir::config
