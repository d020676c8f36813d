#pragma once
/// @file
/// kacc::lapack::getrs(exec, A, ipiv, b): solves A x = b with the factors of getrf.

#include <kacc/blas/trsv.hpp>
#include <kacc/lapack/getrf.hpp>

namespace kacc {
namespace lapack {

/// Solves A x = b in place (b <- x) from getrf's factors P A = L U in A and its 1-based
/// pivots ipiv: b's rows are interchanged as ipiv says, then kacc::blas::trsv solves with
/// L (unit diagonal) and with U, computing in Arith and accumulating in Acc (defaults:
/// the common arithmetic type of A and b, and Arith). A zero on U's diagonal (getrf's
/// info > 0) gives IEEE results (inf or NaN in b), as in trsv. Throws
/// std::invalid_argument for a non-square A or extents of ipiv or b other than A's.
template <class Arith = void, class Acc = void, class Exec, class AV, class IV, class B,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void getrs(const Exec& exec, const AV& A, const IV& ipiv, const B& b) {
  static_assert(AV::rank == 2, "kacc::lapack::getrs: A must be rank 2");
  static_assert(IV::rank == 1 && B::rank == 1, "kacc::lapack::getrs: ipiv and b must be rank 1");
  KACC_REQUIRE_ACCESSIBLE(Exec, IV, "kacc::lapack::getrs", "ipiv");
  KACC_REQUIRE_ACCESSIBLE(Exec, B, "kacc::lapack::getrs", "b");
  const index_type n = A.extent(0);
  if (static_cast<index_type>(A.extent(1)) != n)
    detail::fail("getrs", "A must be square but has extents " + detail::extents_of(A));
  if (static_cast<index_type>(ipiv.extent(0)) != n || static_cast<index_type>(b.extent(0)) != n)
    detail::fail("getrs", "A has extents " + detail::extents_of(A) + " but ipiv has extents " +
                              detail::extents_of(ipiv) + " and b has extents " +
                              detail::extents_of(b));
  if (n == 0) return;
  using BT = typename B::non_const_value_type;
  // The interchanges are sequential: one thread applies them all.
  Kokkos::parallel_for(
      "kacc::lapack::getrs_pivots", kacc::Impl::range(exec, 0, 1), KOKKOS_LAMBDA(const index_type) {
        for (index_type i = 0; i < n; ++i) {
          const index_type p = static_cast<index_type>(ipiv(i)) - 1;
          if (p != i) {
            const BT t = b(i);
            b(i) = BT(b(p));
            b(p) = t;
          }
        }
      });
  blas::trsv<Arith, Acc>(exec, "L", "N", "U", A, b);
  blas::trsv<Arith, Acc>(exec, "U", "N", "N", A, b);
}

/// getrs in b's default execution space instance, fenced.
template <class Arith = void, class Acc = void, class AV, class IV, class B,
          class Enable = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void getrs(const AV& A, const IV& ipiv, const B& b) {
  using Exec = typename B::execution_space;
  getrs<Arith, Acc>(Exec(), A, ipiv, b);
  Exec().fence();
}

}  // namespace lapack
}  // namespace kacc
