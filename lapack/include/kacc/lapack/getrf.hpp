#pragma once
/// @file
/// kacc::lapack::getrf(exec, A, ipiv): P A = L U with partial pivoting, in place, for A of
/// any storage format. Blocked and right-looking: each panel of columns is copied into a
/// workspace in the arithmetic type and factored there column by column (so a 16-bit A
/// is rounded once per panel, not once per column), written back, and the rest of the
/// matrix is updated with a triangular solve for the panel's rows of U and one
/// kacc::blas GEMM for the trailing matrix, both computing in the arithmetic type.

#include <kacc/blas/gemm.hpp>
#include <kacc/core/pragma_simd.hpp>
#include <kacc/core/view_algorithms.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace kacc {
namespace lapack {
namespace detail {

[[noreturn]] inline void fail(const std::string& function, const std::string& message) {
  throw std::invalid_argument("kacc::lapack::" + function + ": " + message);
}

using kacc::Impl::extents_of;

/// Rows [r0, r1) and columns [c0, c1) of a kacc or Kokkos view.
template <class V>
auto block(const V& v, index_type r0, index_type r1, index_type c0, index_type c1) {
  using kacc::subview;
  using Kokkos::subview;
  return subview(v, Kokkos::pair<index_type, index_type>(r0, r1),
                 Kokkos::pair<index_type, index_type>(c0, c1));
}

/// Column c of a rank-2 kacc or Kokkos view, as a rank-1 view.
template <class V>
auto column(const V& v, index_type c) {
  using kacc::subview;
  using Kokkos::subview;
  return subview(v, Kokkos::ALL(), c);
}

}  // namespace detail

namespace Impl {

using kacc::Impl::shape;

/// Columns per panel: wide enough that the trailing GEMM dominates, narrow enough that
/// the panel (memory-bound) and the triangular solve stay a small part of the work.
template <shape Shape>
constexpr index_type getrf_block = Shape == shape::host ? 128 : 64;

/// The panel workspace's layout: rows contiguous on the host, so the update of a row is a
/// contiguous loop that compilers vectorise (the whole panel stays in cache); columns
/// contiguous in the team shape, so consecutive threads, one row each, read consecutive
/// addresses.
template <shape Shape>
using getrf_panel_layout =
    std::conditional_t<Shape == shape::host, Kokkos::LayoutRight, Kokkos::LayoutLeft>;

/// The first row in [r0, r1) of column col of the panel workspace w whose magnitude is
/// `largest` (the column's largest, found by the previous column's update), so the choice
/// does not depend on the thread count; r0 when `largest` is not a positive number (a zero
/// column, or one of NaNs: NaNs are never chosen over a number).
template <class T, class Exec, class W>
index_type first_row_of(const std::string& label, const Exec& exec, const W& w, index_type col,
                        index_type r0, index_type r1, const T& largest) {
  if (!(largest > T(0))) return r0;
  index_type first;
  Kokkos::parallel_reduce(
      label + "_pivot_row", kacc::Impl::range(exec, r0, r1),
      KOKKOS_LAMBDA(const index_type r, index_type& at) {
        const T v = w(r, col) < T(0) ? -w(r, col) : w(r, col);
        if (v == largest && r < at) at = r;
      },
      Kokkos::Min<index_type>(first));
  return first;
}

/// The largest magnitude in rows [r0, r1) of column col of w (lowest() when there is no
/// number among them).
template <class T, class Exec, class W>
T largest_in_column(const std::string& label, const Exec& exec, const W& w, index_type col,
                    index_type r0, index_type r1) {
  T best;
  Kokkos::parallel_reduce(
      label + "_pivot", kacc::Impl::range(exec, r0, r1),
      KOKKOS_LAMBDA(const index_type r, T& most) {
        const T v = w(r, col) < T(0) ? -w(r, col) : w(r, col);
        if (v > most) most = v;
      },
      Kokkos::Max<T>(best));
  return best;
}

/// The factorisation after the argument checks; returns LAPACK's info (0, or the 1-based
/// column of the first zero pivot) and the 1-based pivot rows in piv. Each panel is
/// factored in the workspace with one pass over its rows per column: the pass that
/// eliminates column c also finds the largest magnitude of column c + 1 (the next pivot's
/// search then only locates its first row). Row interchanges reach the columns outside
/// the panel after it is factored, column by column in pivot order (LAPACK's laswp), so
/// each touches one column of A at a time.
KACC_SIMD_LOOPS_BEGIN
template <class T, shape Shape, class Exec, class AV>
index_type getrf(const std::string& label, const Exec& exec, const AV& A,
                 std::vector<index_type>& piv) {
  constexpr index_type NB = getrf_block<Shape>;
  const index_type m = A.extent(0), n = A.extent(1), kmax = m < n ? m : n;
  using AT = typename AV::non_const_value_type;
  using memory_space = typename Exec::memory_space;
  Kokkos::View<T**, getrf_panel_layout<Shape>, memory_space> w(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kacc::lapack::getrf_panel"), m, NB);
  Kokkos::View<index_type*, memory_space> panel_pivots("kacc::lapack::getrf_pivots", NB);
  auto host_pivots = Kokkos::create_mirror_view(panel_pivots);
  index_type info = 0;
  piv.assign(kmax, 0);
  for (index_type j0 = 0; j0 < kmax; j0 += NB) {
    const index_type j1 = j0 + NB < kmax ? j0 + NB : kmax, nb = j1 - j0, rows = m - j0;
    // w(r, c) is A(j0 + r, j0 + c): the panel below the finished rows.
    Kokkos::parallel_for(
        label + "_load", kacc::Impl::range(exec, 0, rows * nb), KOKKOS_LAMBDA(const index_type e) {
          const index_type r = e % rows, c = e / rows;
          w(r, c) = convert<T>(A(j0 + r, j0 + c));
        });
    T largest = largest_in_column<T>(label, exec, w, 0, 0, rows);
    for (index_type c = 0; c < nb; ++c) {
      const index_type p = first_row_of<T>(label, exec, w, c, c, rows, largest);
      host_pivots(c) = p;
      piv[j0 + c] = j0 + p + 1;
      // A zero pivot (its whole column is zero) is reported, never divided by: its
      // multipliers stay zero, as in LAPACK's dgetf2.
      const bool zero = largest == T(0);
      if (zero && info == 0) info = j0 + c + 1;
      if (p != c) {
        Kokkos::parallel_for(
            label + "_swap", kacc::Impl::range(exec, 0, nb), KOKKOS_LAMBDA(const index_type q) {
              const T t = w(c, q);
              w(c, q) = w(p, q);
              w(p, q) = t;
            });
      }
      const bool next = c + 1 < nb;
      T next_largest;
      Kokkos::parallel_reduce(
          label + "_column", kacc::Impl::range(exec, c + 1, rows),
          KOKKOS_LAMBDA(const index_type r, T& most) {
            const T l = zero ? T(0) : w(r, c) / w(c, c);
            w(r, c) = l;
            KACC_PRAGMA_SIMD
            for (index_type q = c + 1; q < nb; ++q) w(r, q) -= l * w(c, q);
            if (next) {
              const T v = w(r, c + 1) < T(0) ? -w(r, c + 1) : w(r, c + 1);
              if (v > most) most = v;
            }
          },
          Kokkos::Max<T>(next_largest));
      largest = next_largest;
    }
    Kokkos::parallel_for(
        label + "_store", kacc::Impl::range(exec, 0, rows * nb), KOKKOS_LAMBDA(const index_type e) {
          const index_type r = e % rows, c = e / rows;
          A(j0 + r, j0 + c) = convert<AT>(w(r, c));
          w(r, c) = convert<T>(A(j0 + r, j0 + c));
        });
    if (nb < n) {
      Kokkos::deep_copy(exec,
                        Kokkos::subview(panel_pivots, Kokkos::pair<index_type, index_type>(0, nb)),
                        Kokkos::subview(host_pivots, Kokkos::pair<index_type, index_type>(0, nb)));
      // The panel's interchanges in the columns left and right of it, in pivot order.
      Kokkos::parallel_for(
          label + "_interchange", kacc::Impl::range(exec, 0, n - nb),
          KOKKOS_LAMBDA(const index_type e) {
            const index_type q = e < j0 ? e : e + nb;
            for (index_type c = 0; c < nb; ++c) {
              const index_type p = panel_pivots(c);
              if (p == c) continue;
              const T t = convert<T>(A(j0 + c, q));
              A(j0 + c, q) = convert<AT>(convert<T>(A(j0 + p, q)));
              A(j0 + p, q) = convert<AT>(t);
            }
          });
    }
    if (j1 >= n) continue;
    // U12 = L11^{-1} A12, one column per thread, from the stored (rounded) L11, which the
    // workspace now holds in T.
    Kokkos::parallel_for(
        label + "_u12", kacc::Impl::range(exec, j1, n), KOKKOS_LAMBDA(const index_type q) {
          T x[getrf_block<Shape>];
          for (index_type r = 0; r < nb; ++r) {
            T s = convert<T>(A(j0 + r, q));
            for (index_type k = 0; k < r; ++k) s -= w(r, k) * x[k];
            x[r] = s;
            A(j0 + r, q) = convert<AT>(s);
          }
        });
    if (j1 >= m) continue;
    // A22 -= L21 U12: disjoint blocks of A, so no aliasing check.
    blas::Impl::gemm<T, T, Shape, false, false>(
        label + "_update", exec, T(-1), detail::block(A, j1, m, j0, j1),
        detail::block(A, j0, j1, j1, n), T(1), detail::block(A, j1, m, j1, n));
  }
  return info;
}
KACC_SIMD_LOOPS_END

}  // namespace Impl

/// P A = L U with partial pivoting, in place: on return the strictly lower part of A holds
/// L (unit diagonal, not stored) and the upper part U, both in A's storage format, while
/// every update is computed in Arith (by default A's arithmetic type). ipiv (extent
/// min(m, n), any integer type) receives LAPACK's 1-based pivots: row i was interchanged
/// with row ipiv(i). Returns LAPACK's info: 0, or k > 0 when U(k-1, k-1) (1-based: U(k,k))
/// is an exact zero; the factorisation then still completes, and that pivot is never
/// divided by (its column of L is left zero). The pivot is the first entry of largest
/// magnitude, so the factors do not depend on the thread count; NaNs are never chosen
/// over numbers but propagate through the updates. Entries that overflow A's format
/// become infinities (or saturate, per A's overflow policy). Throws std::invalid_argument
/// when ipiv's extent is not min(m, n).
template <class Arith = void, class Exec, class AV, class IV,
          class Enable = std::enable_if_t<is_view_v<AV>>>
index_type getrf(const Exec& exec, const AV& A, const IV& ipiv) {
  using T = blas::detail::arith_t<Arith, AV>;
  static_assert(AV::rank == 2, "kacc::lapack::getrf: A must be rank 2");
  static_assert(IV::rank == 1, "kacc::lapack::getrf: ipiv must be rank 1");
  static_assert(std::is_integral<typename IV::non_const_value_type>::value,
                "kacc::lapack::getrf: ipiv must hold integers");
  KACC_REQUIRE_ACCESSIBLE(Exec, AV, "kacc::lapack::getrf", "A");
  const index_type m = A.extent(0), n = A.extent(1), kmax = m < n ? m : n;
  if (static_cast<index_type>(ipiv.extent(0)) != kmax)
    detail::fail("getrf", "A has extents " + detail::extents_of(A) + " so ipiv needs extent " +
                              std::to_string(kmax) + ", but ipiv has extents " +
                              detail::extents_of(ipiv));
  if (kmax == 0) return 0;
  const std::string label = std::string("kacc::lapack::getrf[A=") + kacc::Impl::format_of<AV>() +
                            "/" + kacc::Impl::layout_of<AV>() + ",arith=" + format_name<T>() + "]";
  std::vector<index_type> piv;
  const index_type info = Impl::getrf<T, kacc::Impl::default_shape_v<Exec>>(label, exec, A, piv);
  auto h = Kokkos::create_mirror_view(ipiv);
  for (index_type i = 0; i < kmax; ++i)
    h(i) = static_cast<typename IV::non_const_value_type>(piv[i]);
  Kokkos::deep_copy(exec, ipiv, h);
  exec.fence();
  return info;
}

/// getrf in A's default execution space instance (fenced on return).
template <class Arith = void, class AV, class IV, class Enable = std::enable_if_t<is_view_v<AV>>>
index_type getrf(const AV& A, const IV& ipiv) {
  return getrf<Arith>(typename AV::execution_space(), A, ipiv);
}

}  // namespace lapack
}  // namespace kacc
