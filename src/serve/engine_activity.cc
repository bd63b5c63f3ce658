// pg_stat_activity's rows and the signal functions as DuckDB functions over the server's
// ActivityRegistry: weir_stat_activity() (the catalog's pg_stat_activity view reads it),
// pg_cancel_backend(pid) and pg_terminate_backend(pid [, timeout]). Registered in both
// databases; the caller is known by its DuckDB connection, so a read user's call is refused
// whatever the statement's text (kCancelRefused, 42501).
#include <duckdb.h>

#include <chrono>
#include <string>

#include <fmt/format.h>

#include "serve/activity.h"
#include "serve/engine_internal.h"

namespace weir::serve {
namespace {

struct LogicalType {
  explicit LogicalType(duckdb_type id) : type(duckdb_create_logical_type(id)) {}
  ~LogicalType() { duckdb_destroy_logical_type(&type); }
  LogicalType(const LogicalType&) = delete;
  LogicalType& operator=(const LogicalType&) = delete;
  duckdb_logical_type type;
};

uint64_t ConnectionOf(duckdb_client_context context) {
  const uint64_t id = duckdb_client_context_get_connection_id(context);
  duckdb_destroy_client_context(&context);
  return id;
}

// --- weir_stat_activity() ----------------------------------------------------------------------

struct ActivityScan {
  std::vector<ActivityRegistry::Row> rows;
  size_t next = 0;
};

constexpr std::pair<const char*, duckdb_type> kActivityColumns[] = {
    {"pid", DUCKDB_TYPE_INTEGER},
    {"usename", DUCKDB_TYPE_VARCHAR},
    {"application_name", DUCKDB_TYPE_VARCHAR},
    {"client_addr", DUCKDB_TYPE_VARCHAR},
    {"client_port", DUCKDB_TYPE_INTEGER},
    {"backend_start", DUCKDB_TYPE_TIMESTAMP_TZ},
    {"xact_start", DUCKDB_TYPE_TIMESTAMP_TZ},
    {"query_start", DUCKDB_TYPE_TIMESTAMP_TZ},
    {"state_change", DUCKDB_TYPE_TIMESTAMP_TZ},
    {"state", DUCKDB_TYPE_VARCHAR},
    {"query", DUCKDB_TYPE_VARCHAR},
    {"visible", DUCKDB_TYPE_BOOLEAN},
};

void ActivityBind(duckdb_bind_info info) {
  for (const auto& [name, id] : kActivityColumns) {
    LogicalType type(id);
    duckdb_bind_add_result_column(info, name, type.type);
  }
  duckdb_client_context context = nullptr;
  duckdb_table_function_get_client_context(info, &context);
  duckdb_bind_set_bind_data(info, new uint64_t(ConnectionOf(context)),
                            [](void* data) { delete static_cast<uint64_t*>(data); });
}

void ActivityInit(duckdb_init_info info) {
  const auto* registry = static_cast<const ActivityRegistry*>(duckdb_init_get_extra_info(info));
  const auto* caller = static_cast<const uint64_t*>(duckdb_init_get_bind_data(info));
  auto* scan = new ActivityScan{registry->Snapshot(*caller), 0};
  duckdb_init_set_init_data(info, scan,
                            [](void* data) { delete static_cast<ActivityScan*>(data); });
}

void PutString(duckdb_vector vector, idx_t row, const std::string& text) {
  duckdb_vector_assign_string_element_len(vector, row, text.data(), text.size());
}

void PutTimestamp(duckdb_vector vector, idx_t row, int64_t micros) {
  if (micros == 0) {
    duckdb_vector_ensure_validity_writable(vector);
    duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vector), row);
    return;
  }
  static_cast<int64_t*>(duckdb_vector_get_data(vector))[row] = micros;
}

void ActivityScanRows(duckdb_function_info info, duckdb_data_chunk output) {
  auto* scan = static_cast<ActivityScan*>(duckdb_function_get_init_data(info));
  const idx_t capacity = duckdb_vector_size();
  idx_t count = 0;
  for (; count < capacity && scan->next < scan->rows.size(); ++count, ++scan->next) {
    const auto& [a, visible] = scan->rows[scan->next];
    const auto column = [&](idx_t c) { return duckdb_data_chunk_get_vector(output, c); };
    static_cast<int32_t*>(duckdb_vector_get_data(column(0)))[count] = a.pid;
    PutString(column(1), count, a.user);
    PutString(column(2), count, a.application);
    PutString(column(3), count, a.address);
    static_cast<int32_t*>(duckdb_vector_get_data(column(4)))[count] = a.port;
    PutTimestamp(column(5), count, a.backend_start);
    PutTimestamp(column(6), count, a.xact_start);
    PutTimestamp(column(7), count, a.query_start);
    PutTimestamp(column(8), count, a.state_change);
    PutString(column(9), count, a.state);
    PutString(column(10), count, a.query);
    static_cast<bool*>(duckdb_vector_get_data(column(11)))[count] = visible;
  }
  duckdb_data_chunk_set_size(output, count);
}

// --- pg_cancel_backend / pg_terminate_backend ----------------------------------------------------

template <bool kTerminate>
void SignalBind(duckdb_bind_info info) {
  const auto* registry =
      static_cast<const ActivityRegistry*>(duckdb_scalar_function_bind_get_extra_info(info));
  duckdb_client_context context = nullptr;
  duckdb_scalar_function_get_client_context(info, &context);
  const uint64_t caller = ConnectionOf(context);
  // Only a session of a write user may signal (a read user has no pg_signal_backend): refused
  // at bind, before any session is touched.
  if (!registry->MaySignal(caller)) {
    duckdb_scalar_function_bind_set_error(info, kTerminate ? kTerminateRefused : kCancelRefused);
    return;
  }
  duckdb_scalar_function_set_bind_data(info, new uint64_t(caller),
                                       [](void* data) { delete static_cast<uint64_t*>(data); });
  duckdb_scalar_function_set_bind_data_copy(
      info, [](void* data) -> void* { return new uint64_t(*static_cast<uint64_t*>(data)); });
}

