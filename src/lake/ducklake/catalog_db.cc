#include "lake/ducklake/catalog_db.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace weir::lake::ducklake {
namespace {

constexpr int kSqliteBusyTimeoutMs = 30000;
// Catalog timestamps are written and read in UTC whatever the server's default.
constexpr const char* kSessionSetup = "SET TIME ZONE 'UTC'; SET client_min_messages = warning";

// --- SQLite ----------------------------------------------------------------------------------

struct SqliteClose {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct SqliteFinalize {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};

Status SqliteError(sqlite3* db, int rc, std::string_view sql) {
  const int extended = db != nullptr ? sqlite3_extended_errcode(db) : rc;
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const int primary = extended & 0xff;
  const bool retriable = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ||
                         extended == SQLITE_CONSTRAINT_PRIMARYKEY ||
                         extended == SQLITE_CONSTRAINT_UNIQUE;
  return ClassifiedError(retriable ? ErrorClass::kRetriable : ErrorClass::kFatal, "sqlite",
                         std::to_string(extended),
                         fmt::format("SQLite catalog: {} (in: {:.120})", message, sql));
}

// Rewrites $N placeholders to SQLite's ?N.
std::string SqliteSql(std::string_view sql) {
  std::string out(sql);
  for (auto& c : out) {
    if (c == '$') c = '?';
  }
  return out;
}

class SqliteCatalogDb final : public CatalogDb {
 public:
  explicit SqliteCatalogDb(sqlite3* db) : db_(db) {}
  SqlDialect dialect() const override { return SqlDialect::kSqlite; }

  Result<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    WEIR_ASSIGN_OR_RAISE(auto stmt, Prepare(sql, params));
    int rc;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) return SqliteError(db_.get(), rc, sql);
    return static_cast<int64_t>(sqlite3_changes(db_.get()));
  }

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    const std::vector<SqlValue>& params) override {
    WEIR_ASSIGN_OR_RAISE(auto stmt, Prepare(sql, params));
    std::vector<SqlRow> rows;
    int rc;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
      const int n = sqlite3_column_count(stmt.get());
      SqlRow row(n);
      for (int i = 0; i < n; ++i) {
        if (sqlite3_column_type(stmt.get(), i) == SQLITE_NULL) continue;
        const auto* text = sqlite3_column_text(stmt.get(), i);
        row[i] = std::string(reinterpret_cast<const char*>(text),
                             static_cast<size_t>(sqlite3_column_bytes(stmt.get(), i)));
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) return SqliteError(db_.get(), rc, sql);
    return rows;
  }

  Status Begin() override { return CatalogDb::Execute("BEGIN IMMEDIATE"); }
  Status Commit() override { return CatalogDb::Execute("COMMIT"); }
  void Rollback() override {
    if (!sqlite3_get_autocommit(db_.get())) {
      sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }

 private:
  Result<std::unique_ptr<sqlite3_stmt, SqliteFinalize>> Prepare(
      std::string_view sql, const std::vector<SqlValue>& params) {
    const std::string text = SqliteSql(sql);
    sqlite3_stmt* raw = nullptr;
    const int rc =
        sqlite3_prepare_v2(db_.get(), text.c_str(), static_cast<int>(text.size()), &raw, nullptr);
    std::unique_ptr<sqlite3_stmt, SqliteFinalize> stmt(raw);
    if (rc != SQLITE_OK) return SqliteError(db_.get(), rc, sql);
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i + 1);
      int bound = SQLITE_OK;
      if (const auto* v = std::get_if<int64_t>(&params[i])) {
        bound = sqlite3_bind_int64(stmt.get(), index, *v);
      } else if (const auto* b = std::get_if<bool>(&params[i])) {
        bound = sqlite3_bind_int64(stmt.get(), index, *b ? 1 : 0);
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        bound = sqlite3_bind_text(stmt.get(), index, s->data(), static_cast<int>(s->size()),
                                  SQLITE_TRANSIENT);
      } else {
        bound = sqlite3_bind_null(stmt.get(), index);
      }
      if (bound != SQLITE_OK) return SqliteError(db_.get(), bound, sql);
    }
    return stmt;
  }

  std::unique_ptr<sqlite3, SqliteClose> db_;
};

// --- PostgreSQL ------------------------------------------------------------------------------

