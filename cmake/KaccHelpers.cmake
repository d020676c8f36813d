# Helpers shared by kacc's CMake files.

set(KACC_REQUIRE_BACKEND "" CACHE STRING
    "Fail configuration unless Kokkos has this backend (Serial, OpenMP, Threads, CUDA, HIP, SYCL)")

# Refuse a Kokkos that is too old or lacks the backend asked for, with a message that says what to do.
function(kacc_check_kokkos)
  if(Kokkos_VERSION VERSION_LESS 3.4)
    message(FATAL_ERROR "kacc needs Kokkos 3.4 or newer; found ${Kokkos_VERSION} at ${Kokkos_DIR}. "
                        "Point Kokkos_ROOT at a newer one, or run scripts/kacc-bootstrap.")
  endif()
  if(KACC_REQUIRE_BACKEND)
    string(TOUPPER "${KACC_REQUIRE_BACKEND}" backend)
    if(NOT Kokkos_ENABLE_${backend} AND NOT "${backend}" IN_LIST Kokkos_DEVICES)
      message(FATAL_ERROR "kacc: KACC_REQUIRE_BACKEND=${KACC_REQUIRE_BACKEND} but the Kokkos at "
                          "${Kokkos_DIR} was built with: ${Kokkos_DEVICES}. Rebuild Kokkos with "
                          "-DKokkos_ENABLE_${backend}=ON or point Kokkos_ROOT at one that has it.")
    endif()
  endif()
  message(STATUS "kacc: Kokkos ${Kokkos_VERSION} (${Kokkos_DEVICES}) from ${Kokkos_DIR}")
endfunction()

# MPFR (+ GMP) as an imported target, for exact references in tests and perf_tests.
function(kacc_find_mpfr)
  if(TARGET kacc::mpfr)
    set(KACC_MPFR_FOUND TRUE PARENT_SCOPE)
    return()
  endif()
  find_path(MPFR_INCLUDE_DIR mpfr.h)
  find_library(MPFR_LIBRARY mpfr)
  find_library(GMP_LIBRARY gmp)
  if(MPFR_INCLUDE_DIR AND MPFR_LIBRARY AND GMP_LIBRARY)
    add_library(kacc::mpfr INTERFACE IMPORTED GLOBAL)
    target_include_directories(kacc::mpfr INTERFACE ${MPFR_INCLUDE_DIR})
    target_link_libraries(kacc::mpfr INTERFACE ${MPFR_LIBRARY} ${GMP_LIBRARY})
    set(KACC_MPFR_FOUND TRUE PARENT_SCOPE)
  else()
    set(KACC_MPFR_FOUND FALSE PARENT_SCOPE)
  endif()
endfunction()

# Fail with a message that names the option and the missing dependency.
function(kacc_require option what found hint)
  if(NOT ${found})
    message(FATAL_ERROR "${option} is ON but ${what} was not found. ${hint}")
  endif()
endfunction()

# Gives test `name` `threads` OpenMP threads, unbound. Their idle threads sleep instead of
# spinning: ctest -j runs tests side by side, and on 2 cores one test's spinning threads
# slowed the other's (the Release tests, the report's left out, took 134 s with ctest -j2, 90 s
# with threads that sleep).
function(kacc_set_test_threads name threads)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
                       "OMP_PROC_BIND=false;OMP_NUM_THREADS=${threads};OMP_WAIT_POLICY=passive")
endfunction()

# kacc_add_mpi_test(name RANKS r THREADS t [TIMEOUT s] LABELS l ... COMMAND exe arg ...)
# Runs `exe arg ...` under mpirun with r ranks of t OpenMP threads each, oversubscribing the
# cores (CI machines have 2) and allowed as root (Open MPI refuses root otherwise). The timeout
# (default 60 s) turns a rank left waiting in a collective into a failure, not a hung run.
function(kacc_add_mpi_test name)
  cmake_parse_arguments(arg "" "RANKS;THREADS;TIMEOUT" "LABELS;COMMAND" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 60)
  endif()
  set(flags --oversubscribe)
  execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(uid STREQUAL "0")
    list(APPEND flags --allow-run-as-root)
  endif()
  add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${arg_RANKS} ${flags}
                                ${MPIEXEC_PREFLAGS} ${arg_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "${arg_LABELS}" TIMEOUT ${arg_TIMEOUT}
                       PROCESSORS ${arg_RANKS})
  kacc_set_test_threads(${name} ${arg_THREADS})
endfunction()

# Sets KACC_HAS_KOKKOS_VIEW_PROPERTY (cached) when the Kokkos found takes kacc::StoredAs as a
# View property (the macro of the same name in core/include/kacc/core/config.hpp), so that
# the tests and the example that need it are built only there.
function(kacc_check_view_property)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_LIBRARIES Kokkos::kokkos)
  set(CMAKE_REQUIRED_INCLUDES ${PROJECT_SOURCE_DIR}/core/include)
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles("#include <kacc/core/config.hpp>
#ifndef KACC_HAS_KOKKOS_VIEW_PROPERTY
#error no View hooks
#endif
int main() { return 0; }" kacc_view_property_check)
  # (check_cxx_source_compiles defines its result's name while compiling: hence two names)
  if(kacc_view_property_check)
    set(KACC_HAS_KOKKOS_VIEW_PROPERTY ON CACHE INTERNAL "")
  else()
    set(KACC_HAS_KOKKOS_VIEW_PROPERTY OFF CACHE INTERNAL "")
  endif()
  message(STATUS "kacc: Kokkos::View<T, kacc::StoredAs<F>>: ${KACC_HAS_KOKKOS_VIEW_PROPERTY} "
                 "(needs the View hooks of Kokkos develop 4.6.99 / 5)")
endfunction()