template <bool kTerminate>
void SignalRows(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
  auto* registry = static_cast<ActivityRegistry*>(duckdb_scalar_function_get_extra_info(info));
  const uint64_t caller = *static_cast<const uint64_t*>(duckdb_scalar_function_get_bind_data(info));
  const idx_t rows = duckdb_data_chunk_get_size(input);
  duckdb_vector pids = duckdb_data_chunk_get_vector(input, 0);
  const auto* pid_data = static_cast<const int32_t*>(duckdb_vector_get_data(pids));
  uint64_t* pid_valid = duckdb_vector_get_validity(pids);
  const int64_t* timeouts = duckdb_data_chunk_get_column_count(input) > 1
                                ? static_cast<const int64_t*>(duckdb_vector_get_data(
                                      duckdb_data_chunk_get_vector(input, 1)))
                                : nullptr;
  auto* result = static_cast<bool*>(duckdb_vector_get_data(output));
  duckdb_vector_ensure_validity_writable(output);
  uint64_t* result_valid = duckdb_vector_get_validity(output);
  for (idx_t row = 0; row < rows; ++row) {
    if (pid_valid != nullptr && !duckdb_validity_row_is_valid(pid_valid, row)) {
      duckdb_validity_set_row_invalid(result_valid, row);
      continue;
    }
    const int32_t pid = pid_data[row];
    const auto sent = kTerminate ? registry->Terminate(caller, pid) : registry->Cancel(caller, pid);
    if (sent == ActivityRegistry::SignalResult::kNoSuchSession) {
      registry->Warn(caller, fmt::format("PID {} is not a PostgreSQL backend process", pid));
      result[row] = false;
      continue;
    }
    result[row] = sent == ActivityRegistry::SignalResult::kSent;
    const int64_t timeout = timeouts != nullptr ? timeouts[row] : 0;
    if (result[row] && kTerminate && timeout > 0 &&
        !registry->WaitGone(pid, std::chrono::milliseconds(timeout))) {
      registry->Warn(caller, fmt::format("backend with PID {} did not terminate within {} "
                                         "milliseconds",
                                         pid, timeout));
      result[row] = false;
    }
  }
}

template <bool kTerminate>
duckdb_scalar_function SignalOverload(const char* name, ActivityRegistry* registry,
                                      bool with_timeout) {
  duckdb_scalar_function scalar = duckdb_create_scalar_function();
  duckdb_scalar_function_set_name(scalar, name);
  LogicalType integer(DUCKDB_TYPE_INTEGER), bigint(DUCKDB_TYPE_BIGINT),
      boolean(DUCKDB_TYPE_BOOLEAN);
  duckdb_scalar_function_add_parameter(scalar, integer.type);
  if (with_timeout) duckdb_scalar_function_add_parameter(scalar, bigint.type);
  duckdb_scalar_function_set_return_type(scalar, boolean.type);
  duckdb_scalar_function_set_volatile(scalar);  // never folded into a cached plan
  duckdb_scalar_function_set_extra_info(scalar, registry, nullptr);
  duckdb_scalar_function_set_bind(scalar, SignalBind<kTerminate>);
  duckdb_scalar_function_set_function(scalar, SignalRows<kTerminate>);
  return scalar;
}

template <bool kTerminate>
Status RegisterSignal(duckdb_connection conn, ActivityRegistry* registry) {
  const char* name = kTerminate ? "pg_terminate_backend" : "pg_cancel_backend";
  duckdb_scalar_function_set set = duckdb_create_scalar_function_set(name);
  for (const bool with_timeout : {false, true}) {
    if (with_timeout && !kTerminate) continue;
    duckdb_scalar_function overload = SignalOverload<kTerminate>(name, registry, with_timeout);
    (void)duckdb_add_scalar_function_to_set(set, overload);
    duckdb_destroy_scalar_function(&overload);
  }
  const duckdb_state state = duckdb_register_scalar_function_set(conn, set);
  duckdb_destroy_scalar_function_set(&set);
  if (state == DuckDBSuccess) return Status::OK();
  return ClassifiedError(ErrorClass::kFatal, "duckdb", "register",
                         fmt::format("DuckDB refused to register {}", name));
}

Status Registered(duckdb_state state, const char* name) {
  if (state == DuckDBSuccess) return Status::OK();
  return ClassifiedError(ErrorClass::kFatal, "duckdb", "register",
                         fmt::format("DuckDB refused to register {}", name));
}

}  // namespace

Status RegisterActivityFunctions(duckdb_connection conn, ActivityRegistry* registry) {
  duckdb_table_function table = duckdb_create_table_function();
  duckdb_table_function_set_name(table, "weir_stat_activity");
  duckdb_table_function_set_extra_info(table, registry, nullptr);
  duckdb_table_function_set_bind(table, ActivityBind);
  duckdb_table_function_set_init(table, ActivityInit);
  duckdb_table_function_set_function(table, ActivityScanRows);
  const duckdb_state table_state = duckdb_register_table_function(conn, table);
  duckdb_destroy_table_function(&table);
  WEIR_RETURN_NOT_OK(Registered(table_state, "weir_stat_activity"));
  WEIR_RETURN_NOT_OK(RegisterSignal<false>(conn, registry));
  WEIR_RETURN_NOT_OK(RegisterSignal<true>(conn, registry));
  return Status::OK();
}

}  // namespace weir::serve
