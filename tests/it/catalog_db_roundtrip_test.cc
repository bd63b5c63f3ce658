// The catalog databases: libpq against the harness PostgreSQL, and SQLite on a local file.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness_env.h"

namespace weir {
namespace {

struct PgFinish {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
struct PgClear {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResultPtr = std::unique_ptr<PGresult, PgClear>;

PgResultPtr Exec(PGconn* conn, const std::string& sql) {
  return PgResultPtr(PQexec(conn, sql.c_str()));
}

TEST(PostgresRoundTripTest, TypedParametersComeBackIdentical) {
  WEIR_HARNESS_SETTING(dsn, "WEIR_TEST_PG_DSN");
  std::unique_ptr<PGconn, PgFinish> conn(PQconnectdb(dsn.c_str()));
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());

  const std::string table = "it_roundtrip_" + std::to_string(::getpid());
  auto created = Exec(conn.get(), "CREATE TEMP TABLE " + table +
                                      " (id int8 PRIMARY KEY, name text, score float8, "
                                      "flag bool, at timestamptz, blob bytea)");
  ASSERT_EQ(PQresultStatus(created.get()), PGRES_COMMAND_OK) << PQerrorMessage(conn.get());

  const std::string insert = "INSERT INTO " + table + " VALUES ($1, $2, $3, $4, $5, $6)";
  const std::string blob("\x00\x01\xFF quote' \\ end", 17);
  for (int i = 0; i < 100; ++i) {
    const std::string id = std::to_string(i);
    const std::string name = "caf\xC3\xA9 \"" + id + "\"";
    const std::string score = std::to_string(i) + ".5";
    const char* values[6] = {id.c_str(),
                             i % 10 == 0 ? nullptr : name.c_str(),
                             score.c_str(),
                             i % 2 == 0 ? "true" : "false",
                             "2026-11-29 12:34:56.789012+00",
                             blob.data()};
    const int lengths[6] = {0, 0, 0, 0, 0, static_cast<int>(blob.size())};
    const int formats[6] = {0, 0, 0, 0, 0, 1};  // bytea goes in binary
    PgResultPtr inserted(
        PQexecParams(conn.get(), insert.c_str(), 6, nullptr, values, lengths, formats, 0));
    ASSERT_EQ(PQresultStatus(inserted.get()), PGRES_COMMAND_OK) << PQerrorMessage(conn.get());
  }

  auto rows = Exec(conn.get(), "SET TIME ZONE 'UTC'; SELECT id, name, score, flag, at, blob FROM " +
                                   table + " ORDER BY id");
  ASSERT_EQ(PQresultStatus(rows.get()), PGRES_TUPLES_OK) << PQerrorMessage(conn.get());
  ASSERT_EQ(PQntuples(rows.get()), 100);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(std::string(PQgetvalue(rows.get(), i, 0)), std::to_string(i));
    if (i % 10 == 0) {
      EXPECT_TRUE(PQgetisnull(rows.get(), i, 1));
    } else {
      EXPECT_EQ(std::string(PQgetvalue(rows.get(), i, 1)),
                "caf\xC3\xA9 \"" + std::to_string(i) + "\"");
    }
    EXPECT_EQ(std::stod(PQgetvalue(rows.get(), i, 2)), i + 0.5);
    EXPECT_EQ(std::string(PQgetvalue(rows.get(), i, 3)), i % 2 == 0 ? "t" : "f");
    EXPECT_EQ(std::string(PQgetvalue(rows.get(), i, 4)), "2026-11-29 12:34:56.789012+00");
    size_t length = 0;
    unsigned char* decoded = PQunescapeBytea(
        reinterpret_cast<const unsigned char*>(PQgetvalue(rows.get(), i, 5)), &length);
    ASSERT_NE(decoded, nullptr);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(decoded), length), blob);
    PQfreemem(decoded);
  }
}

struct SqliteClose {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct SqliteFinalize {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StatementPtr = std::unique_ptr<sqlite3_stmt, SqliteFinalize>;

StatementPtr Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  return StatementPtr(stmt);
}

TEST(SqliteRoundTripTest, TransactionalInsertsComeBackIdenticalAfterReopen) {
  const auto path = testing::TestOutputDir("sqlite") / "roundtrip.sqlite";
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    std::unique_ptr<sqlite3, SqliteClose> db(raw);
    ASSERT_EQ(sqlite3_exec(db.get(),
                           "PRAGMA journal_mode=WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, "
                           "name TEXT, score REAL, blob BLOB); BEGIN",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    auto insert = Prepare(db.get(), "INSERT INTO t VALUES (?, ?, ?, ?)");
    for (int i = 0; i < 1000; ++i) {
      const std::string name = "n\xC3\xA9-" + std::to_string(i);
      const std::string blob(static_cast<size_t>(i % 5), static_cast<char>(i % 256));
      sqlite3_bind_int64(insert.get(), 1, i);
      if (i % 9 == 0) {
        sqlite3_bind_null(insert.get(), 2);
      } else {
        sqlite3_bind_text(insert.get(), 2, name.c_str(), -1, SQLITE_TRANSIENT);
      }
      sqlite3_bind_double(insert.get(), 3, i * 1.5);
      sqlite3_bind_blob(insert.get(), 4, blob.data(), static_cast<int>(blob.size()),
                        SQLITE_TRANSIENT);
      ASSERT_EQ(sqlite3_step(insert.get()), SQLITE_DONE) << sqlite3_errmsg(db.get());
      sqlite3_reset(insert.get());
    }
    ASSERT_EQ(sqlite3_exec(db.get(), "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  }

  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::unique_ptr<sqlite3, SqliteClose> db(raw);
  auto select = Prepare(db.get(), "SELECT id, name, score, blob FROM t ORDER BY id");
  int i = 0;
  while (sqlite3_step(select.get()) == SQLITE_ROW) {
    EXPECT_EQ(sqlite3_column_int64(select.get(), 0), i);
    if (i % 9 == 0) {
      EXPECT_EQ(sqlite3_column_type(select.get(), 1), SQLITE_NULL);
    } else {
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(select.get(), 1))),
                "n\xC3\xA9-" + std::to_string(i));
    }
    EXPECT_EQ(sqlite3_column_double(select.get(), 2), i * 1.5);
    const int length = sqlite3_column_bytes(select.get(), 3);
    EXPECT_EQ(length, i % 5);
    if (length > 0) {
      EXPECT_EQ(static_cast<const unsigned char*>(sqlite3_column_blob(select.get(), 3))[0],
                static_cast<unsigned char>(i % 256));
    }
    ++i;
  }
  EXPECT_EQ(i, 1000);
}

}  // namespace
}  // namespace weir
