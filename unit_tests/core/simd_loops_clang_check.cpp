// Instantiates the library's loops marked KACC_PRAGMA_SIMD (kacc/core/pragma_simd.hpp; the
// one in perf_tests' measure_stream is left to a clang build of perf_tests), for the
// compile check core_simd_loops_clang_ubsan: clang with -fsanitize=undefined vectorises
// none of them and warns (-Wpass-failed), an error under -Werror, unless
// KACC_SIMD_LOOPS_BEGIN and KACC_SIMD_LOOPS_END enclose their definitions.

#include <kacc/core/exact_lanes.hpp>
#include <kacc/lapack/getrf.hpp>

#include <Kokkos_Core.hpp>

bool exact_lanes_loops(double* terms, double* x, const double* a, const double* b, double* p,
                       double* e) {
  const bool in_range = kacc::Impl::lanes_products<false, 16>(a, b, p, e);
  return kacc::Impl::lanes_cascade<4, 16>(terms, x) && in_range;
}

kacc::index_type getrf_loops(const Kokkos::View<double**>& A, const Kokkos::View<int*>& ipiv) {
  return kacc::lapack::getrf(A, ipiv);
}
