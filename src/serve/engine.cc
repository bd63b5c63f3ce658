#include "serve/engine.h"

#include <duckdb.h>

#include <cctype>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/text.h"
#include "serve/compat/compat.h"

namespace weir::serve {
namespace {

// The PostgreSQL type a DuckDB column is presented as (OID and size).
ResultColumn PgTypeOf(duckdb_type type) {
  switch (type) {
    case DUCKDB_TYPE_BOOLEAN:
      return {"", 16, 1};
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_UTINYINT:
      return {"", 21, 2};
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_USMALLINT:
      return {"", 23, 4};
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UINTEGER:
      return {"", 20, 8};
    case DUCKDB_TYPE_FLOAT:
      return {"", 700, 4};
    case DUCKDB_TYPE_DOUBLE:
      return {"", 701, 8};
    case DUCKDB_TYPE_DECIMAL:
    case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_UHUGEINT:
      return {"", 1700, -1};
    case DUCKDB_TYPE_DATE:
      return {"", 1082, 4};
    case DUCKDB_TYPE_TIME:
      return {"", 1083, 8};
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
      return {"", 1114, 8};
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      return {"", 1184, 8};
    case DUCKDB_TYPE_INTERVAL:
      return {"", 1186, 16};
    case DUCKDB_TYPE_UUID:
      return {"", 2950, 16};
    case DUCKDB_TYPE_BLOB:
      return {"", 17, -1};
    default:
      return {"", 25, -1};
  }
}

// The SQLSTATE for a DuckDB error type (one table; messages are never matched).
std::string SqlStateOf(duckdb_error_type type) {
  switch (type) {
    case DUCKDB_ERROR_PARSER:
      return "42601";  // syntax_error
    case DUCKDB_ERROR_CATALOG:
      return "42P01";  // undefined_table (or object)
    case DUCKDB_ERROR_BINDER:
      return "42703";  // undefined_column and other binding failures
    case DUCKDB_ERROR_CONVERSION:
      return "22P02";  // invalid_text_representation
    case DUCKDB_ERROR_OUT_OF_RANGE:
      return "22003";  // numeric_value_out_of_range
    case DUCKDB_ERROR_DIVIDE_BY_ZERO:
      return "22012";
    case DUCKDB_ERROR_CONSTRAINT:
      return "23000";
    case DUCKDB_ERROR_TRANSACTION:
      return "25000";
    case DUCKDB_ERROR_INTERRUPT:
      return "57014";  // query_canceled
    case DUCKDB_ERROR_PERMISSION:
      return "42501";  // insufficient_privilege
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return "53200";
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
      return "0A000";
    case DUCKDB_ERROR_IO:
      return "58030";
    case DUCKDB_ERROR_INVALID_INPUT:
      return "22023";  // invalid_parameter_value
    default:
      return "XX000";
  }
}

// DuckDB's C API gives no error type for a failed prepare, only the message, whose first words
// are DuckDB's own exception type name ("Catalog Error: ..."). That fixed prefix, not the text
// after it, decides the type.
duckdb_error_type PrepareErrorType(std::string_view message) {
  static const std::pair<std::string_view, duckdb_error_type> kPrefixes[] = {
      {"Parser Error:", DUCKDB_ERROR_PARSER},
      {"Catalog Error:", DUCKDB_ERROR_CATALOG},
      {"Binder Error:", DUCKDB_ERROR_BINDER},
      {"Conversion Error:", DUCKDB_ERROR_CONVERSION},
      {"Permission Error:", DUCKDB_ERROR_PERMISSION},
      {"Not implemented Error:", DUCKDB_ERROR_NOT_IMPLEMENTED},
      {"TransactionContext Error:", DUCKDB_ERROR_TRANSACTION},
  };
  for (const auto& [prefix, type] : kPrefixes) {
    if (message.starts_with(prefix)) return type;
  }
  return DUCKDB_ERROR_UNKNOWN_TYPE;
}

std::string CommandTag(duckdb_result* result, idx_t rows) {
  switch (duckdb_result_statement_type(*result)) {
    case DUCKDB_STATEMENT_TYPE_SELECT:
      return fmt::format("SELECT {}", rows);
    case DUCKDB_STATEMENT_TYPE_INSERT:
      return fmt::format("INSERT 0 {}", duckdb_rows_changed(result));
    case DUCKDB_STATEMENT_TYPE_UPDATE:
      return fmt::format("UPDATE {}", duckdb_rows_changed(result));
    case DUCKDB_STATEMENT_TYPE_DELETE:
      return fmt::format("DELETE {}", duckdb_rows_changed(result));
    case DUCKDB_STATEMENT_TYPE_CREATE:
      return "CREATE";
    case DUCKDB_STATEMENT_TYPE_DROP:
      return "DROP";
    case DUCKDB_STATEMENT_TYPE_TRANSACTION:
      return "TRANSACTION";
    case DUCKDB_STATEMENT_TYPE_SET:
      return "SET";
    default:
      return fmt::format("SELECT {}", rows);
  }
}

}  // namespace

struct Engine::Handles {
  duckdb_database db = nullptr;
  ~Handles() {
    if (db != nullptr) duckdb_close(&db);
  }
};

struct Session::Handles {
  duckdb_connection conn = nullptr;
  struct Prepared {
    duckdb_prepared_statement statement = nullptr;
    std::string sql;
    StatementInfo info;
  };
  std::map<std::string, Prepared> prepared;
  ~Handles() {
    for (auto& [name, p] : prepared) duckdb_destroy_prepare(&p.statement);
    if (conn != nullptr) duckdb_disconnect(&conn);
  }
};

namespace {

// Reads a materialised DuckDB result into PostgreSQL text values.
void Materialize(duckdb_result& result, QueryResult& out) {
  const idx_t columns = duckdb_column_count(&result);
  const idx_t rows = duckdb_row_count(&result);
  if (duckdb_result_return_type(result) == DUCKDB_RESULT_TYPE_QUERY_RESULT) {
    for (idx_t c = 0; c < columns; ++c) {
      ResultColumn column = PgTypeOf(duckdb_column_type(&result, c));
      column.name = duckdb_column_name(&result, c);
      out.columns.push_back(std::move(column));
    }
    out.rows.resize(rows);
    for (idx_t r = 0; r < rows; ++r) {
      out.rows[r].resize(columns);
      for (idx_t c = 0; c < columns; ++c) {
        if (duckdb_value_is_null(&result, c, r)) continue;
        if (out.columns[c].type_oid == 16) {
          out.rows[r][c] = duckdb_value_boolean(&result, c, r) ? "t" : "f";
          continue;
        }
        char* text = duckdb_value_varchar(&result, c, r);
        if (text != nullptr) out.rows[r][c] = text;
        duckdb_free(text);
      }
    }
  }
  out.command_tag = CommandTag(&result, rows);
}

Status ResultError(duckdb_result& result) {
  return ClassifiedError(ErrorClass::kBadData, "sqlstate",
                         SqlStateOf(duckdb_result_error_type(&result)),
                         duckdb_result_error(&result));
}

}  // namespace

Engine::Engine(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
Engine::~Engine() = default;
Session::Session(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
Session::~Session() = default;

Result<std::unique_ptr<Engine>> Engine::Open(const LakeAttachment& lake) {
  duckdb_config config = nullptr;
  duckdb_create_config(&config);
  duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  duckdb_set_config(config, "extension_directory", lake.extension_directory.c_str());
  auto handles = std::make_unique<Handles>();
  char* error = nullptr;
  const auto opened = duckdb_open_ext(nullptr, &handles->db, config, &error);
  duckdb_destroy_config(&config);
  if (opened != DuckDBSuccess) {
    std::string message = error ? error : "unknown";
    duckdb_free(error);
    return ClassifiedError(ErrorClass::kFatal, "duckdb", "open", "DuckDB: " + message);
  }
  std::unique_ptr<Engine> engine(new Engine(std::move(handles)));
  WEIR_ASSIGN_OR_RAISE(auto setup, engine->Connect());
  const bool postgres = lake.catalog.starts_with("postgres:");
  std::string attach = "ATTACH 'ducklake:" + lake.catalog + "' AS lake";
  std::vector<QueryResult> ignored;
  const std::string sql = std::string("SET TimeZone = 'UTC'; LOAD ducklake; ") +
                          (postgres ? "LOAD postgres_scanner; " : "LOAD sqlite_scanner; ") +
                          attach + "; USE lake;";
  auto ran = setup->Run(sql, &ignored);
  if (!ran.ok()) return WithContext(ran, "attaching the lake");
  WEIR_RETURN_NOT_OK(compat::InstallCatalog(setup->handles_->conn));
  // The sandbox: sessions reach the lake's own files and nothing else on the server (no COPY
  // TO/FROM files, no read_csv('/etc/...'), no ATTACH, INSTALL or LOAD), and cannot undo it.
  std::vector<QueryResult> data_path;
  WEIR_RETURN_NOT_OK(
      setup->Run("SELECT value FROM __ducklake_metadata_lake.ducklake_metadata "
                 "WHERE key = 'data_path' AND scope IS NULL",
                 &data_path));
  std::vector<std::string> allowed;
  if (!data_path.empty() && !data_path[0].rows.empty() && data_path[0].rows[0][0]) {
    allowed.push_back(*data_path[0].rows[0][0]);
  }
  if (!postgres) {
    const std::string file = lake.catalog.substr(std::string("sqlite:").size());
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) allowed.push_back(file + suffix);
  }
  std::string list;
  for (const auto& path : allowed) {
    list += (list.empty() ? "'" : ", '");
    for (char c : path) list += c == '\'' ? std::string("''") : std::string(1, c);
    list += "'";
  }
  WEIR_RETURN_NOT_OK(setup->Run("SET allowed_directories = [" + list +
                                    "]; SET enable_external_access = false; "
                                    "SET lock_configuration = true",
                                &ignored));
  return engine;
}

Result<std::unique_ptr<Session>> Engine::Connect() {
  auto handles = std::make_unique<Session::Handles>();
  if (duckdb_connect(handles_->db, &handles->conn) != DuckDBSuccess) {
    return ClassifiedError(ErrorClass::kRetriable, "sqlstate", "53300", "cannot connect");
  }
  std::unique_ptr<Session> session(new Session(std::move(handles)));
  std::vector<QueryResult> ignored;
  (void)session->Run("USE lake", &ignored);  // absent before the lake is attached
  return session;
}

void Session::Interrupt() { duckdb_interrupt(handles_->conn); }

Status Session::Run(const std::string& sql, std::vector<QueryResult>* done) {
  for (const std::string& text : compat::SplitStatements(sql)) {
    const std::string statement = compat::RewriteForDuckDb(text);
    duckdb_prepared_statement prepared = nullptr;
    if (duckdb_prepare(handles_->conn, statement.c_str(), &prepared) != DuckDBSuccess) {
      const std::string message = duckdb_prepare_error(prepared);
      duckdb_destroy_prepare(&prepared);
      return ClassifiedError(ErrorClass::kBadData, "sqlstate",
                             SqlStateOf(PrepareErrorType(message)), message);
    }
    duckdb_result result;
    const bool ok = duckdb_execute_prepared(prepared, &result) == DuckDBSuccess;
    duckdb_destroy_prepare(&prepared);
    if (!ok) {
      Status status = ResultError(result);
      duckdb_destroy_result(&result);
      if (transaction_status_ == 'T') transaction_status_ = 'E';
      return status;
    }
    QueryResult out;
    Materialize(result, out);
    TrackTransaction(
        text, duckdb_result_statement_type(result) == DUCKDB_STATEMENT_TYPE_TRANSACTION, out);
    duckdb_destroy_result(&result);
    done->push_back(std::move(out));
  }
  return Status::OK();
}

void Session::TrackTransaction(const std::string& sql, bool is_transaction_statement,
                               QueryResult& out) {
  if (!is_transaction_statement) return;
  // BEGIN opens a block; COMMIT/ROLLBACK close it (DuckDB rejects nesting for us).
  const std::string text = ToLower(sql);
  const bool begins = text.find("begin") != std::string::npos ||
                      text.find("start transaction") != std::string::npos;
  transaction_status_ = begins && transaction_status_ == 'I' ? 'T' : 'I';
  out.command_tag = transaction_status_ == 'T' ? "BEGIN" : "COMMIT";
}

Result<StatementInfo> Session::Prepare(const std::string& name, const std::string& sql) {
  duckdb_prepared_statement statement = nullptr;
  const std::string rewritten = compat::RewriteForDuckDb(sql);
  if (duckdb_prepare(handles_->conn, rewritten.c_str(), &statement) != DuckDBSuccess) {
    const std::string message = duckdb_prepare_error(statement);
    duckdb_destroy_prepare(&statement);
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", SqlStateOf(PrepareErrorType(message)),
                           message);
  }
  ClosePrepared(name);
  Handles::Prepared prepared;
  prepared.statement = statement;
  prepared.sql = sql;
  for (idx_t i = 1; i <= duckdb_nparams(statement); ++i) {
    prepared.info.parameter_types.push_back(PgTypeOf(duckdb_param_type(statement, i)).type_oid);
  }
  if (duckdb_prepared_statement_type(statement) == DUCKDB_STATEMENT_TYPE_SELECT) {
    for (idx_t c = 0; c < duckdb_prepared_statement_column_count(statement); ++c) {
      ResultColumn column = PgTypeOf(duckdb_prepared_statement_column_type(statement, c));
      column.name = duckdb_prepared_statement_column_name(statement, c);
      prepared.info.columns.push_back(std::move(column));
    }
  }
  StatementInfo info = prepared.info;
  handles_->prepared[name] = std::move(prepared);
  return info;
}

Result<StatementInfo> Session::Describe(const std::string& name) const {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "26000",
                           "prepared statement \"" + name + "\" does not exist");
  }
  return found->second.info;
}

