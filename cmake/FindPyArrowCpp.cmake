# Finds Arrow C++ and Parquet C++ inside the pinned pyarrow wheel of the project virtualenv.
# The wheel ships the headers (pyarrow.get_include()) and the shared libraries
# (pyarrow.get_library_dirs()); its manylinux_2_28 build uses the C++11 ABI like Debian's g++.
# Defines: weir::arrow, weir::parquet, weir::arrow_s3, weir::arrow_compute (and PyArrowCpp_LIBRARY_DIR for rpaths).
set(_python "${WEIR_DEPS_DIR}/venv/bin/python")
if(NOT EXISTS "${_python}")
  message(FATAL_ERROR "No project virtualenv at ${WEIR_DEPS_DIR}/venv: run scripts/setup")
endif()
execute_process(
  COMMAND "${_python}" -c
    "import pyarrow as p; print(p.__version__); print(p.get_include()); print(p.get_library_dirs()[0])"
  OUTPUT_VARIABLE _out RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "pyarrow is not importable from ${_python}: run scripts/setup")
endif()
string(REPLACE "\n" ";" _out "${_out}")
list(GET _out 0 PyArrowCpp_VERSION)
list(GET _out 1 PyArrowCpp_INCLUDE_DIR)
list(GET _out 2 PyArrowCpp_LIBRARY_DIR)
if(NOT PyArrowCpp_VERSION STREQUAL WEIR_PIN_PYARROW_VERSION)
  message(FATAL_ERROR "pyarrow ${PyArrowCpp_VERSION} found, versions.env pins "
                      "${WEIR_PIN_PYARROW_VERSION}: run scripts/setup")
endif()

function(_weir_pyarrow_lib target name)
  set(_lib "${PyArrowCpp_LIBRARY_DIR}/lib${name}.so.${WEIR_PIN_ARROW_SO_VERSION}")
  if(NOT EXISTS "${_lib}")
    message(FATAL_ERROR "${_lib} is missing from the pyarrow wheel")
  endif()
  add_library(${target} SHARED IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${_lib}" IMPORTED_NO_SONAME FALSE
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${PyArrowCpp_INCLUDE_DIR}"
    INTERFACE_INCLUDE_DIRECTORIES "${PyArrowCpp_INCLUDE_DIR}")
endfunction()

_weir_pyarrow_lib(weir::arrow arrow)
_weir_pyarrow_lib(weir::parquet parquet)
_weir_pyarrow_lib(weir::arrow_s3 arrow_s3)  # Arrow's S3 filesystem is its own library
_weir_pyarrow_lib(weir::arrow_compute arrow_compute)  # kernels beyond the core (Take, ...)
set_property(TARGET weir::arrow_compute PROPERTY INTERFACE_LINK_LIBRARIES weir::arrow)
set_property(TARGET weir::parquet PROPERTY INTERFACE_LINK_LIBRARIES weir::arrow)
set_property(TARGET weir::arrow_s3 PROPERTY INTERFACE_LINK_LIBRARIES weir::arrow)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PyArrowCpp
  REQUIRED_VARS PyArrowCpp_INCLUDE_DIR PyArrowCpp_LIBRARY_DIR VERSION_VAR PyArrowCpp_VERSION)
