// Owning wrappers of DuckDB's C API handles: each frees its handle with DuckDB's own destroy
// function when it goes out of scope, so an early return or an error path neither leaks a
// handle nor frees one twice. Every place of weir that holds a DuckDB handle holds it in one of
// these (lake's DuckDbEngine, serve's engine, sessions, results and appenders, compat's
// catalog).
//
// The C API hands handles out through out-parameters and allocates one even when the call
// fails (a failed prepare carries its error, a failed query its result), so the pattern is:
//
//   duckdb_prepared_statement raw = nullptr;
//   const bool ok = duckdb_prepare(conn, sql, &raw) == DuckDBSuccess;
//   DuckDbPrepared prepared(raw);   // owned from here on, whether or not it worked
//
// and for results, whose struct lives by value: `DuckDbResult result;
// duckdb_query(conn, sql, result.out())`.
//
// Threading: as the handles themselves (a handle of a connection belongs to its thread).
#pragma once

#include <duckdb.h>

#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

namespace weir::lake {

namespace duckdb_handles_internal {
template <typename Handle, auto Destroy>
struct Deleter {
  void operator()(Handle handle) const { (void)Destroy(&handle); }
};
}  // namespace duckdb_handles_internal

// A unique_ptr to DuckDB's opaque handle type `Handle`, released by `Destroy(&handle)`.
template <typename Handle, auto Destroy>
using DuckDbHandle = std::unique_ptr<std::remove_pointer_t<Handle>,
                                     duckdb_handles_internal::Deleter<Handle, Destroy>>;

using DuckDbDatabase = DuckDbHandle<duckdb_database, duckdb_close>;
using DuckDbConnection = DuckDbHandle<duckdb_connection, duckdb_disconnect>;
using DuckDbConfig = DuckDbHandle<duckdb_config, duckdb_destroy_config>;
using DuckDbPrepared = DuckDbHandle<duckdb_prepared_statement, duckdb_destroy_prepare>;
using DuckDbLogicalType = DuckDbHandle<duckdb_logical_type, duckdb_destroy_logical_type>;
using DuckDbDataChunk = DuckDbHandle<duckdb_data_chunk, duckdb_destroy_data_chunk>;
using DuckDbValue = DuckDbHandle<duckdb_value, duckdb_destroy_value>;
using DuckDbAppender = DuckDbHandle<duckdb_appender, duckdb_appender_destroy>;
using DuckDbErrorData = DuckDbHandle<duckdb_error_data, duckdb_destroy_error_data>;

// A string DuckDB allocated for the caller (duckdb_value_varchar, duckdb_get_varchar, ...),
// released with duckdb_free; null is the empty view.
class DuckDbString {
 public:
  explicit DuckDbString(char* text) : text_(text) {}
  ~DuckDbString() { duckdb_free(text_); }
  DuckDbString(const DuckDbString&) = delete;
  DuckDbString& operator=(const DuckDbString&) = delete;
  bool is_null() const { return text_ == nullptr; }
  std::string_view view() const { return text_ == nullptr ? std::string_view() : text_; }

 private:
  char* text_;
};

// A duckdb_result (a struct DuckDB fills in by value), destroyed with the object. Movable; a
// moved-from or never-filled result is zeroed, which duckdb_destroy_result accepts.
class DuckDbResult {
 public:
  DuckDbResult() = default;
  ~DuckDbResult() { duckdb_destroy_result(&result_); }
  DuckDbResult(DuckDbResult&& other) noexcept : result_(std::exchange(other.result_, {})) {}
  DuckDbResult& operator=(DuckDbResult&& other) noexcept {
    if (this != &other) {
      duckdb_destroy_result(&result_);
      result_ = std::exchange(other.result_, {});
    }
    return *this;
  }
  DuckDbResult(const DuckDbResult&) = delete;
  DuckDbResult& operator=(const DuckDbResult&) = delete;

  // For the C API's out-parameter; whatever the result held before is destroyed first.
  duckdb_result* out() {
    duckdb_destroy_result(&result_);
    return &result_;
  }
  duckdb_result* get() { return &result_; }
  const duckdb_result* get() const { return &result_; }
  duckdb_result& operator*() { return result_; }

 private:
  duckdb_result result_{};
};

}  // namespace weir::lake