struct PgFinish {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
struct PgClear {
  void operator()(PGresult* result) const { PQclear(result); }
};

// SQLSTATE classes that a retry can cure: connection exceptions (08), serialization failures
// and deadlocks (40), insufficient resources (53), operator intervention / shutdown (57P),
// and unique violations, which in a catalog mean a concurrent writer took the same id.
bool RetriableSqlState(std::string_view state) {
  return state.starts_with("08") || state.starts_with("40") || state.starts_with("53") ||
         state.starts_with("57P") || state == "23505";
}

class PostgresCatalogDb final : public CatalogDb {
 public:
  explicit PostgresCatalogDb(PGconn* conn) : conn_(conn) {}
  SqlDialect dialect() const override { return SqlDialect::kPostgres; }

  Result<int64_t> Execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    WEIR_ASSIGN_OR_RAISE(auto result, Run(sql, params));
    const char* affected = PQcmdTuples(result.get());
    return affected[0] == '\0' ? 0 : std::stoll(affected);
  }

  Result<std::vector<SqlRow>> Query(std::string_view sql,
                                    const std::vector<SqlValue>& params) override {
    WEIR_ASSIGN_OR_RAISE(auto result, Run(sql, params));
    std::vector<SqlRow> rows(static_cast<size_t>(PQntuples(result.get())));
    const int columns = PQnfields(result.get());
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
      rows[r].resize(columns);
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(result.get(), r, c)) continue;
        rows[r][c] = std::string(PQgetvalue(result.get(), r, c),
                                 static_cast<size_t>(PQgetlength(result.get(), r, c)));
      }
    }
    return rows;
  }

  Status Begin() override { return CatalogDb::Execute("BEGIN"); }
  Status Commit() override { return CatalogDb::Execute("COMMIT"); }
  void Rollback() override {
    if (PQstatus(conn_.get()) == CONNECTION_OK &&
        PQtransactionStatus(conn_.get()) != PQTRANS_IDLE) {
      PgClear()(PQexec(conn_.get(), "ROLLBACK"));
    }
  }

 private:
  Result<std::unique_ptr<PGresult, PgClear>> Run(std::string_view sql,
                                                 const std::vector<SqlValue>& params) {
    if (PQstatus(conn_.get()) != CONNECTION_OK) {
      // The link dropped (server restart, network): reconnect; the caller's transaction is
      // gone with the old session, which it learns from this statement's error if it had one.
      PQreset(conn_.get());
      if (PQstatus(conn_.get()) != CONNECTION_OK) {
        return ClassifiedError(
            ErrorClass::kRetriable, "sqlstate", "08006",
            fmt::format("PostgreSQL catalog unreachable: {}", PQerrorMessage(conn_.get())));
      }
      PgClear()(PQexec(conn_.get(), kSessionSetup));
    }
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* v = std::get_if<int64_t>(&params[i])) {
        texts[i] = std::to_string(*v);
        values[i] = texts[i].c_str();
      } else if (const auto* b = std::get_if<bool>(&params[i])) {
        values[i] = *b ? "true" : "false";
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        values[i] = s->c_str();
      }
    }
    const std::string text(sql);
    std::unique_ptr<PGresult, PgClear> result(
        params.empty() ? PQexec(conn_.get(), text.c_str())
                       : PQexecParams(conn_.get(), text.c_str(), static_cast<int>(params.size()),
                                      nullptr, values.data(), nullptr, nullptr, 0));
    const auto status = PQresultStatus(result.get());
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
    const char* state = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state != nullptr ? state : "08006";
    const char* message = result ? PQresultErrorMessage(result.get()) : "";
    std::string detail = message[0] != '\0' ? message : PQerrorMessage(conn_.get());
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    return ClassifiedError(RetriableSqlState(code) ? ErrorClass::kRetriable : ErrorClass::kFatal,
                           "sqlstate", code,
                           fmt::format("PostgreSQL catalog: {} (in: {:.120})", detail, sql));
  }

  std::unique_ptr<PGconn, PgFinish> conn_;
};

}  // namespace

namespace {

// The journal mode `sql` leaves the database in (PRAGMA journal_mode answers with it).
Result<std::string> JournalMode(sqlite3* db, const char* sql, const std::string& path) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(raw, &sqlite3_finalize);
  if (rc == SQLITE_OK) rc = sqlite3_step(raw);
  if (rc != SQLITE_ROW) return WithContext(SqliteError(db, rc, sql), "catalog " + path);
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
  std::string mode = text != nullptr ? text : "";
  for (char& c : mode) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return mode;
}

