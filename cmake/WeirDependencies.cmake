# Every third-party dependency, found once here and exposed as an imported target.
# Debian packages first; Arrow/Parquet, DuckDB, librdkafka and simdjson come from scripts/setup's
# .deps.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(PyArrowCpp REQUIRED)
find_package(DuckDB REQUIRED)

# librdkafka as scripts/setup builds it from source (LIBRDKAFKA_VERSION), never the system's.
# Its package config finds its dependencies with the FindLZ4.cmake it installs beside itself.
list(APPEND CMAKE_MODULE_PATH "${WEIR_DEPS_DIR}/librdkafka/lib/cmake/RdKafka")
find_package(RdKafka CONFIG REQUIRED PATHS "${WEIR_DEPS_DIR}/librdkafka" NO_DEFAULT_PATH)
if(NOT RdKafka_VERSION VERSION_EQUAL WEIR_PIN_LIBRDKAFKA_VERSION)
  message(FATAL_ERROR "librdkafka ${RdKafka_VERSION} in ${WEIR_DEPS_DIR}/librdkafka, "
                      "versions.env pins ${WEIR_PIN_LIBRDKAFKA_VERSION}: run scripts/setup")
endif()
set_target_properties(RdKafka::rdkafka PROPERTIES IMPORTED_GLOBAL TRUE)
add_library(weir::rdkafka ALIAS RdKafka::rdkafka)

# simdjson, compiled from the amalgamation scripts/setup unpacks, under the namespace
# weir_simdjson: pyarrow's libparquet exports a simdjson of its own, and two builds under one
# name in one process resolve each other's symbols (a crash seen in files_test). simdjson's
# On-Demand API picks its SIMD kernel at compile time, so the library and its users share one
# -march (WEIR_SIMD_MARCH; empty for the compiler default).
set(WEIR_SIMD_MARCH "haswell" CACHE STRING "-march for simdjson and its users")
set(_simdjson_dir "${WEIR_DEPS_DIR}/simdjson")
if(NOT EXISTS "${_simdjson_dir}/simdjson.cpp")
  message(FATAL_ERROR "${_simdjson_dir}/simdjson.cpp is missing: run scripts/setup")
endif()
add_library(weir_simdjson STATIC "${_simdjson_dir}/simdjson.cpp")
target_include_directories(weir_simdjson SYSTEM PUBLIC "${_simdjson_dir}")
target_compile_definitions(weir_simdjson PUBLIC simdjson=weir_simdjson SIMDJSON_EXCEPTIONS=0)
if(WEIR_SIMD_MARCH AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  target_compile_options(weir_simdjson PUBLIC -march=${WEIR_SIMD_MARCH})
endif()
add_library(weir::simdjson ALIAS weir_simdjson)
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
# Debian's cpp-httplib is compiled: the header declares, libcpp-httplib implements.
find_path(HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
find_library(HTTPLIB_LIBRARY cpp-httplib REQUIRED)
add_library(weir::httplib INTERFACE IMPORTED GLOBAL)
set_target_properties(weir::httplib PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${HTTPLIB_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${HTTPLIB_LIBRARY};OpenSSL::SSL;OpenSSL::Crypto;Threads::Threads"
  INTERFACE_COMPILE_DEFINITIONS CPPHTTPLIB_OPENSSL_SUPPORT)
find_package(CLI11 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
if(WEIR_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(benchmark REQUIRED)
endif()
find_package(nlohmann_json 3.11 REQUIRED)
find_package(ZLIB REQUIRED)
# zstd for `weir ingest --from` (Debian libzstd-dev, pinned in versions.env for librdkafka).
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET GLOBAL libzstd)
add_library(weir::zstd ALIAS PkgConfig::ZSTD)
# CRoaring for Iceberg v3 deletion vectors (Debian libroaring-dev 0.2.66 ships no .pc file).
find_library(ROARING_LIBRARY roaring REQUIRED)
find_path(ROARING_INCLUDE_DIR roaring/roaring.h REQUIRED)
add_library(weir::roaring UNKNOWN IMPORTED GLOBAL)
set_target_properties(weir::roaring PROPERTIES IMPORTED_LOCATION "${ROARING_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${ROARING_INCLUDE_DIR}")
