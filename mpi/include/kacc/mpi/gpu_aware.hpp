#pragma once
/// @file
/// kacc::mpi::gpu_aware(): whether kacc hands device buffers to MPI directly (GPU-aware
/// MPI) or stages them through host buffers.

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_CUDA_AWARE_SUPPORT and MPIX_Query_cuda_support
#endif

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kacc {
namespace mpi {
namespace Impl {

/// What the MPI library says of device buffers: Open MPI built with CUDA support
/// (MPIX_CUDA_AWARE_SUPPORT) answers at run time for CUDA builds of kacc; every other
/// library and back end: no (kacc cannot ask them, so it stages).
inline bool library_takes_device_buffers() {
#if defined(KOKKOS_ENABLE_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// The answer of gpu_aware() for a value of KACC_MPI_GPU_AWARE (nullptr when unset) and
/// the library's own answer. Throws std::invalid_argument for a value other than 0 or 1.
inline bool gpu_aware_from(const char* setting, bool library) {
  if (setting == nullptr || *setting == '\0') return library;
  const std::string s(setting);
  if (s == "1") return true;
  if (s == "0") return false;
  throw std::invalid_argument("kacc::mpi: KACC_MPI_GPU_AWARE must be 0 or 1, not \"" + s + "\"");
}

}  // namespace Impl

/// Whether the halo exchange of kacc::mpi::spmv (and so the distributed solvers) passes
/// device buffers to MPI directly. The environment variable KACC_MPI_GPU_AWARE decides when
/// set (1: yes, for an MPI known to take them, such as a GPU-enabled MPICH or Cray MPICH;
/// 0: no); otherwise the MPI library's answer where kacc can ask for it (Open MPI with CUDA
/// support, for the CUDA back end), else no. Host-accessible memory is always passed
/// directly. Read once per process.
inline bool gpu_aware() {
  static const bool answer =
      Impl::gpu_aware_from(std::getenv("KACC_MPI_GPU_AWARE"), Impl::library_takes_device_buffers());
  return answer;
}

}  // namespace mpi
}  // namespace kacc
