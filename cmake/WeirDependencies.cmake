# Every third-party dependency, found once here and exposed as an imported target.
# Debian packages come first; Arrow/Parquet and DuckDB come from scripts/setup's .deps.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(PyArrowCpp REQUIRED)
find_package(DuckDB REQUIRED)

pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET GLOBAL rdkafka)
add_library(weir::rdkafka ALIAS PkgConfig::RDKAFKA)
find_package(simdjson REQUIRED)
find_package(PostgreSQL REQUIRED)
find_package(SQLite3 REQUIRED)
pkg_check_modules(AVRO REQUIRED IMPORTED_TARGET GLOBAL avro-c)
add_library(weir::avro ALIAS PkgConfig::AVRO)
find_library(PG_QUERY_LIBRARY pg_query REQUIRED)
find_path(PG_QUERY_INCLUDE_DIR pg_query.h REQUIRED)
add_library(weir::pg_query STATIC IMPORTED GLOBAL)
set_target_properties(weir::pg_query PROPERTIES IMPORTED_LOCATION "${PG_QUERY_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${PG_QUERY_INCLUDE_DIR}")
find_package(OpenSSL REQUIRED)
find_package(CURL REQUIRED)
find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
add_library(weir::httplib INTERFACE IMPORTED GLOBAL)
set_target_properties(weir::httplib PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${HTTPLIB_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "OpenSSL::SSL;OpenSSL::Crypto;Threads::Threads"
  INTERFACE_COMPILE_DEFINITIONS CPPHTTPLIB_OPENSSL_SUPPORT)
find_package(CLI11 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
