#pragma once
/// @file
/// kacc::blas::trsv(exec, uplo, trans, diag, A, b): b <- op(A)^{-1} b for a triangular A
/// of any storage format. Blocked and parallel: a small serial solve per diagonal block,
/// then a parallel GEMV-shaped update of all rows still to be solved.

#include <kacc/blas/detail.hpp>

namespace kacc {
namespace blas {
namespace detail {

/// Rows per diagonal block: large enough that the per-block launches are cheap next to
/// the update, small enough that the serial block solve is a small part of the work.
constexpr std::int64_t trsv_block = 256;

template <class T, class Acc, bool Trans, class Exec, class AV, class W>
void trsv_oriented(const std::string& label, const Exec& exec, bool lower, bool unit, const AV& A,
                   const W& w) {
  using traits = accumulator_traits<Acc>;
  const oriented<AV, Trans> m{A};
  const std::int64_t n = A.extent(0);
  const std::int64_t nb = (n + trsv_block - 1) / trsv_block;
  for (std::int64_t s = 0; s < nb; ++s) {
    // Forward substitution for lower op(A), backward for upper.
    const std::int64_t blk = lower ? s : nb - 1 - s;
    const std::int64_t b0 = blk * trsv_block, b1 = b0 + trsv_block < n ? b0 + trsv_block : n;
    Kokkos::parallel_for(
        label + "_diag", Kokkos::RangePolicy<Exec>(exec, 0, 1), KOKKOS_LAMBDA(const int) {
          for (std::int64_t q = 0; q < b1 - b0; ++q) {
            const std::int64_t i = lower ? b0 + q : b1 - 1 - q;
            Acc acc = traits::zero();
            traits::add(acc, w(i));
            const std::int64_t k0 = lower ? b0 : i + 1, k1 = lower ? i : b1;
            for (std::int64_t k = k0; k < k1; ++k) traits::add(acc, -(convert<T>(m(i, k)) * w(k)));
            const T r = static_cast<T>(traits::result(acc));
            // A zero pivot divides by zero: IEEE inf/NaN, never a trap or a hang.
            w(i) = unit ? r : r / convert<T>(m(i, i));
          }
        });
    auto update = KOKKOS_LAMBDA(const std::int64_t i, const T& s) {
      w(i) -= s;
    };
    if (lower) {
      rows_times<T, Acc>(label, exec, m, b1, n, b0, b1, w, update);
    } else {
      rows_times<T, Acc>(label, exec, m, 0, b0, b0, b1, w, update);
    }
  }
}

}  // namespace detail

/// Solves op(A) x = b in place (b <- x) for triangular A: uplo "L"/"U" names the triangle
/// of A that is read, trans "N"/"T"/"C" gives op(A), diag "U" takes a unit diagonal
/// without reading it, "N" divides by A(i,i). A zero on a non-unit diagonal gives IEEE
/// results (inf or NaN in b), as in reference BLAS. b is solved in an Acc-typed
/// workspace, so a low-precision b is rounded once at the end, not at every update.
/// Throws std::invalid_argument for unknown modes, a non-square A or a b of wrong extent.
template <class Arith = void, class Acc = void, class Exec, class AV, class B,
          class = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void trsv(const Exec& exec, const char uplo[], const char trans[], const char diag[], const AV& A,
          const B& b) {
  using T = detail::arith_t<Arith, AV, B>;
  using Ac = detail::acc_t<Acc, T>;
  static_assert(AV::rank == 2, "kacc::blas::trsv: A must be rank 2");
  static_assert(B::rank == 1, "kacc::blas::trsv: b must be rank 1");
  const char u = detail::mode_char("trsv", "uplo", uplo, "LU");
  const char t = detail::mode_char("trsv", "trans", trans, "NTC");
  const char d = detail::mode_char("trsv", "diag", diag, "NU");
  if (A.extent(0) != A.extent(1))
    detail::fail("trsv", "A must be square but has extents " + detail::extents_of(A));
  if (b.extent(0) != A.extent(0))
    detail::fail("trsv", "A has extents " + detail::extents_of(A) + " but b has extents " +
                             detail::extents_of(b));
  const std::int64_t n = A.extent(0);
  if (n == 0) return;
  const std::string label = std::string("kacc::blas::trsv[") + u + t + d +
                            ",A=" + detail::format_of<AV>() + "/" + detail::layout_of<AV>() +
                            ",b=" + detail::format_of<B>() + detail::arith_suffix<T, Ac>();
  using WT = accumulated_t<Ac>;
  using BV = typename B::non_const_value_type;
  Kokkos::View<WT*, typename Exec::memory_space> w(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::blas::trsv_workspace"), n);
  Kokkos::parallel_for(
      label + "_load", Kokkos::RangePolicy<Exec>(exec, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { w(i) = convert<WT>(convert<T>(b(i))); });
  const bool tr = t != 'N';
  const bool lower = (u == 'L') != tr;  // the triangle op(A) has
  if (tr) {
    detail::trsv_oriented<T, Ac, true>(label, exec, lower, d == 'U', A, w);
  } else {
    detail::trsv_oriented<T, Ac, false>(label, exec, lower, d == 'U', A, w);
  }
  Kokkos::parallel_for(
      label + "_store", Kokkos::RangePolicy<Exec>(exec, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { b(i) = convert<BV>(w(i)); });
}

/// trsv in b's default execution space.
template <class Arith = void, class Acc = void, class AV, class B,
          class = std::enable_if_t<is_view_v<AV> && is_view_v<B>>>
void trsv(const char uplo[], const char trans[], const char diag[], const AV& A, const B& b) {
  trsv<Arith, Acc>(typename B::execution_space(), uplo, trans, diag, A, b);
}

}  // namespace blas
}  // namespace kacc