Result<QueryResult> Session::Execute(const std::string& name,
                                     const std::vector<std::optional<std::string>>& parameters) {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "26000",
                           "prepared statement \"" + name + "\" does not exist");
  }
  duckdb_prepared_statement statement = found->second.statement;
  if (parameters.size() != duckdb_nparams(statement)) {
    return ClassifiedError(ErrorClass::kBadData, "sqlstate", "08P01",
                           "bind message supplies " + std::to_string(parameters.size()) +
                               " parameters, but the prepared statement requires " +
                               std::to_string(duckdb_nparams(statement)));
  }
  duckdb_clear_bindings(statement);
  for (size_t i = 0; i < parameters.size(); ++i) {
    const idx_t index = i + 1;
    const duckdb_state bound =
        parameters[i] ? duckdb_bind_varchar_length(statement, index, parameters[i]->data(),
                                                   parameters[i]->size())
                      : duckdb_bind_null(statement, index);
    if (bound != DuckDBSuccess) {
      return ClassifiedError(ErrorClass::kBadData, "sqlstate", "22P02",
                             "parameter $" + std::to_string(index) + " cannot be bound");
    }
  }
  duckdb_result result;
  if (duckdb_execute_prepared(statement, &result) != DuckDBSuccess) {
    Status status = ResultError(result);
    duckdb_destroy_result(&result);
    if (transaction_status_ == 'T') transaction_status_ = 'E';
    return status;
  }
  QueryResult out;
  Materialize(result, out);
  TrackTransaction(found->second.sql,
                   duckdb_result_statement_type(result) == DUCKDB_STATEMENT_TYPE_TRANSACTION, out);
  duckdb_destroy_result(&result);
  return out;
}

void Session::ClosePrepared(const std::string& name) {
  auto found = handles_->prepared.find(name);
  if (found == handles_->prepared.end()) return;
  duckdb_destroy_prepare(&found->second.statement);
  handles_->prepared.erase(found);
}

}  // namespace weir::serve
