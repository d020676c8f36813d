#pragma once
// The execution spaces this build enables, for typed tests that run on each of them.
#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

namespace kacc_testing {

using ExecSpaces = ::testing::Types<
#if defined(KOKKOS_ENABLE_SERIAL)
    Kokkos::Serial,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    Kokkos::OpenMP,
#endif
#if defined(KOKKOS_ENABLE_THREADS)
    Kokkos::Threads,
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::Cuda,
#endif
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
    Kokkos::HIP,
#else
    Kokkos::Experimental::HIP,
#endif
#endif
    Kokkos::DefaultHostExecutionSpace>;

}  // namespace kacc_testing
