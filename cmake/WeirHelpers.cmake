# weir_library / weir_test / weir_executable: a stage library or a test in three lines.

# Warnings are errors in every build of ours and CI's; a user's build (the quickstart) turns that
# off, so a newer compiler's new warning never stops a first run.
option(WEIR_WERROR "Treat warnings as errors" ON)
# Off: one translation unit a source file. On: the files of each library compiled in batches
# (CMake's unity build), for a cold build in half the time (the quickstart's).
option(WEIR_UNITY_BUILD "Compile each library's sources in batches" OFF)

# Warnings for our own code only; dependencies are included as SYSTEM headers.
add_library(weir_warnings INTERFACE)
target_compile_options(weir_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough $<$<BOOL:${WEIR_WERROR}>:-Werror>
  # GCC 12 reports maybe-uninitialized inside std::variant's destructor at -O2 (a known false
  # positive); it stays a warning rather than failing optimised builds. (GCC's name: clang, used
  # by the fuzz preset, has no such warning.)
  $<$<CXX_COMPILER_ID:GNU>:-Wno-error=maybe-uninitialized>)

# weir_library(NAME SRCS <files> DEPS <targets>): a static library `weir_<NAME>` whose public
# include root is src/ (so headers are included as "base/status.h").
function(weir_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_library(weir_${name} STATIC ${ARG_SRCS})
  set_target_properties(weir_${name} PROPERTIES UNITY_BUILD ${WEIR_UNITY_BUILD}
                                                UNITY_BUILD_BATCH_SIZE 16)
  target_include_directories(weir_${name} PUBLIC "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(weir_${name} PUBLIC ${ARG_DEPS} PRIVATE weir_warnings)
endfunction()

# weir_tests_subdirectory(DIR): a stage's tests, added only with WEIR_BUILD_TESTS.
macro(weir_tests_subdirectory dir)
  if(WEIR_BUILD_TESTS)
    add_subdirectory(${dir})
  endif()
endmacro()

# weir_test(NAME SRCS <files> DEPS <targets> LABELS unit|it [ENV k=v...]): a GoogleTest binary
# registered with ctest. `unit` tests are hermetic; `it` tests need the harness components,
# whose settings arrive in WEIR_TEST_* environment variables (tests/harness/run).
function(weir_test name)
  if(NOT WEIR_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;LABELS;ENV" ${ARGN})
  if(NOT ARG_LABELS MATCHES "^(unit|it)$")
    message(FATAL_ERROR "weir_test(${name}): LABELS must be unit or it")
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main weir_warnings)
  add_test(NAME ${name} COMMAND ${name} --gtest_color=no)
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABELS} TIMEOUT 600
                                          ENVIRONMENT "${ARG_ENV}")
endfunction()

# weir_executable(NAME SRCS <files> DEPS <targets>)
function(weir_executable name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} weir_warnings)
endfunction()