Status SwitchToWal(sqlite3* db, const std::string& path) {
  WEIR_ASSIGN_OR_RAISE(const std::string before, JournalMode(db, "PRAGMA journal_mode", path));
  if (before == "wal") return Status::OK();
  WEIR_ASSIGN_OR_RAISE(const std::string after, JournalMode(db, "PRAGMA journal_mode=WAL", path));
  if (after != "wal") {
    // SQLite leaves the mode as it was when another connection has the file open.
    return ClassifiedError(
        ErrorClass::kRetriable, "sqlite", "journal_mode",
        fmt::format("catalog {}: cannot switch from journal_mode={} to write-ahead logging while "
                    "another connection uses the file (stop the other program once, or run "
                    "PRAGMA journal_mode=WAL on the file yourself)",
                    path, before));
  }
  spdlog::info(
      "catalog {}: switched from journal_mode={} to write-ahead logging, so readers "
      "never wait for commits",
      path, before);
  return Status::OK();
}

}  // namespace

std::string SqliteWriterLockPath(const std::string& sqlite_path) {
  return sqlite_path + ".weir-lock";
}

Status EnsureSqliteWal(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, SqliteClose> db(raw);
  if (rc != SQLITE_OK) return WithContext(SqliteError(db.get(), rc, "open"), "catalog " + path);
  sqlite3_busy_timeout(db.get(), kSqliteBusyTimeoutMs);
  return SwitchToWal(db.get(), path);
}

Result<std::unique_ptr<CatalogDb>> CatalogDb::OpenSqlite(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, SqliteClose> db(raw);
  if (rc != SQLITE_OK) {
    return WithContext(SqliteError(db.get(), rc, "open"), "catalog " + path);
  }
  sqlite3_busy_timeout(db.get(), kSqliteBusyTimeoutMs);
  sqlite3_extended_result_codes(db.get(), 1);
  WEIR_RETURN_NOT_OK(SwitchToWal(db.get(), path));
  return std::unique_ptr<CatalogDb>(new SqliteCatalogDb(db.release()));
}

namespace {

// A catalog connection of a libpq connection attempt, or why it failed.
Result<std::unique_ptr<CatalogDb>> AdoptPostgres(std::unique_ptr<PGconn, PgFinish> conn) {
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn.get());
    while (!message.empty() && message.back() == '\n') message.pop_back();
    // A refused login does not fix itself while weir waits: the user, password or database
    // of the connection string are wrong (libpq gives no SQLSTATE here; its words are stable).
    for (const char* denied : {"password authentication failed", "no pg_hba.conf entry",
                               "does not exist", "SCRAM authentication", "no password supplied"}) {
      if (message.find(denied) != std::string::npos) {
        return ClassifiedError(ErrorClass::kFatal, "sqlstate", "28000",
                               "the PostgreSQL catalog refused the login: " + message);
      }
    }
    return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "08001",
                           "cannot connect to the PostgreSQL catalog: " + message);
  }
  PgClear()(PQexec(conn.get(), kSessionSetup));
  return std::unique_ptr<CatalogDb>(new PostgresCatalogDb(conn.release()));
}

}  // namespace

Result<std::unique_ptr<CatalogDb>> CatalogDb::OpenPostgres(const std::string& conninfo) {
  // Without a connect_timeout libpq waits for ever on a server that accepts the connection and
  // never answers: kPostgresConnectTimeout unless the connection string sets its own.
  if (conninfo.find("connect_timeout") != std::string::npos) {
    return AdoptPostgres(std::unique_ptr<PGconn, PgFinish>(PQconnectdb(conninfo.c_str())));
  }
  return OpenPostgresWithin(conninfo, kPostgresConnectTimeout);
}

Status FatalAtStartup(Status status) {
  if (status.ok() || ClassOf(status) == ErrorClass::kFatal) return status;
  if (status.message().find("Connection refused") == std::string::npos) return status;
  return ClassifiedError(ErrorClass::kFatal, "sqlstate", "08001",
                         std::string(status.message()) +
                             " (nothing listens there: a start does not wait for it; check the "
                             "host and port)");
}

