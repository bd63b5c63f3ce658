// A fresh database on the harness PostgreSQL, for a test that needs an empty catalog.
#pragma once

#include <libpq-fe.h>

#include <string>

#include <gtest/gtest.h>

namespace weir::testing {

// Drops and creates database `name` through `dsn` (a libpq conninfo without dbname); returns
// the conninfo of the new database.
inline std::string FreshPostgresDatabase(const std::string& dsn, const std::string& name) {
  PGconn* conn = PQconnectdb(dsn.c_str());
  EXPECT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PQclear(PQexec(conn, ("DROP DATABASE IF EXISTS " + name).c_str()));
  PGresult* created = PQexec(conn, ("CREATE DATABASE " + name).c_str());
  EXPECT_EQ(PQresultStatus(created), PGRES_COMMAND_OK) << PQerrorMessage(conn);
  PQclear(created);
  PQfinish(conn);
  return dsn + " dbname=" + name;
}

}  // namespace weir::testing
