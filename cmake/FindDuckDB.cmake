# Finds libduckdb.so and duckdb.h as laid out by scripts/setup under ${WEIR_DEPS_DIR}/duckdb,
# and the extension directory (DuckDB's own layout v<version>/linux_amd64/<name>.duckdb_extension).
# Defines: weir::duckdb, DuckDB_EXTENSION_DIR.
find_path(DuckDB_INCLUDE_DIR duckdb.h PATHS "${WEIR_DEPS_DIR}/duckdb/include" NO_DEFAULT_PATH)
find_library(DuckDB_LIBRARY duckdb PATHS "${WEIR_DEPS_DIR}/duckdb/lib" NO_DEFAULT_PATH)
set(DuckDB_EXTENSION_DIR "${WEIR_DEPS_DIR}/duckdb/extensions")
set(DuckDB_VERSION "${WEIR_PIN_DUCKDB_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(DuckDB
  REQUIRED_VARS DuckDB_LIBRARY DuckDB_INCLUDE_DIR VERSION_VAR DuckDB_VERSION
  REASON_FAILURE_MESSAGE "run scripts/setup")

if(DuckDB_FOUND AND NOT TARGET weir::duckdb)
  add_library(weir::duckdb SHARED IMPORTED GLOBAL)
  set_target_properties(weir::duckdb PROPERTIES
    IMPORTED_LOCATION "${DuckDB_LIBRARY}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${DuckDB_INCLUDE_DIR}"
    INTERFACE_INCLUDE_DIRECTORIES "${DuckDB_INCLUDE_DIR}")
endif()