Result<std::unique_ptr<CatalogDb>> CatalogDb::OpenSqliteReadOnly(const std::string& path) {
  // A read-only connection to a write-ahead-log database creates the -wal and -shm files when
  // they are missing, and cannot remove them when it closes. They are missing only when no
  // connection is open and the log was checkpointed away, so the file alone is the whole
  // database then: open it as immutable, which creates nothing.
  std::error_code ec;
  std::string target = path;
  int flags = SQLITE_OPEN_READONLY;
  if (!std::filesystem::exists(path + "-wal", ec)) {
    target = "file:";
    for (const char c : path) {
      if (c == '%' || c == '?' || c == '#') {
        target += fmt::format("%{:02X}", static_cast<unsigned char>(c));
      } else {
        target += c;
      }
    }
    target += "?immutable=1";
    flags |= SQLITE_OPEN_URI;
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(target.c_str(), &raw, flags, nullptr);
  std::unique_ptr<sqlite3, SqliteClose> db(raw);
  if (rc != SQLITE_OK) {
    return WithContext(SqliteError(db.get(), rc, "open read-only"), "catalog " + path);
  }
  sqlite3_busy_timeout(db.get(), kSqliteBusyTimeoutMs);
  sqlite3_extended_result_codes(db.get(), 1);
  return std::unique_ptr<CatalogDb>(new SqliteCatalogDb(db.release()));
}

Result<std::unique_ptr<CatalogDb>> CatalogDb::OpenPostgresWithin(
    const std::string& conninfo, std::chrono::milliseconds connect_timeout) {
  // libpq rounds connect_timeout to whole seconds and treats less than 2 as 2.
  const auto seconds = std::max<int64_t>(2, (connect_timeout.count() + 999) / 1000);
  const std::string timeout = std::to_string(seconds);
  // dbname first and expanded: the conninfo's own keywords, then ours over them.
  const char* keywords[] = {"dbname", "connect_timeout", nullptr};
  const char* values[] = {conninfo.c_str(), timeout.c_str(), nullptr};
  return AdoptPostgres(
      std::unique_ptr<PGconn, PgFinish>(PQconnectdbParams(keywords, values, /*expand_dbname=*/1)));
}

BatchInsert::BatchInsert(CatalogDb& db, std::string target, size_t columns)
    : db_(db), target_(std::move(target)), columns_(columns) {}

Status BatchInsert::Add(std::vector<SqlValue> row) {
  if (row.size() != columns_) {
    return Status::Invalid("BatchInsert into ", target_, ": ", row.size(), " values for ", columns_,
                           " columns");
  }
  if (params_.size() + columns_ > kMaxParameters) WEIR_RETURN_NOT_OK(Finish());
  sql_ += params_.empty() ? "INSERT INTO " + target_ + " VALUES (" : ", (";
  // SQLite resolves numbered placeholders (?NNN) in time quadratic in their count; anonymous
  // ones bind in order, which is this statement's order.
  const bool anonymous = db_.dialect() == SqlDialect::kSqlite;
  for (size_t i = 0; i < columns_; ++i) {
    sql_ += i ? ", " : "";
    sql_ += anonymous ? std::string("?") : fmt::format("${}", params_.size() + 1);
    params_.push_back(std::move(row[i]));
  }
  sql_ += ")";
  return Status::OK();
}

Status BatchInsert::Finish() {
  if (params_.empty()) return Status::OK();
  auto inserted = db_.Execute(sql_, params_);
  sql_.clear();
  params_.clear();
  return inserted.status();
}

Result<int64_t> ToInt(const std::optional<std::string>& text, std::string_view what) {
  int64_t value = 0;
  if (text) {
    const auto* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec == std::errc() && ptr == end) return value;
  }
  return ClassifiedError(
      ErrorClass::kFatal, "ducklake", "bad_catalog",
      fmt::format("catalog value of {} is not an integer: {}", what, text ? *text : "NULL"));
}

bool ToBool(const std::optional<std::string>& text) {
  return text && (*text == "1" || *text == "t" || *text == "true");
}

bool IsUniqueConflict(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  if (detail == nullptr) return false;
  if (detail->source() == "sqlstate") return detail->code() == "23505";
  if (detail->source() == "sqlite") {
    return detail->code() == std::to_string(SQLITE_CONSTRAINT_PRIMARYKEY) ||
           detail->code() == std::to_string(SQLITE_CONSTRAINT_UNIQUE);
  }
  return false;
}

namespace {

bool IsAlreadyExists(const Status& status) {
  if (IsUniqueConflict(status)) return true;
  const ErrorDetail* detail = GetErrorDetail(status);
  return detail != nullptr && detail->source() == "sqlstate" &&
         (detail->code() == "42P07" || detail->code() == "42710" || detail->code() == "42P06");
}

}  // namespace

Status CreateIfNotExists(CatalogDb& db, std::string_view ddl) {
  const Status first = db.Execute(ddl);
  if (first.ok() || !IsAlreadyExists(first)) return first;
  return db.Execute(ddl);
}

}  // namespace weir::lake::ducklake
