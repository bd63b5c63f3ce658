#include "lake/duckdb_engine.h"

#include <duckdb.h>

#include <cstdlib>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "lake/duckdb_handles.h"

namespace weir::lake {

struct DuckDbEngine::Handles {
  DuckDbDatabase db;
  DuckDbConnection conn;  // declared after db: disconnected before db closes
};

namespace {

// DuckDB errors are retriable when another writer or the network is at fault; its error type
// says which (a transaction conflict, an I/O or HTTP error), so no message matching is needed.
Status DuckError(duckdb_result* result, const std::string& sql) {
  const duckdb_error_type type = duckdb_result_error_type(result);
  const bool retriable = type == DUCKDB_ERROR_TRANSACTION || type == DUCKDB_ERROR_IO ||
                         type == DUCKDB_ERROR_HTTP || type == DUCKDB_ERROR_CONNECTION ||
                         type == DUCKDB_ERROR_CONSTRAINT;
  const char* message = duckdb_result_error(result);
  return ClassifiedError(retriable ? ErrorClass::kRetriable : ErrorClass::kFatal, "duckdb",
                         std::to_string(static_cast<int>(type)),
                         fmt::format("DuckDB: {} (in: {:.160})", message ? message : "?", sql));
}

}  // namespace

bool IsStatementRefusal(const Status& status) {
  const ErrorDetail* detail = GetErrorDetail(status);
  if (detail == nullptr || detail->source() != "duckdb") return false;
  int type = -1;
  try {
    type = std::stoi(detail->code());
  } catch (const std::exception&) {
    return false;  // "open", "connect": not a statement's error
  }
  switch (static_cast<duckdb_error_type>(type)) {
    case DUCKDB_ERROR_OUT_OF_RANGE:
    case DUCKDB_ERROR_CONVERSION:
    case DUCKDB_ERROR_UNKNOWN_TYPE:
    case DUCKDB_ERROR_MISMATCH_TYPE:
    case DUCKDB_ERROR_INVALID_TYPE:
    case DUCKDB_ERROR_NOT_IMPLEMENTED:
    case DUCKDB_ERROR_CATALOG:
    case DUCKDB_ERROR_PARSER:
    case DUCKDB_ERROR_SYNTAX:
    case DUCKDB_ERROR_BINDER:
    case DUCKDB_ERROR_INVALID_INPUT:
    case DUCKDB_ERROR_DEPENDENCY:
      return true;
    default:
      return false;
  }
}

std::string DefaultExtensionDirectory() { return WEIR_BUILD_DUCKDB_EXTENSION_DIR; }

std::string ExtensionDirectory(const std::string& configured) {
  return configured.empty() ? DefaultExtensionDirectory() : configured;
}

DuckDbEngine::DuckDbEngine(std::unique_ptr<Handles> handles) : handles_(std::move(handles)) {}
DuckDbEngine::~DuckDbEngine() = default;

Result<std::unique_ptr<DuckDbEngine>> DuckDbEngine::Open(const DuckDbOptions& options) {
  duckdb_config raw_config = nullptr;
  if (duckdb_create_config(&raw_config) != DuckDBSuccess) {
    return Status::OutOfMemory("DuckDB: cannot create a configuration");
  }
  const DuckDbConfig config(raw_config);
  duckdb_set_config(config.get(), "autoinstall_known_extensions", "false");
  duckdb_set_config(config.get(), "autoload_known_extensions", "false");
  duckdb_set_config(config.get(), "extension_directory", options.extension_directory.c_str());
  auto handles = std::make_unique<Handles>();
  char* error = nullptr;
  duckdb_database db = nullptr;
  const auto opened = duckdb_open_ext(nullptr, &db, config.get(), &error);
  handles->db.reset(db);
  if (opened != DuckDBSuccess) {
    std::string message = error ? error : "unknown error";
    duckdb_free(error);
    return ClassifiedError(ErrorClass::kFatal, "duckdb", "open", "DuckDB: " + message);
  }
  duckdb_connection conn = nullptr;
  const auto connected = duckdb_connect(handles->db.get(), &conn);
  handles->conn.reset(conn);
  if (connected != DuckDBSuccess) {
    return ClassifiedError(ErrorClass::kFatal, "duckdb", "connect", "DuckDB: cannot connect");
  }
  std::unique_ptr<DuckDbEngine> engine(new DuckDbEngine(std::move(handles)));
  WEIR_RETURN_NOT_OK(engine->Run("SET TimeZone = 'UTC'"));
  for (const auto& name : options.extensions) {
    auto loaded = engine->Run("LOAD " + name);
    if (!loaded.ok()) {
      return WithContext(loaded, fmt::format("loading DuckDB extension {} from {}", name,
                                             options.extension_directory));
    }
  }
  return engine;
}

Status DuckDbEngine::Run(const std::string& sql) {
  DuckDbResult result;
  if (duckdb_query(handles_->conn.get(), sql.c_str(), result.out()) != DuckDBSuccess) {
    return DuckError(result.get(), sql);
  }
  return Status::OK();
}

Result<std::vector<std::vector<std::optional<std::string>>>> DuckDbEngine::Query(
    const std::string& sql) {
  DuckDbResult result;
  if (duckdb_query(handles_->conn.get(), sql.c_str(), result.out()) != DuckDBSuccess) {
    return DuckError(result.get(), sql);
  }
  const idx_t columns = duckdb_column_count(result.get());
  const idx_t rows = duckdb_row_count(result.get());
  std::vector<std::vector<std::optional<std::string>>> out(rows);
  for (idx_t r = 0; r < rows; ++r) {
    out[r].resize(columns);
    for (idx_t c = 0; c < columns; ++c) {
      if (duckdb_value_is_null(result.get(), c, r)) continue;
      const DuckDbString text(duckdb_value_varchar(result.get(), c, r));
      if (!text.is_null()) out[r][c] = std::string(text.view());
    }
  }
  return out;
}

}  // namespace weir::lake
